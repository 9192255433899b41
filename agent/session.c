/* session.c - connecting to the API server (config, client, namespace) and
 * starting the informer over the job's pods that the wait, the supervisor and
 * status read from. */
#include "session.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/config.h"
#include "kube/log.h"
#include "kube/resource.h"
#include "kube/util.h"

/* 1 when the job can run without the API: SSH transport and a readable hostfile. */
static int no_api_possible(const struct agent_session *s)
{
    const struct agent_opts *o = s->o;
    return s->allow_no_api && o->transport == MPIK8S_TRANSPORT_SSH && o->hostfile && access(o->hostfile, R_OK) == 0;
}

/* Switches s to the no-API mode (drops the client), logging why. 0, or -1 with *errmsg when
 * the job needs the API (exec transport, no hostfile). */
static int go_no_api(struct agent_session *s, const char *why, char **errmsg)
{
    if (!no_api_possible(s))
        return kube_set_err(errmsg, "%s (the no-API mode needs the ssh transport and a hostfile at %s)", why,
                            s->o->hostfile ? s->o->hostfile : "(none)");
    kube_client_free(s->client);
    s->client = NULL;
    s->no_api = 1;
    KLOG_INFO("no API access (%s): no-API mode: workers from %s, checked through ssh only, no pod "
              "watch or IP map",
              why, s->o->hostfile);
    return 0;
}

/* A first list of the job's pods: 401/403 select the no-API mode; other errors are left to
 * the calls that follow (they retry and name them). 0 ok, -1 with *errmsg. */
static int probe_api(struct agent_session *s, char **errmsg)
{
    char *sel = agent_job_selector(s);
    struct kube_list_opts lo = { .label_selector = sel, .limit = 1 };
    struct kube_error ke = KUBE_ERROR_INIT;
    json_t *list = kube_list(s->client, &KUBE_RES_PODS, s->ns, &lo, &ke);
    free(sel);
    int rc = 0;
    if (!list && (ke.reason == KUBE_FORBIDDEN || ke.reason == KUBE_UNAUTHORIZED)) {
        char *why = kube_strdup_printf("listing pods in namespace %s: %s", s->ns,
                                       ke.message ? ke.message : kube_reason_name(ke.reason));
        rc = go_no_api(s, why ? why : "listing pods refused", errmsg);
        free(why);
    }
    json_decref(list);
    kube_error_clear(&ke);
    return rc;
}

/* The namespace: --namespace, the client's, else "default". 0 ok, -1 with *errmsg. */
static int settle_namespace(struct agent_session *s, char **errmsg)
{
    const char *ns = s->o->namespace ? s->o->namespace : s->client ? kube_client_namespace(s->client) : NULL;
    s->ns = strdup(ns ? ns : "default");
    if (!s->ns)
        return kube_set_err(errmsg, "out of memory");
    return 0;
}

int agent_session_connect(struct agent_session *s, struct agent_opts *o, char **errmsg)
{
    struct kube_config *cfg = NULL;
    char *cerr = NULL;
    s->o = o;
    if (kube_config_load(o->kubeconfig, o->context, &cfg, &cerr) < 0) {
        char *why = kube_strdup_printf("kubernetes config: %s", cerr ? cerr : "unknown error");
        free(cerr);
        int rc = no_api_possible(s) && !o->kubeconfig && settle_namespace(s, errmsg) == 0
                     ? go_no_api(s, why ? why : "no kubernetes config", errmsg)
                     : -1;
        if (rc < 0 && !(errmsg && *errmsg))
            kube_set_err(errmsg, "%s", why ? why : "kubernetes config: unknown error");
        free(why);
        return rc;
    }
    struct kube_client_opts co;
    kube_client_opts_default(&co);
    co.user_agent = "mpi-agent/" AGENT_VERSION;
    co.request_timeout_ms = 15000;
    s->client = kube_client_new(cfg, &co, &cerr);
    if (!s->client) {
        kube_set_err(errmsg, "kubernetes client: %s", cerr ? cerr : "unknown error");
        free(cerr);
        return -1;
    }
    if (settle_namespace(s, errmsg) < 0)
        return -1;
    KLOG_DEBUG("API server %s (%s), namespace %s", kube_client_config(s->client)->server,
               kube_client_config(s->client)->origin, s->ns);
    return s->allow_no_api ? probe_api(s, errmsg) : 0;
}

char *agent_job_selector(const struct agent_session *s)
{
    if (!s->o->job)
        return NULL;
    return kube_strdup_printf(MPIK8S_LABEL_JOB_NAME "=%s", s->o->job);
}

int agent_watch_start(struct agent_session *s, char **errmsg)
{
    if (s->inf)
        return 0;
    if (!s->client)
        return kube_set_err(errmsg, "pod watch: no API access (no-API mode)");
    char *sel = agent_job_selector(s);
    struct kube_informer_opts io = { .ns = s->ns, .label_selector = sel, .watch_timeout_s = 60 };
    char *ierr = NULL;
    s->inf = kube_informer_new(s->client, &KUBE_RES_PODS, &io, NULL, &ierr);
    free(sel);
    if (!s->inf || kube_informer_start(s->inf, &ierr) < 0) {
        kube_set_err(errmsg, "pod watch: %s", ierr ? ierr : "cannot start");
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
    agent_outbuf_free(&s->output);
    json_decref(s->failure);
    s->failure = NULL;
    free(s->ns);
    s->ns = NULL;
    free(s->rsh);
    s->rsh = NULL;
    free(s->user_rsh_var);
    s->user_rsh_var = NULL;
}
