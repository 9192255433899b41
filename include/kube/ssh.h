/* ssh.h - the SSH transport (libssh2) used by mpi-rsh to run a command in a worker
 * pod and by mpi-agent to check a worker is reachable. Keys come from the job's
 * Secret directory (sshAuthMountPath): the Ed25519 identity and the pinned host
 * key; an unknown or different host key is always refused. See docs/ssh.md. */
#ifndef KUBE_SSH_H
#define KUBE_SSH_H

struct kube_ssh_opts {
    const char *user;       /* remote user; NULL/"" = the local user's name */
    int port;               /* 0 = 2222 */
    const char *key_dir;    /* identity: ssh-privatekey, id_ed25519 or id_rsa; pinned host
                                key(s): ssh-publickey, id_ed25519.pub, id_rsa.pub or
                                known_hosts (first present) */
    int connect_timeout_ms; /* bound of one TCP connect and of each handshake/auth step; 0 = 10000 */
    int attempts;           /* tries for DNS-not-yet / refused / unreachable (backoff 0.25 s
                                doubling to 2 s); 0 = 10, like ConnectionAttempts=10 */
    int keepalive_s;        /* SSH + TCP keepalive interval; a peer silent for 4 intervals
                                ends kube_ssh_run (ServerAliveCountMax=4); 0 = 15 */
    int cancel_fd;          /* > 0: once readable, kube_ssh_run closes the session (libssh2
                                >= 1.11: after a TERM "signal" request) and returns
                                KUBE_SSH_ERR_CANCELLED; also ends the retry sleeps; 0 = none */
    int no_auth;            /* kube_ssh_check only: stop after the host key, log in as nobody
                                (the caller cannot name the user the launcher will be) */
};

/* Return values: 0 ok; negative = the stage that failed (errmsg starts with its name). */
enum kube_ssh_result {
    KUBE_SSH_OK = 0,
    KUBE_SSH_ERR_CONFIG = -1,    /* bad options, missing/unreadable key files */
    KUBE_SSH_ERR_DNS = -2,       /* host name not resolvable (after the retries) */
    KUBE_SSH_ERR_CONNECT = -3,   /* TCP connect refused/unreachable/timed out (after retries) */
    KUBE_SSH_ERR_HANDSHAKE = -4, /* SSH banner/key exchange failed */
    KUBE_SSH_ERR_HOSTKEY = -5,   /* the server's host key is not the pinned one */
    KUBE_SSH_ERR_AUTH = -6,      /* the server refused our key for this user */
    KUBE_SSH_ERR_SESSION = -7,   /* channel/exec refused, connection lost or I/O error mid-run */
    KUBE_SSH_ERR_NOSTATUS = -8,  /* remote ended without exit status (e.g. killed by a signal) */
    KUBE_SSH_ERR_CANCELLED = -9, /* cancel_fd became readable */
};

/* Runs `command` (already joined; the remote login shell runs it with -c, as ssh does) on
 * host, bridging fd_in (-1 = empty stdin, EOF at once) to its stdin with EOF propagated and
 * its stdout/stderr to fd_out/fd_err. *exit_code always gets the code ssh(1) would exit with:
 * the remote exit status, else 255. Returns 0 when the remote exit status was received,
 * otherwise a negative kube_ssh_result with *errmsg (caller frees) naming host and stage. */
int kube_ssh_run(const struct kube_ssh_opts *o, const char *host, const char *command, int fd_in, int fd_out, int fd_err,
                 int *exit_code, char **errmsg);

/* Reachability check: DNS, connect, handshake, host key, auth (unless o->no_auth), then disconnect.
 * 0 ok, else a negative kube_ssh_result with *errmsg naming the failing stage. */
int kube_ssh_check(const struct kube_ssh_opts *o, const char *host, char **errmsg);

/* Short name of a kube_ssh_result stage ("DNS", "connect", "host key", ...). */
const char *kube_ssh_stage_name(int result);

#endif
