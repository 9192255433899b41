/* main.c - mpi-agent: the launcher-side runtime of an MPIJob. Dispatches to the
 * subcommands: init (the launcher's init container), run (mpirun wrapper),
 * hostfile, discover-hosts, ready (the launcher's readiness probe), status and logs
 * (debugging). Run under the name kubectl-mpijob (a link to it), it is the kubectl plugin
 * (plugin_cli.c). */
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "commands.h"
#include "plugin.h"
#include "kube/exec.h"
#include "kube/log.h"

struct subcommand {
    const char *name;
    int (*fn)(struct agent_opts *o);
    const char *help;
};

static const struct subcommand subcommands[] = {
    { "init", agent_cmd_init,
      "deliver mpi-rsh to /opt/kube, wait (bounded) until the workers are "
      "Ready and reachable" },
    { "run", agent_cmd_run,
      "-- CMD...: wait if needed, set the MPI launch env, supervise CMD "
      "(mpirun) and exit with its code" },
    { "hostfile", agent_cmd_hostfile, "print the job's hostfile for the MPI flavour (--mpi)" },
    { "discover-hosts", agent_cmd_discover_hosts,
      "print the Ready workers for horovodrun "
      "--host-discovery-script" },
    { "status", agent_cmd_status,
      "[-n NS] JOB: workers, reachability and hostfile (exit 0 only "
      "if all reachable)" },
    { "ready", agent_cmd_ready,
      "[--timeout DUR]: the launcher's readiness probe: exit 0 once this run's ranks "
      "started, waiting up to DUR" },
    { "logs", agent_cmd_logs,
      "[-n NS] [-f] JOB: the launcher's output, kept in ConfigMap JOB-log after "
      "its pods are gone (-f: follow a running launcher)" },
};
#define NSUB (sizeof(subcommands) / sizeof(subcommands[0]))

static void usage(FILE *f)
{
    fprintf(f, "usage: mpi-agent COMMAND [options]\n\ncommands:\n");
    for (size_t i = 0; i < NSUB; i++)
        fprintf(f, "  %-15s %s\n", subcommands[i].name, subcommands[i].help);
    fprintf(f, "\ncommon options: -n/--namespace NS, --kubeconfig FILE, --context NAME, -v, --version; "
               "`mpi-agent COMMAND --help` for the rest\n"
               "run as kubectl-mpijob (a link to it), mpi-agent is the kubectl plugin: `kubectl mpijob --help`\n");
}

int main(int argc, char **argv)
{
    const char *base = argc > 0 && argv[0] ? strrchr(argv[0], '/') : NULL;
    base = base ? base + 1 : argc > 0 && argv[0] ? argv[0] : "";
    if (!strcmp(base, PLUGIN_NAME))
        return agent_plugin_main(argc, argv);
    kube_log_set_component("mpi-agent");
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("mpi-agent %s\n", AGENT_VERSION);
        return 0;
    }
    for (size_t i = 0; i < NSUB; i++) {
        if (strcmp(argv[1], subcommands[i].name) != 0)
            continue;
        struct agent_opts o;
        char *errmsg = NULL;
        int rc = agent_opts_parse(&o, argv[1], argc - 1, argv + 1, &errmsg);
        if (rc == 0) {
            kube_log_set_verbosity(o.verbose);
            rc = subcommands[i].fn(&o);
        } else {
            if (rc < 0)
                fprintf(stderr, "mpi-agent %s: %s\n", argv[1], errmsg ? errmsg : "out of memory");
            rc = rc > 0 ? 0 : 2;
        }
        free(errmsg);
        agent_opts_free(&o);
        return rc;
    }
    fprintf(stderr, "mpi-agent: unknown command \"%s\"\n", argv[1]);
    usage(stderr);
    return 2;
}
