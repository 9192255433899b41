/* ssh_session.c - establishing an authenticated SSH connection with libssh2: bounded
 * retries of DNS/connect/handshake, curve25519 key exchange, host key pinning,
 * Ed25519 public-key auth; plus kube_ssh_check, which stops there. */
#include "ssh_int.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define KEX_PREF                                                                                                            \
    "curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,"                                                    \
    "ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group16-sha512,"                                                  \
    "diffie-hellman-group14-sha256"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_rc;

static void lib_init(void) { init_rc = libssh2_init(0); }

const char *Kube_sshi_lasterr(LIBSSH2_SESSION *s)
{
    char *msg = NULL;
    int len = 0;
    if (!s || libssh2_session_last_error(s, &msg, &len, 0) == 0 || !msg)
        return "";
    return msg;
}

const char *kube_ssh_stage_name(int result)
{
    switch (result) {
    case KUBE_SSH_OK: return "ok";
    case KUBE_SSH_ERR_CONFIG: return "config";
    case KUBE_SSH_ERR_DNS: return "DNS";
    case KUBE_SSH_ERR_CONNECT: return "connect";
    case KUBE_SSH_ERR_HANDSHAKE: return "handshake";
    case KUBE_SSH_ERR_HOSTKEY: return "host key";
    case KUBE_SSH_ERR_AUTH: return "auth";
    case KUBE_SSH_ERR_SESSION: return "session";
    case KUBE_SSH_ERR_NOSTATUS: return "exit status";
    case KUBE_SSH_ERR_CANCELLED: return "cancelled";
    default: return "unknown";
    }
}

/* Fills c from o with defaults; KUBE_SSH_OK or KUBE_SSH_ERR_CONFIG. */
static int setup(const struct kube_ssh_opts *o, const char *host, struct kube_sshi_conn *c, char **errmsg)
{
    const char *user = o->user;
    memset(c, 0, sizeof(*c));
    c->fd = -1;
    c->host = host;
    c->port = o->port ? o->port : 2222;
    c->timeout_ms = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 10000;
    c->keepalive_s = o->keepalive_s > 0 ? o->keepalive_s : 15;
    c->cancel_fd = o->cancel_fd > 0 ? o->cancel_fd : -1;
    c->no_auth = o->no_auth;
    if (!host || !*host || strpbrk(host, " \t\r\n")) {
        kube_set_err(errmsg, "config: bad host name \"%s\"", host ? host : "");
        return KUBE_SSH_ERR_CONFIG;
    }
    if (c->port < 1 || c->port > 65535) {
        kube_set_err(errmsg, "config: port %d out of range 1-65535", c->port);
        return KUBE_SSH_ERR_CONFIG;
    }
    char pwbuf[4096];
    struct passwd pwd, *pw = NULL;
    if ((!user || !*user) && getpwuid_r(geteuid(), &pwd, pwbuf, sizeof(pwbuf), &pw) == 0 && pw)
        user = pw->pw_name; /* getpwuid_r: the agent checks workers from threads */
    if (!user || !*user)
        user = getenv("USER");
    if ((!user || !*user) && c->no_auth)
        user = "-"; /* never sent: the check ends at the host key (a uid without a passwd entry) */
    if (!user || !*user || strlen(user) >= sizeof(c->user)) {
        kube_set_err(errmsg, "config: no usable remote user name");
        return KUBE_SSH_ERR_CONFIG;
    }
    strcpy(c->user, user);
    pthread_once(&init_once, lib_init);
    if (init_rc != 0) {
        kube_set_err(errmsg, "config: libssh2_init failed");
        return KUBE_SSH_ERR_CONFIG;
    }
    return KUBE_SSH_OK;
}

/* Handshake errors that mean "the server dropped us early" (e.g. still starting). */
static int handshake_retryable(int e)
{
    return e == LIBSSH2_ERROR_SOCKET_DISCONNECT || e == LIBSSH2_ERROR_SOCKET_RECV || e == LIBSSH2_ERROR_SOCKET_SEND ||
           e == LIBSSH2_ERROR_BANNER_RECV || e == LIBSSH2_ERROR_BANNER_SEND;
}

/* libssh2's socket reads, timestamped: the bridge gives up on a peer silent for 4 keepalives. */
static LIBSSH2_RECV_FUNC(recv_stamped)
{
    struct kube_sshi_conn *c = *abstract;
    ssize_t n = recv(socket, buffer, length, flags);
    if (n < 0)
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    c->last_rx_ms = kube_now_ms();
    return n;
}

/* TCP connect + SSH handshake (blocking libssh2 with a per-step timeout). */
static int connect_handshake(struct kube_sshi_conn *c, const struct kube_sshi_keys *k, int *retry, char **errmsg)
{
    int fd = Kube_sshi_tcp_connect(c->host, c->port, c->timeout_ms, c->keepalive_s, retry, errmsg);
    if (fd < 0)
        return fd;
    c->fd = fd;
    c->s = libssh2_session_init_ex(NULL, NULL, NULL, c);
    if (c->s)
        libssh2_session_callback_set(c->s, LIBSSH2_CALLBACK_RECV, (void *)recv_stamped);
    if (!c->s) {
        kube_set_err(errmsg, "handshake: out of memory creating an SSH session");
        return KUBE_SSH_ERR_HANDSHAKE;
    }
    libssh2_session_set_blocking(c->s, 1);
    libssh2_session_set_timeout(c->s, c->timeout_ms);
    if (libssh2_session_method_pref(c->s, LIBSSH2_METHOD_KEX, KEX_PREF) != 0 ||
        libssh2_session_method_pref(c->s, LIBSSH2_METHOD_HOSTKEY, k->hostkey_methods) != 0) {
        kube_set_err(errmsg, "config: libssh2 supports none of the pinned host key types (%s)", k->hostkey_methods);
        return KUBE_SSH_ERR_CONFIG;
    }
    int rc = libssh2_session_handshake(c->s, fd);
    if (rc != 0) {
        *retry = handshake_retryable(rc);
        kube_set_err(errmsg, "handshake: with %s port %d failed: %s", c->host, c->port, Kube_sshi_lasterr(c->s));
        return KUBE_SSH_ERR_HANDSHAKE;
    }
    c->handshaken = 1;
    return KUBE_SSH_OK;
}

static int authenticate(struct kube_sshi_conn *c, const struct kube_sshi_keys *k, char **errmsg)
{
    int rc = libssh2_userauth_publickey_fromfile_ex(c->s, c->user, (unsigned)strlen(c->user), NULL, k->identity, NULL);
    if (rc == 0)
        return KUBE_SSH_OK;
    if (rc == LIBSSH2_ERROR_FILE) {
        kube_set_err(errmsg,
                     "config: cannot use private key %s: %s (expected an unencrypted "
                     "OpenSSH ed25519 key)",
                     k->identity, Kube_sshi_lasterr(c->s));
        return KUBE_SSH_ERR_CONFIG;
    }
    kube_set_err(errmsg, "auth: %s@%s port %d refused the key %s: %s", c->user, c->host, c->port, k->identity,
                 Kube_sshi_lasterr(c->s));
    return KUBE_SSH_ERR_AUTH;
}

/* Sleeps ms unless cancel_fd becomes readable first (then returns 1). */
static int backoff_sleep(int cancel_fd, int64_t ms)
{
    int64_t deadline = kube_now_ms() + ms;
    for (;;) {
        int64_t left = deadline - kube_now_ms();
        if (left <= 0)
            return 0;
        struct pollfd p = { .fd = cancel_fd, .events = POLLIN };
        int r = poll(&p, cancel_fd >= 0 ? 1 : 0, (int)left);
        if (r > 0)
            return 1;
        if (r < 0 && errno != EINTR)
            return 0;
    }
}

/* One full try; on failure the half-open connection is torn down. */
static int try_once(struct kube_sshi_conn *c, const struct kube_sshi_keys *k, int *retry, char **errmsg)
{
    int rc = connect_handshake(c, k, retry, errmsg);
    if (rc == KUBE_SSH_OK)
        rc = Kube_sshi_hostkey_verify(k, c->s, c->host, c->port, errmsg);
    if (rc == KUBE_SSH_OK && !c->no_auth)
        rc = authenticate(c, k, errmsg);
    if (rc != KUBE_SSH_OK)
        Kube_sshi_close(c, "giving up");
    return rc;
}

int Kube_sshi_open(const struct kube_ssh_opts *o, const char *host, struct kube_sshi_conn *c, char **errmsg)
{
    struct kube_sshi_keys k;
    int rc = setup(o, host, c, errmsg);
    if (rc != KUBE_SSH_OK || (rc = Kube_sshi_keys_load(o->key_dir, &k, errmsg)) != KUBE_SSH_OK)
        return rc;
    int attempts = o->attempts > 0 ? o->attempts : 10;
    int64_t start = kube_now_ms(), delay = 250;
    for (int i = 1;; i++) {
        int retry = 0;
        rc = try_once(c, &k, &retry, errmsg);
        if (rc == KUBE_SSH_OK || !retry || i >= attempts) {
            if (rc != KUBE_SSH_OK && i > 1 && errmsg && *errmsg) {
                char *first = *errmsg;
                *errmsg = NULL;
                kube_set_err(errmsg, "%s (%d attempts over %.1f s)", first, i, (double)(kube_now_ms() - start) / 1000.0);
                free(first);
            }
            break;
        }
        if (backoff_sleep(c->cancel_fd, delay)) {
            kube_set_err(errmsg, "cancelled: while connecting to %s", host);
            rc = KUBE_SSH_ERR_CANCELLED;
            break;
        }
        delay = delay * 2 > 2000 ? 2000 : delay * 2;
    }
    Kube_sshi_keys_free(&k);
    return rc;
}

void Kube_sshi_close(struct kube_sshi_conn *c, const char *reason)
{
    if (c->s) {
        libssh2_session_set_blocking(c->s, 1);
        libssh2_session_set_timeout(c->s, c->timeout_ms < 2000 ? c->timeout_ms : 2000);
        if (c->handshaken)
            libssh2_session_disconnect(c->s, reason);
        libssh2_session_free(c->s);
        c->s = NULL;
        c->handshaken = 0;
    }
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

int kube_ssh_check(const struct kube_ssh_opts *o, const char *host, char **errmsg)
{
    struct kube_sshi_conn c;
    int rc = Kube_sshi_open(o, host, &c, errmsg);
    if (rc == KUBE_SSH_OK)
        Kube_sshi_close(&c, "reachability check done");
    return rc;
}
