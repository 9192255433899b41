/* objects_config.c - the ConfigMap <job>-config: the hostfile in the job's MPI
 * flavour's format and discover_hosts.sh (Horovod elastic host discovery). */
#include "objects.h"
#include "kube/json.h"
#include "kube/util.h"

#include <stdio.h>
#include <stdlib.h>

/* The host name of worker i (i < 0: the launcher), from the name helpers; new string or NULL.
 * The launcher's line (runLauncherAsWorker) is its own hostname, short: only the launcher's
 * mpirun reads it, and an MPI knows a host for its own by that name. Under the FQDN, Open MPI 5's
 * PRRTE took the launcher for a remote node and launched a daemon into it through mpi-rsh (whose
 * Role may exec into the workers only): every such job failed (tests/k8s/cases/openmpi5_exec.sh). */
static char *host_name(const struct mpijob *j, const struct build_opts *o, long long i)
{
    char *pod = i < 0 ? objects_name_launcher(j) : objects_name_worker(j, i);
    if (!pod || !mpijob_fqdn_hosts(j) || i < 0)
        return pod;
    char *svc = objects_name_service(j);
    int dom = o->cluster_domain && *o->cluster_domain;
    char *h =
        svc ? kube_strdup_printf("%s.%s.%s.svc%s%s", pod, svc, j->ns, dom ? "." : "", dom ? o->cluster_domain : "") : NULL;
    free(pod);
    free(svc);
    return h;
}

/* Writes worker i's line in the shared hostfile syntax (mpik8s_hostfile_line) or, for
 * discover_hosts.sh, as "echo host:N". -1 on allocation failure. */
static int put_line(FILE *f, const struct mpijob *j, const struct build_opts *o, long long i, int echo)
{
    char *h = host_name(j, o, i);
    if (!h)
        return -1;
    enum mpik8s_hostfile_syntax syn = echo ? MPIK8S_HOSTFILE_COLON : mpik8s_hostfile_syntax_for(j->impl);
    if (echo)
        fputs("echo ", f);
    mpik8s_hostfile_line(f, syn, h, j->slots_per_worker);
    free(h);
    return 0;
}

/* fclose sets *buf (open_memstream), so it is read only afterwards; failed: a put_line ran
 * out of memory. */
static char *close_stream(FILE *f, char **buf, int failed)
{
    if (fclose(f) != 0 || failed) {
        free(*buf);
        return NULL;
    }
    return *buf;
}

char *objects_hostfile(const struct mpijob *j, const struct build_opts *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    int failed = 0;
    if (j->run_launcher_as_worker)
        failed |= put_line(f, j, o, -1, 0);
    for (long long i = 0; i < j->worker.replicas && !failed; i++)
        failed |= put_line(f, j, o, i, 0);
    return close_stream(f, &buf, failed);
}

char *objects_discover_hosts(const struct mpijob *j, const struct build_opts *o, const unsigned char *running)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    fputs("#!/bin/sh\n", f);
    int failed = 0;
    if (j->run_launcher_as_worker)
        failed |= put_line(f, j, o, -1, 1);
    for (long long i = 0; running && i < j->worker.replicas && !failed; i++)
        if (running[i])
            failed |= put_line(f, j, o, i, 1);
    return close_stream(f, &buf, failed);
}

json_t *objects_configmap(const struct mpijob *j, const struct build_opts *o, const unsigned char *running)
{
    char *name = objects_name_config(j);
    char *hf = objects_hostfile(j, o);
    char *dh = objects_discover_hosts(j, o, running);
    json_t *cm = NULL;
    if (name && hf && dh)
        cm = json_pack("{s:s, s:s, s:o, s:{s:s, s:s}}", "apiVersion", "v1", "kind", "ConfigMap", "metadata",
                       objects_meta(j, name), "data", "hostfile", hf, "discover_hosts.sh", dh);
    free(name);
    free(hf);
    free(dh);
    return cm;
}
