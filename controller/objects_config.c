/* objects_config.c - the ConfigMap <job>-config: the hostfile in the job's MPI
 * flavour's format and discover_hosts.sh (Horovod elastic host discovery). */
#include "objects.h"
#include "jsonutil.h"

#include <stdio.h>
#include <stdlib.h>

/* Writes the host name of worker i (i < 0: the launcher), names from the name helpers; sets
 * *oom when one cannot be made. */
static void put_host(FILE *f, const struct mpijob *j, const struct build_opts *o, long long i, int *oom)
{
    char *host = i < 0 ? name_launcher(j) : name_worker(j, i);
    char *svc = mpijob_fqdn_hosts(j) ? name_service(j) : NULL;
    if (!host || (mpijob_fqdn_hosts(j) && !svc))
        *oom = 1;
    else
        fputs(host, f);
    if (svc) {
        fprintf(f, ".%s.%s.svc", svc, j->ns);
        if (o->cluster_domain && *o->cluster_domain)
            fprintf(f, ".%s", o->cluster_domain);
    }
    free(host);
    free(svc);
}

static void put_line(FILE *f, const struct mpijob *j, const struct build_opts *o, long long i, int *oom)
{
    put_host(f, j, o, i, oom);
    if (j->impl == MPI_IMPL_OPENMPI)
        fprintf(f, " slots=%lld\n", j->slots_per_worker);
    else
        fprintf(f, ":%lld\n", j->slots_per_worker);
}

/* fclose sets *buf (open_memstream), so it is read only afterwards; NULL when oom. */
static char *close_stream(FILE *f, char **buf, int oom)
{
    if (fclose(f) != 0 || oom) {
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
    int oom = 0;
    if (j->run_launcher_as_worker)
        put_line(f, j, o, -1, &oom);
    for (long long i = 0; i < j->worker.replicas && !oom; i++)
        put_line(f, j, o, i, &oom);
    return close_stream(f, &buf, oom);
}

char *obj_discover_hosts(const struct mpijob *j, const struct build_opts *o, const unsigned char *running)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    int oom = 0;
    fputs("#!/bin/sh\n", f);
    if (j->run_launcher_as_worker) {
        fputs("echo ", f);
        put_host(f, j, o, -1, &oom);
        fprintf(f, ":%lld\n", j->slots_per_worker);
    }
    for (long long i = 0; running && i < j->worker.replicas; i++) {
        if (!running[i])
            continue;
        fputs("echo ", f);
        put_host(f, j, o, i, &oom);
        fprintf(f, ":%lld\n", j->slots_per_worker);
    }
    return close_stream(f, &buf, oom);
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
