/* ssh_int.h - internals shared by the lib/ssh_*.c files (not a public header):
 * the job's key material, an established authenticated connection, and helpers. */
#ifndef KUBE_SSH_INT_H
#define KUBE_SSH_INT_H

#include <libssh2.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/ssh.h"
#include "kube/util.h"

struct kube_sshi_pin {
    char *type;          /* "ssh-ed25519", ... */
    unsigned char *blob; /* the key blob as sent on the wire */
    size_t len;
};

/* What key_dir provides: the identity file and the pinned host keys. */
struct kube_sshi_keys {
    char *identity;    /* path of the private key */
    char *pinned_path; /* file the pins were read from */
    struct kube_sshi_pin *pins;
    size_t npins;
    char *hostkey_methods; /* pinned key types, comma-joined, for libssh2_session_method_pref */
};

/* One authenticated SSH connection to host:port. */
struct kube_sshi_conn {
    int fd;
    LIBSSH2_SESSION *s;
    const char *host;
    int port;
    int timeout_ms;
    int keepalive_s;
    int cancel_fd;
    int handshaken;     /* 1 once the SSH handshake completed */
    int no_auth;        /* stop after the host key check (kube_ssh_check's no_auth) */
    int64_t last_rx_ms; /* when the socket last delivered bytes (kube_now_ms) */
    char user[256];
};

/* Loads identity + pins from dir; KUBE_SSH_OK or KUBE_SSH_ERR_CONFIG with *errmsg. */
int Kube_sshi_keys_load(const char *dir, struct kube_sshi_keys *k, char **errmsg);
/* Frees what Kube_sshi_keys_load filled. */
void Kube_sshi_keys_free(struct kube_sshi_keys *k);
/* Checks the session's host key against the pins; KUBE_SSH_OK or KUBE_SSH_ERR_HOSTKEY. */
int Kube_sshi_hostkey_verify(const struct kube_sshi_keys *k, LIBSSH2_SESSION *s, const char *host, int port, char **errmsg);

/* One DNS + TCP connect try (every address, each bounded by timeout_ms); returns the
 * connected socket, or KUBE_SSH_ERR_DNS / _CONNECT with *retry = 1 if worth retrying. */
int Kube_sshi_tcp_connect(const char *host, int port, int timeout_ms, int keepalive_s, int *retry, char **errmsg);

/* DNS → connect → handshake → host key → auth, with the bounded retries of o->attempts. */
int Kube_sshi_open(const struct kube_ssh_opts *o, const char *host, struct kube_sshi_conn *c, char **errmsg);
/* Disconnects (bounded wait) and frees the session and socket. */
void Kube_sshi_close(struct kube_sshi_conn *c, const char *reason);

/* libssh2's last error message for s ("" if none). */
const char *Kube_sshi_lasterr(LIBSSH2_SESSION *s);

#endif
