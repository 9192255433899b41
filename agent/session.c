/* session.c - connecting to the API server (config, client, namespace) and
 * starting the informer over the job's pods that the wait, the supervisor and
 * status read from. */
#include "session.h"

#include <stdlib.h>
#include <string.h>

#include "kube/config.h"
#include "kube/log.h"
#include "kube/resource.h"
#include "kube/util.h"

int agent_session_connect(struct agent_session *s, struct agent_opts *o, char **err)
{
    struct kube_config *cfg = NULL;
    char *cerr = NULL;
    s->o = o;
    if (kube_config_load(o->kubeconfig, NULL, &cfg, &cerr) < 0) {
        kube_set_err(err, "kubernetes config: %s", cerr ? cerr : "unknown error");
        free(cerr);
        return -1;
    }
    struct kube_client_opts co;
    kube_client_opts_default(&co);
    co.user_agent = "mpi-agent/" AGENT_VERSION;
    co.request_timeout_ms = 15000;
    s->client = kube_client_new(cfg, &co, &cerr);
    if (!s->client) {
        kube_set_err(err, "kubernetes client: %s", cerr ? cerr : "unknown error");
        free(cerr);
        return -1;
    }
    const char *ns = o->namespace ? o->namespace : kube_client_namespace(s->client);
    s->ns = strdup(ns ? ns : "default");
    if (!s->ns) {
        kube_set_err(err, "out of memory");
        return -1;
    }
    KLOG_DEBUG("API server %s (%s), namespace %s", kube_client_config(s->client)->server,
               kube_client_config(s->client)->origin, s->ns);
    return 0;
}

char *agent_job_selector(const struct agent_session *s)
{
    if (!s->o->job)
        return NULL;
    return kube_strdup_printf(MPIK8S_LABEL_JOB_NAME "=%s", s->o->job);
}

int agent_watch_start(struct agent_session *s, char **err)
{
    if (s->inf)
        return 0;
    char *sel = agent_job_selector(s);
    struct kube_informer_opts io = { .ns = s->ns, .label_selector = sel, .watch_timeout_s = 60 };
    char *ierr = NULL;
    s->inf = kube_informer_new(s->client, &KUBE_RES_PODS, &io, NULL, &ierr);
    free(sel);
    if (!s->inf || kube_informer_start(s->inf, &ierr) < 0) {
        kube_set_err(err, "pod watch: %s", ierr ? ierr : "cannot start");
        free(ierr);
        return -1;
    }
    return 0;
}

void agent_session_close(struct agent_session *s)
{
    kube_informer_free(s->inf);
    s->inf = NULL;
    kube_client_free(s->client);
    s->client = NULL;
    agent_hostlist_free(&s->hosts);
    free(s->ns);
    s->ns = NULL;
}
