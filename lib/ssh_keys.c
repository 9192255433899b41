/* ssh_keys.c - the job's key material for the SSH transport: finds the identity and
 * the pinned host key(s) in the Secret directory, and verifies that a server
 * presented exactly a pinned key (never accepting an unknown one). */
#include "ssh_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/sshkey.h"

#define MAX_PIN_FILE (1 << 20)

static char *join_path(const char *dir, const char *name)
{
    char *p = NULL;
    if (asprintf(&p, "%s/%s", dir, name) < 0)
        return NULL;
    return p;
}

/* First of names[] that exists in dir (newly allocated path), or NULL. */
static char *first_existing(const char *dir, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *p = join_path(dir, names[i]);
        if (p && access(p, F_OK) == 0)
            return p;
        free(p);
    }
    return NULL;
}

static int add_pin(struct kube_sshi_keys *k, char *type, unsigned char *blob, size_t len)
{
    int seen = 0;
    for (size_t i = 0; i < k->npins; i++)
        seen |= strcmp(k->pins[i].type, type) == 0;
    if (!seen) {
        char *m = NULL;
        if (asprintf(&m, "%s%s%s", k->hostkey_methods ? k->hostkey_methods : "", k->hostkey_methods ? "," : "", type) < 0)
            return -1;
        free(k->hostkey_methods);
        k->hostkey_methods = m;
    }
    struct kube_sshi_pin *np = realloc(k->pins, (k->npins + 1) * sizeof(*np));
    if (!np)
        return -1;
    k->pins = np;
    np[k->npins++] = (struct kube_sshi_pin){ .type = type, .blob = blob, .len = len };
    return 0;
}

/* Reads every key line of the pin file; 0 ok, -1 with *errmsg. */
static int read_pins(struct kube_sshi_keys *k, char **errmsg)
{
    FILE *f = fopen(k->pinned_path, "r");
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t n;
    int rc = 0;
    if (!f)
        return kube_set_err(errmsg, "config: cannot read pinned host key %s: %s", k->pinned_path, strerror(errno));
    while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
        char *type;
        unsigned char *blob;
        size_t len;
        lineno++;
        int r = kube_sshkey_parse_line(line, (size_t)n, &type, &blob, &len);
        if (r < 0) {
            kube_set_err(errmsg,
                         "config: %s line %zu: expected \"ssh-ed25519 BASE64\" "
                         "(an OpenSSH public key)",
                         k->pinned_path, lineno);
            rc = -1;
        } else if (r > 0 && add_pin(k, type, blob, len) < 0) {
            free(type);
            free(blob);
            kube_set_err(errmsg, "config: out of memory reading %s", k->pinned_path);
            rc = -1;
        }
    }
    free(line);
    fclose(f);
    if (rc == 0 && k->npins == 0) {
        kube_set_err(errmsg, "config: %s holds no public key to pin host keys to", k->pinned_path);
        rc = -1;
    }
    return rc;
}

int Kube_sshi_keys_load(const char *dir, struct kube_sshi_keys *k, char **errmsg)
{
    /* ours, then upstream MPI Operator's names (its Secret mounted as id_rsa, id_rsa.pub) */
    static const char *const ids[] = { "ssh-privatekey", "id_ed25519", "id_rsa" };
    static const char *const pins[] = { "ssh-publickey", "id_ed25519.pub", "id_rsa.pub", "known_hosts" };
    memset(k, 0, sizeof(*k));
    if (!dir || !*dir) {
        kube_set_err(errmsg, "config: no SSH key directory given (sshAuthMountPath)");
        return KUBE_SSH_ERR_CONFIG;
    }
    k->identity = first_existing(dir, ids, 3);
    if (!k->identity || access(k->identity, R_OK) != 0) {
        kube_set_err(errmsg,
                     "config: no readable private key in %s (expected ssh-privatekey, "
                     "id_ed25519 or id_rsa)",
                     dir);
        Kube_sshi_keys_free(k);
        return KUBE_SSH_ERR_CONFIG;
    }
    k->pinned_path = first_existing(dir, pins, 4);
    if (!k->pinned_path) {
        kube_set_err(errmsg,
                     "config: no host key to pin in %s (expected ssh-publickey, "
                     "id_ed25519.pub, id_rsa.pub or known_hosts); refusing to trust unknown hosts",
                     dir);
        Kube_sshi_keys_free(k);
        return KUBE_SSH_ERR_CONFIG;
    }
    if (read_pins(k, errmsg) < 0) {
        Kube_sshi_keys_free(k);
        return KUBE_SSH_ERR_CONFIG;
    }
    return KUBE_SSH_OK;
}

void Kube_sshi_keys_free(struct kube_sshi_keys *k)
{
    for (size_t i = 0; i < k->npins; i++) {
        free(k->pins[i].type);
        free(k->pins[i].blob);
    }
    free(k->pins);
    free(k->identity);
    free(k->pinned_path);
    free(k->hostkey_methods);
    memset(k, 0, sizeof(*k));
}

/* The type name inside a key blob (newly allocated), or NULL. */
static char *blob_type(const unsigned char *b, size_t n)
{
    if (n < 4)
        return NULL;
    size_t l = ((size_t)b[0] << 24) | ((size_t)b[1] << 16) | ((size_t)b[2] << 8) | b[3];
    return l <= n - 4 ? strndup((const char *)b + 4, l) : NULL;
}

int Kube_sshi_hostkey_verify(const struct kube_sshi_keys *k, LIBSSH2_SESSION *s, const char *host, int port, char **errmsg)
{
    size_t len = 0;
    int type = 0;
    const unsigned char *key = (const unsigned char *)libssh2_session_hostkey(s, &len, &type);
    if (!key || !len) {
        kube_set_err(errmsg, "host key: %s:%d sent no host key", host, port);
        return KUBE_SSH_ERR_HOSTKEY;
    }
    for (size_t i = 0; i < k->npins; i++)
        if (k->pins[i].len == len && memcmp(k->pins[i].blob, key, len) == 0)
            return KUBE_SSH_OK;
    char *fp = kube_sshkey_fingerprint(key, len), *tn = blob_type(key, len);
    kube_set_err(errmsg,
                 "host key: %s:%d presented %s key %s, which is not the key pinned "
                 "in %s; refusing to connect (wrong host, or the pod does not use this "
                 "job's key)",
                 host, port, tn ? tn : "?", fp ? fp : "?", k->pinned_path);
    free(fp);
    free(tn);
    return KUBE_SSH_ERR_HOSTKEY;
}
