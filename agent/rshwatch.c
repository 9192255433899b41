/* rshwatch.c - the launch watch's pure half (agent/rshwatch.h): the stack a name or an output shows,
 * the verdict, the message naming the stack, the variable it did not read and what to set, and the
 * placement check's words (which children of mpirun launch, and the message for a rank that did not). */
#include "rshwatch.h"

#include <stdlib.h>
#include <string.h>

#include "kube/util.h"
#include "mpik8s/launch.h"

static const struct {
    const char *name;
    enum agent_stack st;
} programs[] = {
    { "prterun", AGENT_STACK_OMPI5 },          { "prte", AGENT_STACK_OMPI5 },
    { "orterun", AGENT_STACK_OMPI4 },          { "mpiexec.hydra", AGENT_STACK_HYDRA },
    { "mpiexec.mpich", AGENT_STACK_HYDRA },    { "mpirun.mpich", AGENT_STACK_HYDRA },
    { "mpirun", AGENT_STACK_OPENMPI },         { "mpiexec", AGENT_STACK_OPENMPI },
    { "mpirun.openmpi", AGENT_STACK_OPENMPI }, { "mpiexec.openmpi", AGENT_STACK_OPENMPI },
};

/* The part of a path after its last '/' (the whole name without one; NULL for NULL). */
static const char *base_of(const char *name)
{
    const char *slash = name ? strrchr(name, '/') : NULL;
    return slash ? slash + 1 : name;
}

enum agent_stack agent_stack_of_program(const char *name)
{
    const char *base = base_of(name);
    for (size_t i = 0; base && i < sizeof(programs) / sizeof(programs[0]); i++)
        if (strcmp(base, programs[i].name) == 0)
            return programs[i].st;
    return AGENT_STACK_NONE;
}

int agent_text_holds(const char *text, size_t len, const char *word)
{
    size_t wl = strlen(word);
    if (!text)
        return 0;
    for (size_t i = 0; i + wl <= len; i++)
        if (memcmp(text + i, word, wl) == 0)
            return 1;
    return 0;
}

enum agent_stack agent_stack_of_output(const char *text, size_t len)
{
    if (!text)
        return AGENT_STACK_NONE;
    if (agent_text_holds(text, len, "PRTE") || agent_text_holds(text, len, "prterun") ||
        agent_text_holds(text, len, "prted"))
        return AGENT_STACK_OMPI5;
    if (agent_text_holds(text, len, "ORTE") || agent_text_holds(text, len, "orted"))
        return AGENT_STACK_OMPI4;
    if (agent_text_holds(text, len, "HYDRA") || agent_text_holds(text, len, "hydra") ||
        agent_text_holds(text, len, "HYD_") || agent_text_holds(text, len, "HYDU_") ||
        agent_text_holds(text, len, "[mpiexec@"))
        return AGENT_STACK_HYDRA;
    return AGENT_STACK_NONE;
}

static int rank_of(enum agent_stack s) { return s == AGENT_STACK_NONE ? 0 : s == AGENT_STACK_OPENMPI ? 1 : 2; }

enum agent_stack agent_stack_better(enum agent_stack a, enum agent_stack b) { return rank_of(b) > rank_of(a) ? b : a; }

enum agent_rshwatch_verdict agent_rshwatch_decide(const struct agent_rshwatch *w, int64_t now, int cmd_done)
{
    if (w->bound_ms <= 0 || w->rsh_called)
        return AGENT_RSHWATCH_OK;
    if (!w->launcher_at)
        return cmd_done ? AGENT_RSHWATCH_OK : AGENT_RSHWATCH_WAIT;
    if (cmd_done || w->other || now - w->launcher_at >= w->bound_ms)
        return AGENT_RSHWATCH_FAIL;
    return AGENT_RSHWATCH_WAIT;
}

int agent_rshwatch_informational(char *const *argv)
{
    static const char *const info[] = { "--version", "-V", "--help", "-h", "-help", "--info" };
    for (size_t i = 1; argv && argv[0] && argv[i]; i++)
        for (size_t j = 0; j < sizeof(info) / sizeof(info[0]); j++)
            if (strcmp(argv[i], info[j]) == 0)
                return 1;
    return 0;
}

int agent_rshwatch_ended_badly(int exit_code, const char *out, size_t len)
{
    return exit_code == 0 || agent_text_holds(out, len, "ssh") || agent_text_holds(out, len, "rsh") ||
           agent_text_holds(out, len, "daemon");
}

/* "NAME ('value')", "NAME (not set)" or "NAME ('value', set instead of 'ours')". New string. */
static char *var_phrase(const char *name, const char *ours, agent_rshwatch_getenv get, void *ud)
{
    const char *cur = get(name, ud);
    if (!cur)
        return kube_strdup_printf("%s (not set)", name);
    if (strcmp(cur, ours) == 0)
        return kube_strdup_printf("%s ('%s')", name, cur);
    return kube_strdup_printf("%s ('%s', set instead of '%s')", name, cur, ours);
}

/* The stack's words and its two variables (the second NULL for Open MPI 4 or 5 alone). */
struct stack_words {
    const char *what, *var1, *val1, *var2, *val2;
};

static struct stack_words words_of(enum agent_stack st, enum mpik8s_mpi mpi, const char *agent, const char *rsh)
{
    int intel = mpi == MPIK8S_MPI_INTEL;
    if (st == AGENT_STACK_HYDRA || (st != AGENT_STACK_OMPI4 && st != AGENT_STACK_OMPI5 && mpi != MPIK8S_MPI_OPENMPI))
        return (struct stack_words){ intel ? "Intel MPI (Hydra)" : "MPICH (Hydra)",
                                     intel ? MPIK8S_INTEL_LAUNCHER_VAR : MPIK8S_MPICH_LAUNCHER_VAR, "rsh",
                                     intel ? MPIK8S_INTEL_AGENT_VAR : MPIK8S_MPICH_AGENT_VAR, rsh };
    if (st == AGENT_STACK_OMPI5)
        return (struct stack_words){ "Open MPI 5 (PRRTE)", MPIK8S_OMPI5_AGENT_VAR, agent, NULL, NULL };
    if (st == AGENT_STACK_OMPI4)
        return (struct stack_words){ "Open MPI 4 (ORTE)", MPIK8S_OMPI4_AGENT_VAR, agent, NULL, NULL };
    return (struct stack_words){ "Open MPI (version not seen: 4 reads the first, 5 the second)", MPIK8S_OMPI4_AGENT_VAR,
                                 agent, MPIK8S_OMPI5_AGENT_VAR, agent };
}

/* How it went without rsh: "and exited after 0.1 s", "but started 'ssh' (pid 9) itself 0.2 s after it
 * began", "nor any other process within 120.0 s (it may be stuck before its launch, e.g. resolving
 * the hosts' names), or". New string. */
static char *how_phrase(const char *rsh, double secs, const struct agent_rshwatch_how *how)
{
    if (how->ended)
        return kube_strdup_printf("through %s and exited after %.1f s:", rsh, secs);
    if (how->prog)
        return kube_strdup_printf("through %s but started '%s' (pid %ld) itself %.1f s after it began:", rsh, how->prog,
                                  how->pid, secs);
    return kube_strdup_printf("through %s, nor any other process, within %.1f s: it may be stuck before its launch "
                              "(resolving the hosts' names, say), or",
                              rsh, secs);
}

char *agent_rshwatch_message(enum agent_stack st, enum mpik8s_mpi mpi, const char *rsh, double secs,
                             const struct agent_rshwatch_how *how, agent_rshwatch_getenv get, void *ud)
{
    char *agent = kube_strdup_printf("%s : false", rsh); /* Open MPI's value (mpik8s/launch.c) */
    if (!agent)
        return NULL;
    struct stack_words w = words_of(st, mpi, agent, rsh);
    char *p1 = var_phrase(w.var1, w.val1, get, ud), *p2 = w.var2 ? var_phrase(w.var2, w.val2, get, ud) : NULL;
    char *set = w.var2 ? kube_strdup_printf("%s='%s' and %s='%s'", w.var1, w.val1, w.var2, w.val2)
                       : kube_strdup_printf("%s='%s'", w.var1, w.val1);
    char *msg = NULL, *hp = how_phrase(rsh, secs, how);
    if (p1 && (p2 || !w.var2) && set && hp)
        msg = kube_strdup_printf("%s started no daemon %s it did not read %s%s%s; set %s "
                                 "in the launcher's environment (without it the ranks start through the "
                                 "stack's own ssh, or all on the launcher)",
                                 w.what, hp, p1, p2 ? " or " : "", p2 ? p2 : "", set);
    free(hp);
    free(p1);
    free(p2);
    free(set);
    free(agent);
    return msg;
}

int agent_rshwatch_agent_program(const char *name)
{
    const char *base = base_of(name);
    if (!base)
        return 0;
    /* mpi-rsh, and its siblings mpi-rsh-thin and mpi-rsh-ssh */
    return strcmp(base, "ssh") == 0 || strcmp(base, "rsh") == 0 || strcmp(base, "mpi-rsh") == 0 ||
           (strncmp(base, "mpi-rsh-", 8) == 0 && base[8]);
}

int agent_rshwatch_foreign_agent(const char *name)
{
    const char *base = base_of(name);
    return base && (strcmp(base, "ssh") == 0 || strcmp(base, "rsh") == 0);
}

int agent_rshwatch_bundle_exe(const char *rsh, const char *exe)
{
    const char *slash = rsh ? strrchr(rsh, '/') : NULL;
    if (!slash || !exe)
        return 0;
    size_t d = (size_t)(slash - rsh);
    return strncmp(exe, rsh, d) == 0 && strncmp(exe + d, "/lib/", 5) == 0 && exe[d + 5];
}

char *agent_rshwatch_local_message(enum agent_stack st, enum mpik8s_mpi mpi, const char *prog, long pid, double secs)
{
    struct stack_words w = words_of(st, mpi, "", "");
    int generic = st != AGENT_STACK_OMPI4 && st != AGENT_STACK_OMPI5 && st != AGENT_STACK_HYDRA &&
                  mpi == MPIK8S_MPI_OPENMPI; /* Open MPI, its version not seen */
    const char *what = generic ? "Open MPI" : w.what;
    return kube_strdup_printf("%s started '%s' (pid %ld) on the launcher %.1f s after it began, though the "
                              "hostfile does not name the launcher: its ranks belong on the workers, so its hosts "
                              "came from elsewhere (the command's --host/-H or a hostfile of its own, or "
                              "localhost); drop those to use the job's hostfile, or set runLauncherAsWorker: "
                              "true for ranks on the launcher",
                              what, prog, pid, secs);
}
