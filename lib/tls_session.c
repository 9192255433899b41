/* tls_session.c - TLS sessions to resume. A full handshake costs a key exchange and the
 * server's certificate chain verification; resuming a session (the server's ticket) costs
 * almost nothing. mpi-rsh starts once per worker per job, so it keeps the session of the
 * last handshake in a file and the next process resumes it.
 *
 * A session belongs to one configuration: the key is a SHA-256 over the server URL, the name
 * verified, the insecure flag, the CA and client certificate (data, or file name + size +
 * mtime), the client key's name and an exec plugin's certificate. Session files carry the
 * master secret: they live in a directory created 0700, used only when it is a real directory
 * owned by this user and closed to group and others; each file is written 0600 and renamed
 * into place, read with O_NOFOLLOW and ignored unless owned by this user with no group/other
 * access. Any problem means a full handshake, never a failure. In-process, the last session
 * is kept in memory, and connections started together (mpi-agent's parallel reach check) let
 * the first one make the full handshake and resume its session: one key exchange instead of N.
 * TLS 1.3 servers send their tickets after the handshake: OpenSSL's new-session callback
 * saves them whenever they arrive. */
#include "tls_conn.h"
#include "kube/util.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kube/log.h"

#define SESSION_MAX 8192
#define FOLLOW_WAIT_MS 3000 /* how long a connection waits for another one's full handshake */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t session_done = PTHREAD_COND_INITIALIZER;
static int inflight; /* a full handshake for inflight_key is under way in this process */
static unsigned char inflight_key[32];
static unsigned char mem_key[32], mem_blob[SESSION_MAX];
static size_t mem_len;
static pthread_once_t idx_once = PTHREAD_ONCE_INIT;
static int ex_idx = -1; /* SSL ex_data: the connection's struct claim */

/* One connection's claim: its configuration's key, whether others wait for it, and the
 * directory its sessions are saved in (NULL = memory only). */
struct claim {
    unsigned char key[32];
    int leader;
    char *dir;
};

static void claim_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp)
{
    (void)parent, (void)ad, (void)idx, (void)argl, (void)argp;
    struct claim *cl = ptr;
    if (cl)
        free(cl->dir);
    free(cl);
}

static void make_idx(void) { ex_idx = SSL_get_ex_new_index(0, NULL, NULL, NULL, claim_free); }

char *kube_tls_session_dir_default(void)
{
    const char *tmp = getenv("TMPDIR");
    char *def = NULL;
    if (asprintf(&def, "%s/mpi-k8s-tls-%u", tmp && *tmp ? tmp : "/tmp", (unsigned)geteuid()) < 0)
        def = NULL;
    return def;
}

static void hash_str(EVP_MD_CTX *h, const char *s, size_t len)
{
    unsigned char l[8];
    for (int i = 0; i < 8; i++)
        l[i] = (unsigned char)((uint64_t)len >> (8 * i));
    EVP_DigestUpdate(h, l, sizeof l);
    if (len)
        EVP_DigestUpdate(h, s, len);
}

/* A file by name and identity: a rotated certificate file is a new configuration. */
static void hash_file(EVP_MD_CTX *h, const char *path)
{
    struct stat st;
    char id[96] = "";
    if (path && stat(path, &st) == 0)
        snprintf(id, sizeof id, "%lld:%lld.%ld", (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    hash_str(h, path ? path : "", path ? strlen(path) : 0);
    hash_str(h, id, strlen(id));
}

static void config_key(const struct kube_config *cfg, const struct kube_credential *cred, unsigned char key[32])
{
    EVP_MD_CTX *h = EVP_MD_CTX_new();
    unsigned int klen = 32;
    if (!h || EVP_DigestInit_ex(h, EVP_sha256(), NULL) != 1) { /* no key: a random one resumes nothing */
        EVP_MD_CTX_free(h);
        memset(key, 0, 32);
        key[0] = 1;
        return;
    }
    const char *strs[] = { cfg->server, cfg->tls_server_name, cfg->insecure ? "insecure" : "verify" };
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
        hash_str(h, strs[i] ? strs[i] : "", strs[i] ? strlen(strs[i]) : 0);
    hash_str(h, cfg->ca_data ? cfg->ca_data : "", cfg->ca_data ? cfg->ca_data_len : 0);
    hash_str(h, cfg->cert_data ? cfg->cert_data : "", cfg->cert_data ? cfg->cert_data_len : 0);
    hash_str(h, cred && cred->cert ? cred->cert : "", cred && cred->cert ? cred->cert_len : 0);
    hash_file(h, cfg->ca_file);
    hash_file(h, cfg->cert_file);
    hash_file(h, cfg->key_file);
    if (EVP_DigestFinal_ex(h, key, &klen) != 1)
        memset(key, 0, 32);
    EVP_MD_CTX_free(h);
}

/* dir/<first 16 bytes of the key in hex>.tls, when dir is safe to use; NULL otherwise. */
static char *session_path(const char *dir, const unsigned char key[32])
{
    if (!dir)
        return NULL;
    struct stat st;
    if ((mkdir(dir, 0700) < 0 && errno != EEXIST) || lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 077)) {
        KLOG_DEBUG("tls: not caching sessions in %s (missing, not a private directory of this user)", dir);
        return NULL;
    }
    char hex[33], *path = NULL;
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", key[i]);
    if (asprintf(&path, "%s/%s.tls", dir, hex) < 0)
        path = NULL;
    return path;
}

/* The saved session for key from memory or the file; its length, 0 when none. */
static size_t load_blob(const char *dir, const unsigned char key[32], unsigned char *blob)
{
    size_t n = 0;
    pthread_mutex_lock(&mu);
    if (mem_len && !memcmp(mem_key, key, 32))
        memcpy(blob, mem_blob, n = mem_len);
    pthread_mutex_unlock(&mu);
    char *path = n ? NULL : session_path(dir, key);
    int fd = path ? open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077) &&
        st.st_size > 0 && st.st_size <= SESSION_MAX) {
        ssize_t r = read(fd, blob, (size_t)st.st_size);
        n = r == st.st_size ? (size_t)r : 0;
        pthread_mutex_lock(&mu); /* the new-session callback rewrites the file only when it changed */
        memcpy(mem_key, key, 32);
        memcpy(mem_blob, blob, mem_len = n);
        pthread_mutex_unlock(&mu);
    }
    if (fd >= 0)
        close(fd);
    free(path);
    return n;
}

/* With no session for key, waits (bounded) while another thread makes a full handshake for
 * it, or becomes that thread (*leader). Called with mu held. */
static void follow_or_lead(const unsigned char key[32], int *leader)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += FOLLOW_WAIT_MS / 1000;
    while (inflight && !memcmp(inflight_key, key, 32) && !(mem_len && !memcmp(mem_key, key, 32)))
        if (pthread_cond_timedwait(&session_done, &mu, &until) == ETIMEDOUT)
            return;
    if (!inflight && !(mem_len && !memcmp(mem_key, key, 32))) {
        inflight = *leader = 1;
        memcpy(inflight_key, key, 32);
    }
}

int Kube_tls_session_offer(SSL *ssl, const struct kube_config *cfg, const struct kube_credential *cred, const char *dir)
{
    pthread_once(&idx_once, make_idx);
    struct claim *cl = calloc(1, sizeof *cl);
    unsigned char *blob = malloc(SESSION_MAX);
    if (cl && dir && *dir && !(cl->dir = strdup(dir))) {
        free(cl);
        cl = NULL;
    }
    if (!cl || !blob || ex_idx < 0 || !SSL_set_ex_data(ssl, ex_idx, cl)) {
        if (cl)
            free(cl->dir);
        free(cl);
        free(blob);
        return 0;
    }
    config_key(cfg, cred, cl->key);
    size_t n = load_blob(cl->dir, cl->key, blob);
    if (!n) {
        pthread_mutex_lock(&mu);
        follow_or_lead(cl->key, &cl->leader);
        pthread_mutex_unlock(&mu);
        n = cl->leader ? 0 : load_blob(cl->dir, cl->key, blob);
    }
    const unsigned char *p = blob;
    SSL_SESSION *s = n ? d2i_SSL_SESSION(NULL, &p, (long)n) : NULL;
    int ok = s && SSL_SESSION_is_resumable(s) && SSL_set_session(ssl, s) == 1;
    if (n)
        KLOG_DEBUG("tls: %s a remembered session for %s", ok ? "offering" : "ignoring an unusable", cfg->server);
    SSL_SESSION_free(s);
    OPENSSL_cleanse(blob, SESSION_MAX);
    free(blob);
    return ok;
}

/* Writes the session to its file: a private temporary file renamed into place. */
static void save_file(const char *dir, const unsigned char key[32], const unsigned char *blob, size_t n)
{
    char *path = session_path(dir, key), *tmp = NULL;
    if (!path || asprintf(&tmp, "%s.XXXXXX", path) < 0) {
        free(path);
        return;
    }
    int fd = mkostemp(tmp, O_CLOEXEC); /* mode 0600 */
    int ok = fd >= 0 && kube_write_all(fd, blob, n) == 0;
    if (fd >= 0 && close(fd) < 0)
        ok = 0;
    if (fd >= 0 && (!ok || rename(tmp, path) < 0))
        unlink(tmp);
    free(tmp);
    free(path);
}

/* Ends the claim's wait for others (called with mu held). */
static void release_locked(struct claim *cl)
{
    if (cl && cl->leader) {
        cl->leader = 0;
        inflight = 0;
        pthread_cond_broadcast(&session_done);
    }
}

/* OpenSSL's new-session callback: remember the session (returns 0: OpenSSL keeps ownership). */
static int on_new_session(SSL *ssl, SSL_SESSION *s)
{
    struct claim *cl = ex_idx >= 0 ? SSL_get_ex_data(ssl, ex_idx) : NULL;
    int len = cl && SSL_SESSION_is_resumable(s) ? i2d_SSL_SESSION(s, NULL) : 0;
    unsigned char *blob = len > 0 && len <= SESSION_MAX ? malloc((size_t)len) : NULL, *p = blob;
    size_t n = blob && i2d_SSL_SESSION(s, &p) == len ? (size_t)len : 0;
    int same = 0;
    pthread_mutex_lock(&mu);
    if (n) {
        same = mem_len == n && !memcmp(mem_key, cl->key, 32) && !memcmp(mem_blob, blob, n);
        memcpy(mem_key, cl->key, 32);
        memcpy(mem_blob, blob, mem_len = n);
    }
    release_locked(cl);
    pthread_mutex_unlock(&mu);
    if (n && !same)
        save_file(cl->dir, cl->key, blob, n);
    if (blob)
        OPENSSL_cleanse(blob, n);
    free(blob);
    return 0;
}

void Kube_tls_session_setup(SSL_CTX *ctx)
{
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx, on_new_session);
}

void Kube_tls_session_release(SSL *ssl)
{
    struct claim *cl = ssl && ex_idx >= 0 ? SSL_get_ex_data(ssl, ex_idx) : NULL;
    pthread_mutex_lock(&mu);
    release_locked(cl);
    pthread_mutex_unlock(&mu);
}
