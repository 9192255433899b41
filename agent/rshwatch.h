/* rshwatch.h - the launch watch: once mpirun (or Hydra's mpiexec) runs, its daemons must start
 * through mpi-rsh. Its own ssh or rsh before any mpi-rsh call shows that it did not read the
 * variable naming our agent, and so does a launcher that exits, or starts nothing at all within a
 * bound, without that call; a rank on the launcher, before or after it, is the placement check's
 * failure. This half is pure: which stack a
 * process or mpirun's output shows, the verdict from what was seen and the clock, and the message
 * naming the stack, the variable and what to set. The supervisor (agent/supervise.c) feeds it from
 * /proc and the mark mpi-rsh leaves (agent/rshwatch_proc.c). tests/unit/test_agent_rshwatch.c. */
#ifndef MPI_AGENT_RSHWATCH_H
#define MPI_AGENT_RSHWATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mpik8s/contract.h"

/* --rsh-timeout / MPI_AGENT_RSH_TIMEOUT (0 = off): how long a launcher may start nothing at all. A
 * launch reaches its first mpi-rsh call well under a second after mpirun starts; ORTE with cluster
 * DNS gone spends 30-37 s in lookups first (e2e 18_dns_gone), which must not count as a launch
 * some other way. Another way shows sooner: its process (agent_rshwatch.other). */
#define AGENT_RSHWATCH_DEFAULT_S 120
#define AGENT_RSHWATCH_FAST_MS 20000 /* looks every 100 ms (placing: 250 ms) so long after the start */
#define AGENT_ENV_RSH_TIMEOUT "MPI_AGENT_RSH_TIMEOUT"

/* What launches the daemons: Open MPI 4's orterun, Open MPI 5's prterun, Hydra (MPICH or Intel). */
enum agent_stack {
    AGENT_STACK_NONE,    /* not an MPI launcher */
    AGENT_STACK_OPENMPI, /* Open MPI, version not seen (mpirun) */
    AGENT_STACK_OMPI4,
    AGENT_STACK_OMPI5,
    AGENT_STACK_HYDRA, /* MPICH or Intel MPI, as the job says */
};

/* 1 when text[0..len) holds the bytes of word (NULL text: 0); the output checks of the launch
 * watch and of agent/stackcrash.c. */
int agent_text_holds(const char *text, size_t len, const char *word);

/* The stack a program name shows (a process's comm or its executable's base name): prterun,
 * prte -> OMPI5; orterun -> OMPI4; mpiexec.hydra, mpiexec.mpich, mpirun.mpich -> HYDRA; mpirun,
 * mpiexec, mpirun.openmpi, mpiexec.openmpi -> OPENMPI (a generic launcher); else NONE. */
enum agent_stack agent_stack_of_program(const char *name);
/* The stack mpirun's output names (PRRTE's "PRTE" / "prterun" / "prted", ORTE's "ORTE" / "orted",
 * Hydra's "HYDRA" / "hydra" / "HYD_" / "HYDU_" / "[mpiexec@"), or NONE. */
enum agent_stack agent_stack_of_output(const char *text, size_t len);
/* The more precise of two findings (OMPI4/OMPI5/HYDRA over OPENMPI over NONE; a keeps ties). */
enum agent_stack agent_stack_better(enum agent_stack a, enum agent_stack b);

/* What the watch has seen. */
struct agent_rshwatch {
    int64_t bound_ms;      /* <= 0: off */
    int64_t launcher_at;   /* monotonic ms when an MPI launcher was first seen; 0 = not yet */
    int rsh_called;        /* mpi-rsh left its mark */
    enum agent_stack seen; /* the best stack found so far */
    int other;             /* before any mpi-rsh call, the launcher ran ssh or rsh itself (a child
                              seen in two looks in a row; a rank there is the placement check's) */
};

enum agent_rshwatch_verdict {
    AGENT_RSHWATCH_WAIT, /* nothing to say yet */
    AGENT_RSHWATCH_OK,   /* mpi-rsh was called, the watch is off, or no launcher ran */
    AGENT_RSHWATCH_FAIL, /* a launcher started another process, ended, or started nothing within the
                            bound, without calling mpi-rsh */
};

/* The verdict at now; cmd_done: the supervised command has exited. */
enum agent_rshwatch_verdict agent_rshwatch_decide(const struct agent_rshwatch *w, int64_t now, int cmd_done);

/* For a launcher that ended without calling mpi-rsh: 1 when that is this watch's failure, i.e. it
 * exited 0 (its ranks ran, not on the workers) or its output shows it tried to start daemons some
 * other way ("ssh", "rsh", "daemon": issue #36's "PRTE has lost communication with a remote daemon");
 * 0 when it failed on its own before any launch (a usage error), whose account then stands. */
int agent_rshwatch_ended_badly(int exit_code, const char *out, size_t len);

/* Looks a variable up (getenv, or a test's table); NULL when unset. */
typedef const char *(*agent_rshwatch_getenv)(const char *name, void *ud);

/* How the launcher went without mpi-rsh, for the message. */
struct agent_rshwatch_how {
    int ended;        /* it exited on its own */
    const char *prog; /* else the process it started instead (comm), NULL when none: it started nothing */
    long pid;
};
/* The one-line failure: which stack launched without mpi-rsh after how long and how, the variable
 * naming the agent that it did not read (with its value, and the value a user set instead of ours),
 * and what to set. mpi: the job's implementation (Hydra's names, and Open MPI's when the version was
 * not seen). New string, NULL when out of memory. */
char *agent_rshwatch_message(enum agent_stack st, enum mpik8s_mpi mpi, const char *rsh, double secs,
                             const struct agent_rshwatch_how *how, agent_rshwatch_getenv get, void *ud);

/* 1 when argv only asks the launcher about itself (--version, -V, --help, -h, -help, --info):
 * such a run calls no rsh agent and is not watched. */
int agent_rshwatch_informational(char *const *argv);

/* ---- the placement check: ranks on the launcher ----
 * With the watch on, the hostfile does not name the launcher, so an MPI launcher's children there are
 * its launch agents only (measured: orterun 4.1, mpiexec.hydra 4.0 and 4.2 and prterun 3.0 fork the
 * agent and, for a local host, the rank or proxy itself; docs/agent.md "Ranks on the launcher"). */
/* 1 when name (a comm or an executable's path) is a launch agent: mpi-rsh, mpi-rsh-*, ssh, rsh. */
int agent_rshwatch_agent_program(const char *name);
/* 1 when name is a launch agent not ours: ssh, rsh (mpi-rsh hands over to ssh only after its mark). */
int agent_rshwatch_foreign_agent(const char *name);
/* 1 when exe (a process's executable) lies in the lib/ folder beside rsh (our agent's path): the
 * bundle's dynamic loader, which runs mpi-rsh in a user's image (/opt/kube/lib/ld-linux-x86-64.so.2
 * for /opt/kube/mpi-rsh; rsh/mkbundle.sh), its comm then "ld-linux-x86-64". */
int agent_rshwatch_bundle_exe(const char *rsh, const char *exe);
/* The one-line failure for prog (pid) that the launcher of stack st started on the launcher secs
 * after it began: the stack, the process, where its hosts came from and what to change. New string,
 * NULL when out of memory. */
char *agent_rshwatch_local_message(enum agent_stack st, enum mpik8s_mpi mpi, const char *prog, long pid, double secs);

/* ---- the system side (agent/rshwatch_proc.c) ---- */
/* The best stack among the live processes of root and its descendants (their comm and executable),
 * NONE when none is an MPI launcher. Reads /proc. Descendants, not a process group: `timeout 90
 * mpirun` and the stream holder put mpirun in a group of its own. */
enum agent_stack agent_rshwatch_scan(pid_t root);
/* A live child of an MPI launcher among root and its descendants that is neither a launch agent
 * (by name, or run by the bundle's loader beside rsh; with foreign, ssh and rsh are no agents) nor
 * an MPI launcher (a fork not yet exec'd still shows its parent's name): its pid, with its comm in
 * name[0..sz) and its launcher's stack in *st; 0 when none. The launcher is known by its executable
 * (orterun, prte, mpiexec.hydra, ...), not by its comm: a wrapper script named mpirun runs helpers,
 * not ranks. Reads /proc; zombies do not count. */
pid_t agent_rshwatch_local_child(pid_t root, const char *rsh, int foreign, char *name, size_t sz, enum agent_stack *st);
/* A new private directory with the mark's path in it: *dir and *mark new strings. 0 ok, -1 errno. */
int agent_rshwatch_mark_new(char **dir, char **mark);
/* 1 when the mark exists. */
int agent_rshwatch_marked(const char *mark);
/* Removes the mark and its directory; frees both strings. */
void agent_rshwatch_mark_free(char *dir, char *mark);

/* ---- the supervisor's use (agent/rshwatch_run.c) ---- */
struct agent_session;
struct agent_launchwatch {
    struct agent_rshwatch w;
    char *dir, *mark; /* the mark mpi-rsh creates ($MPI_AGENT_RSH_MARK) */
    int done;         /* decided, or off */
    int failed;       /* decided: a launch without mpi-rsh, or a rank on the launcher */
    int placing;      /* mpi-rsh was called: looking for ranks on the launcher until the end */
    pid_t suspect;    /* the last look's process on the launcher (0: none), and its comm: before the
                         first mpi-rsh call, any child no agent of ours; then, a rank */
    char suspect_comm[32];
    int64_t started, last_scan; /* monotonic ms: the command's start, the last look at /proc */
};
/* Before the command starts: off (one log line says why) with --rsh-timeout 0, no workers, a
 * hostfile that names the launcher (it may run ranks itself), an agent variable the user set to
 * their own value, or an informational run; else makes the mark, exports $MPI_AGENT_RSH_MARK and,
 * when argv[0] is an MPI launcher, starts the clock at now. */
void agent_launchwatch_start(struct agent_launchwatch *lw, struct agent_session *s, char *const *argv, int64_t now);
/* One look (root: the command's process, whose descendants are looked at; cmd_done: it has exited,
 * with exit_code, -1 for a signal): the failure message once the verdict is FAIL, or once a rank
 * runs on the launcher (new string; lw->failed set), else NULL. */
char *agent_launchwatch_step(struct agent_launchwatch *lw, struct agent_session *s, pid_t root, int cmd_done, int exit_code,
                             int64_t now);
/* How often to look (ms), -1 when decided and not placing: every 100 ms for the first 20 s after
 * the command started (a launcher that dies in 0.1 s is still seen; placing: 250 ms), then every
 * second (a command that runs no launcher, or runs its ranks, is looked at for as long as it runs). */
int agent_launchwatch_period_ms(const struct agent_launchwatch *lw, int64_t now);
/* Removes the mark and unexports it. */
void agent_launchwatch_end(struct agent_launchwatch *lw);

#endif
