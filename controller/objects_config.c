/* objects_config.c - the ConfigMap <job>-config: the hostfile in the job's MPI
 * flavour's format and discover_hosts.sh (Horovod elastic host discovery). */
#include "objects.h"
#include "kube/json.h"
#include "kube/util.h"

#include <stdio.h>
#include <stdlib.h>

/* Writes the host name of worker i (i < 0: the launcher). */
static void put_host(FILE *f, const struct mpijob *j, const struct build_opts *o, long long i)
{
    if (i < 0)
        fprintf(f, "%s-launcher", j->name);
    else
        fprintf(f, "%s-worker-%lld", j->name, i);
    if (mpijob_fqdn_hosts(j)) {
        fprintf(f, ".%s%s.%s.svc", j->name, MPIJOB_SERVICE_SUFFIX(j->version == MPIJOB_V1ALPHA2), j->ns);
        if (o->cluster_domain && *o->cluster_domain)
            fprintf(f, ".%s", o->cluster_domain);
    }
}

static void put_line(FILE *f, const struct mpijob *j, const struct build_opts *o, long long i)
{
    put_host(f, j, o, i);
    if (j->impl == MPI_IMPL_OPENMPI)
        fprintf(f, " slots=%lld\n", j->slots_per_worker);
    else
        fprintf(f, ":%lld\n", j->slots_per_worker);
}

/* fclose sets *buf (open_memstream), so it is read only afterwards. */
static char *close_stream(FILE *f, char **buf)
{
    if (fclose(f) != 0) {
        free(*buf);
        return NULL;
    }
    return *buf;
}

char *obj_hostfile(const struct mpijob *j, const struct build_opts *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    if (j->run_launcher_as_worker)
        put_line(f, j, o, -1);
    for (long long i = 0; i < j->worker.replicas; i++)
        put_line(f, j, o, i);
    return close_stream(f, &buf);
}

char *obj_discover_hosts(const struct mpijob *j, const struct build_opts *o, const unsigned char *running)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    fputs("#!/bin/sh\n", f);
    if (j->run_launcher_as_worker) {
        fputs("echo ", f);
        put_host(f, j, o, -1);
        fprintf(f, ":%lld\n", j->slots_per_worker);
    }
    for (long long i = 0; running && i < j->worker.replicas; i++) {
        if (!running[i])
            continue;
        fputs("echo ", f);
        put_host(f, j, o, i);
        fprintf(f, ":%lld\n", j->slots_per_worker);
    }
    return close_stream(f, &buf);
}

json_t *obj_configmap(const struct mpijob *j, const struct build_opts *o, const unsigned char *running)
{
    char *name = name_config(j);
    char *hf = obj_hostfile(j, o);
    char *dh = obj_discover_hosts(j, o, running);
    json_t *cm = NULL;
    if (name && hf && dh)
        cm = json_pack("{s:s, s:s, s:o, s:{s:s, s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                       "metadata", obj_meta(j, name), "data", "hostfile", hf, "discover_hosts.sh", dh);
    free(name);
    free(hf);
    free(dh);
    return cm;
}
