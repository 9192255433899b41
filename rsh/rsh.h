/* rsh.h - mpi-rsh internals: the ssh-compatible command line (as mpirun, Hydra
 * and Intel MPI call an rsh/ssh agent), the namespace a host names, the remote command
 * line, and the best-effort remote kill after a signal. */
#ifndef RSH_H
#define RSH_H

#include "mpik8s/contract.h"
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

/* The version --version prints (mpi-agent's AGENT_VERSION, mpi-operator's MPI_OPERATOR_VERSION alike). */
#define RSH_VERSION "0.1.0"

struct rsh_opts {
    /* ssh-compatible */
    int no_stdin;          /* -n */
    int quiet;             /* -q */
    int verbose;           /* -v (repeatable) */
    int port;              /* -p / -o Port= (ssh transport), 0 = default */
    const char *user;      /* -l / user@host / -o User= */
    int user_owned;        /* user was allocated (from user@host) */
    const char *identity;  /* -i (ssh transport: directory of the file is the key dir) */
    int attempts;          /* -o ConnectionAttempts= (0 = default) */
    int connect_timeout_s; /* -o ConnectTimeout= (0 = default) */
    int ping_ms;           /* MPI_RSH_PING_MS: client ping interval (0 = 30000) */
    char *tls_dir;         /* MPI_RSH_TLS_CACHE_DIR (set but empty: NULL, no files); owned */
    int tls_dir_set;       /* MPI_RSH_TLS_CACHE_DIR was set (else main.c uses the default) */
    int reattach_s;        /* MPI_RSH_REATTACH_S: bound on reattaching to a cut stream (0 = never) */
    /* ours (long options, or the environment the agent sets) */
    const char *namespace;  /* --namespace / MPI_JOB_NAMESPACE */
    const char *container;  /* --container / MPI_JOB_WORKER_CONTAINER */
    const char *kubeconfig; /* --kubeconfig */
    const char *context;    /* --context */
    const char *ssh_dir;    /* --ssh-dir / MPI_JOB_SSH_DIR */
    int transport_set;      /* --transport given */
    enum mpik8s_transport transport;
    int proto;          /* --protocol v4|v5 (0 = auto) */
    int no_session_tag; /* --no-session-tag: no remote kill possible */
    int info;           /* RSH_INFO_HELP (--help) or RSH_INFO_VERSION (--version): print it, exit 0 */
    int usage_error;    /* the error is one of usage (unknown option, no value, no host): print the usage too */
    /* positional */
    const char *host; /* as given (user@ stripped) */
    char *command;    /* words joined with single spaces (NULL = none given) */
};

enum { RSH_INFO_HELP = 1, RSH_INFO_VERSION = 2 };

/* Parses argv (argv[0] is the program) into o; env values are applied by rsh_apply_env.
 * 0 ok (with o->info set, --help or --version came before HOST and nothing else was read);
 * -1 with *errmsg (o->usage_error when the usage should follow it). o->command is malloc'd;
 * free with rsh_opts_free. */
int rsh_parse_args(int argc, char **argv, struct rsh_opts *o, char **errmsg);
/* Fills unset fields from the environment (MPI_JOB_NAMESPACE, MPI_JOB_WORKER_CONTAINER,
 * MPI_JOB_TRANSPORT, MPI_JOB_SSH_DIR, MPI_JOB_SSH_PORT, MPI_RSH_ATTEMPTS, MPI_RSH_PING_MS,
 * MPI_RSH_TLS_CACHE_DIR). 0 ok, -1 bad value (or out of memory). */
int rsh_apply_env(struct rsh_opts *o, char **errmsg);
/* Frees what o owns. */
void rsh_opts_free(struct rsh_opts *o);
/* Writes the usage of prog (mpi-rsh or mpi-rsh-ssh: same command line) to f. */
void rsh_usage(FILE *f, const char *prog);

/* The namespace an FQDN "<pod>.<svc>.<ns>.svc[...]" names, or NULL (new string). */
char *rsh_host_namespace(const char *host);

/* Makes a random session tag (16 hex chars) into tag (>= 17 bytes). 0/-1. */
int rsh_session_tag(char tag[17]);
/* The command sent to /bin/sh -c (tag NULL: COMMAND alone); with a tag
 * "export MPI_RSH_SESSION=TAG; /bin/sh -c '/bin/sh -c '\''COMMAND'\''; r=$?; echo $r >/tmp/.mpi-rsh-TAG.rc ...;
 * exit $r'; exit $?": the session's processes carry the tag, and the middle shell, which outlives
 * a killed exec'd shell, leaves the exit code for a reattach. */
char *rsh_remote_command(const char *command, const char *tag);

/* Reattach (reattach.c, docs/rsh.md "Reattach"): after a stream cut without a status. */
#define RSH_RC_DIR "/tmp"                     /* where the tagged command leaves its exit code */
#define RSH_REATTACH_ENV "MPI_RSH_REATTACH_S" /* bound in seconds, 0 = no reattach */
#define RSH_REATTACH_DEFAULT_S 60
#define RSH_WAIT_ATTACHED "mpi-rsh-attached" /* the wait script's lines */
#define RSH_WAIT_EXIT "mpi-rsh-exit"
#define RSH_WAIT_GONE "mpi-rsh-gone"
/* *secs from $MPI_RSH_REATTACH_S (0-86400), else RSH_REATTACH_DEFAULT_S. 0, or -1 with *errmsg. */
int rsh_reattach_env(int *secs, char **errmsg);
/* *secs from $MPI_RSH_DAEMON_EXIT_S (0-86400), else MPIK8S_RSH_DAEMON_EXIT_DEFAULT_S. 0, or -1
 * with *errmsg. */
int rsh_daemon_exit_env(int *secs, char **errmsg);
/* The script a reattach runs in the pod: prints RSH_WAIT_ATTACHED when the session's processes
 * run (and then exits 0 unless follow), waits until they are gone, then prints "RSH_WAIT_EXIT N"
 * (the code the session left; the file removed) or RSH_WAIT_GONE (no process, no code). New
 * string, NULL when out of memory. */
char *rsh_wait_script(const char *tag, int follow);
/* Reads the wait script's output: RSH_WAITED_EXIT with *code, RSH_WAITED_GONE, or
 * RSH_WAITED_NOTHING (no final line yet); *attached when it said the session runs. */
enum { RSH_WAITED_NOTHING = 0, RSH_WAITED_EXIT, RSH_WAITED_GONE };
int rsh_wait_parse(const char *out, int *attached, int *code);
/* The shell script that signals every process in the pod carrying MPI_RSH_SESSION=TAG
 * (TERM, then KILL after grace_s seconds). */
char *rsh_kill_script(const char *tag, int grace_s);

/* exec_kill.c: best-effort second exec (short bounds) that signals the processes of the
 * session tagged tag in base's pod: TERM, KILL a second later. */
struct kube_config;
struct kube_exec_opts;
void rsh_remote_kill(const struct kube_config *cfg, const struct kube_exec_opts *base, const char *tag);
/* reattach.c: base's stream ended cut (r->cut) while its tagged command may still run: reconnects
 * to the pod with the wait script (base's settings; bound_s seconds to get each answer, renewed
 * whenever the session is found running) and rewrites r as if the first stream had ended: EXITED
 * with the command's exit code, STREAM_ERROR (255, r->message says the stream was cut and why the
 * reattach failed) or CANCELLED (base->cancel_fd fired: the caller stops the session). Returns the
 * new outcome. Tells fd_err, one line each, that it reattaches and when it found the session. */
struct kube_exec_result;
int rsh_reattach(const struct kube_config *cfg, const struct kube_exec_opts *base, const char *tag, int bound_s, int fd_err,
                 struct kube_exec_result *r);

/* sigpipe.c (libc only): SIGTERM/SIGINT/SIGHUP write their number to rsh_sig_pipe[1] (the
 * transports poll rsh_sig_pipe[0]) and the first sets rsh_got_signal; SIGPIPE is ignored.
 * 0 ok, -1 with errno set. */
int rsh_signals_setup(void);
extern int rsh_sig_pipe[2];
extern volatile sig_atomic_t rsh_got_signal;
/* startup.c: the start of both programs (prog: mpi-rsh or mpi-rsh-ssh): rsh_signals_setup()
 * first, then argv and the environment into o, and the log level. RSH_GO_ON: o is ready;
 * otherwise the exit code, o then freed: 0 after --help or --version (on stdout), 255 after
 * a one-line message on stderr (followed by the usage for an unknown option, a missing value
 * or no host, as ssh prints it). */
#define RSH_GO_ON (-1)
int rsh_start(int argc, char **argv, struct rsh_opts *o, const char *prog);
/* 1 when fd 0 is /dev/null (then no stdin is requested: also right for v4, which has no EOF). */
int rsh_stdin_is_devnull(void);
/* The launch to host ended with code: unless 0 or a signal stopped this program (mpirun's own
 * stop), appends the exit line to mpi-agent's mark (mpik8s_rsh_mark_exit); a failed write is
 * only logged. */
void rsh_mark_end(const char *host, int code);

/* ssh_handoff.c: the SSH transport is its own program, mpi-rsh-ssh (libssh2 and libcrypto
 * stay out of mpi-rsh's start-up): execs it with argv from the bundle directory
 * ($MPI_K8S_BUNDLE_DIR), else mpi-rsh's own directory, else PATH. Returns only on failure
 * (255, a one-line message printed). */
int rsh_exec_ssh_program(char **argv);
/* Execs the sibling program prog (looked up as above) with argv (argv[0] is replaced by
 * prog). Returns only on failure (-1, errno set; nothing printed). */
int rsh_exec_sibling(const char *prog, char **argv);

#endif
