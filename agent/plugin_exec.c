/* plugin_exec.c - `kubectl mpijob exec JOB --worker I -- CMD` (CMD in worker I's container over
 * the exec API, its exit code returned) and `kubectl mpijob hostfile JOB` (the hostfile the agent
 * makes for the job's workers, in the job's MPI flavour and slots). */
#include "plugin.h"

#include <stdlib.h>
#include <string.h>

#include "kube/exec.h"
#include "kube/json.h"
#include "kube/util.h"
#include "mpik8s/util.h"

/* The words of argv, each shell-quoted, joined by spaces (new string), or NULL. */
static char *shell_line(char **argv, int argc)
{
    char *line = strdup("");
    for (int i = 0; line && i < argc; i++) {
        char *q = mpik8s_sh_quote(argv[i]);
        char *next = q ? kube_strdup_printf("%s%s%s", line, i ? " " : "", q) : NULL;
        free(q);
        free(line);
        line = next;
    }
    return line;
}

int plugin_exec(struct agent_session *s, const struct plugin_opts *po)
{
    if (po->nargs != 1 || po->worker < 0 || po->ncmd < 1)
        return plugin_error("exec: expected JOB --worker I -- CMD [ARGS...] (see kubectl mpijob exec --help)");
    json_t *job = plugin_get_job(s, po->args[0]);
    if (!job)
        return 1;
    long long n = kube_json_at_int(job, 0, "spec", "mpiReplicaSpecs", "Worker", "replicas");
    const char *ctr = kube_json_at_str(
        json_array_get(kube_json_at(job, "spec", "mpiReplicaSpecs", "Worker", "template", "spec", "containers"), 0), "name");
    char *pod = kube_strdup_printf("%s-worker-%ld", po->args[0], po->worker);
    char *line = shell_line(po->cmd, po->ncmd);
    int rc = 1;
    if (po->worker >= n) {
        plugin_error("exec: --worker %ld: MPIJob %s/%s has %lld worker(s) (0-%lld)", po->worker, s->ns, po->args[0], n,
                     n - 1);
    } else if (!pod || !line) {
        plugin_error("out of memory");
    } else {
        struct kube_exec_opts eo;
        struct kube_exec_result r = { 0 };
        kube_exec_opts_default(&eo);
        eo.namespace = s->ns;
        eo.pod = pod;
        eo.container = ctr;
        eo.command = line;
        eo.fd_in = -1;
        eo.user_agent = PLUGIN_NAME "/" AGENT_VERSION;
        if (kube_exec_run(kube_client_config(s->client), &eo, &r) == 0)
            rc = r.exit_code;
        else
            plugin_error("exec in pod %s/%s: %s", s->ns, pod, r.message ? r.message : "failed");
        kube_exec_result_free(&r);
    }
    free(line);
    free(pod);
    json_decref(job);
    return rc;
}

int plugin_hostfile(struct agent_session *s, const struct plugin_opts *po)
{
    json_t *job = plugin_one_job(s, po);
    if (!job)
        return 1;
    struct agent_opts *o = s->o;
    const char *impl = kube_json_at_str(job, "spec", "mpiImplementation");
    o->mpi = MPIK8S_MPI_OPENMPI;
    if (impl)
        mpik8s_mpi_parse(impl, &o->mpi);
    o->slots = (int)kube_json_at_int(job, 1, "spec", "slotsPerWorker");
    free(o->job);
    o->job = strdup(po->args[0]);
    char *err = NULL, *text = NULL;
    int rc = 1;
    if (!o->job)
        plugin_error("out of memory");
    else if (agent_workers_find(s, &err) < 0)
        plugin_error("MPIJob %s/%s: %s", s->ns, po->args[0], err ? err : "no workers");
    else if (!(text = agent_hostfile_format(&s->hosts, o->mpi, o->slots)))
        plugin_error("out of memory");
    else
        rc = fputs(text, stdout) < 0 || fflush(stdout) != 0;
    free(text);
    free(err);
    json_decref(job);
    return rc;
}
