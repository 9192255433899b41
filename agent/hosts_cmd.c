/* hosts_cmd.c - `mpi-agent hostfile` (the job's hostfile in the flavour's
 * syntax) and `mpi-agent discover-hosts` (the Ready workers, one per line, as
 * horovodrun --host-discovery-script expects, for elastic jobs). */
#include "commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "podstate.h"
#include "kube/json.h"
#include "kube/util.h"

int agent_cmd_hostfile(struct agent_opts *o)
{
    struct agent_session s = { 0 };
    s.o = o;
    char *err = NULL;
    int rc = 1;
    int need_api = !(o->hostfile_given || access(o->hostfile, F_OK) == 0) && !(o->job && o->workers > 0 && o->namespace);
    if (need_api && agent_session_connect(&s, o, &err) < 0)
        goto out;
    if (!need_api) {
        s.ns = strdup(o->namespace ? o->namespace : "default");
        if (!s.ns)
            goto out;
    }
    if (agent_workers_find(&s, &err) < 0)
        goto out;
    char *text = agent_hostfile_format(&s.hosts, o->mpi, o->slots);
    if (text) {
        fputs(text, stdout);
        rc = fflush(stdout) == 0 ? 0 : 1;
    }
    free(text);
out:
    if (rc)
        fprintf(stderr, "mpi-agent hostfile: %s\n", err ? err : "failed");
    free(err);
    agent_session_close(&s);
    return rc;
}

int agent_cmd_discover_hosts(struct agent_opts *o)
{
    struct agent_session s = { 0 };
    char *err = NULL;
    int rc = 1;
    if (!o->job) {
        fprintf(stderr, "mpi-agent discover-hosts: no job name (MPI_JOB_NAME or --job)\n");
        return 2;
    }
    if (agent_session_connect(&s, o, &err) < 0)
        goto out;
    json_t *pods = agent_list_worker_pods(&s, &err);
    if (!pods)
        goto out;
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p) {
        struct agent_pod_view v;
        if (agent_pod_assess(p, &v) < 0)
            continue;
        if (v.verdict == AGENT_POD_READY) {
            const char *sub = kube_json_at_str(p, "spec", "subdomain");
            const char *name = kube_obj_name(p);
            if (sub && *sub)
                printf("%s.%s.%s.svc", name, sub, s.ns);
            else
                printf("%s", name);
            if (o->slots > 0)
                printf(":%d", o->slots);
            putchar('\n');
        }
        agent_pod_view_free(&v);
    }
    json_decref(pods);
    rc = fflush(stdout) == 0 ? 0 : 1;
out:
    if (rc)
        fprintf(stderr, "mpi-agent discover-hosts: %s\n", err ? err : "failed");
    free(err);
    agent_session_close(&s);
    return rc;
}
