/* preemptor.c - the preemptor of a worker pod, from the scheduler's Preempted
 * Event (its related object, else the UID in its message resolved through a pod
 * list of the namespace), read with a bounded wait. */
#include "preemptor.h"

#include <stdlib.h>
#include <string.h>

#include "kube/client.h"
#include "kube/json.h"
#include "kube/log.h"
#include "kube/poddisrupt.h"
#include "kube/url.h"
#include "kube/util.h"

#define POLL_MS 500

/* One list of the Preempted Events on pod; 0 done (*by may be NULL), -1 API error (logged). */
static int look(struct agent_session *s, const json_t *pod, char **by, char **uid)
{
    const char *name = kube_obj_name(pod);
    char *sel = kube_strdup_printf("involvedObject.name=%s,reason=" KUBE_EVENT_PREEMPTED, name ? name : "");
    struct kube_list_opts lo = { 0 };
    lo.field_selector = sel;
    struct kube_error e = KUBE_ERROR_INIT;
    json_t *l = sel ? kube_list(s->client, &KUBE_RES_EVENTS, s->ns, &lo, &e) : NULL;
    free(sel);
    if (!l) {
        KLOG_WARN("worker %s was preempted; cannot read its Events to name the preemptor: %s", name ? name : "?",
                  e.message ? e.message : "out of memory");
        kube_error_clear(&e);
        return -1;
    }
    free(*uid);
    *by = kube_preemptor_from_events(l, pod, uid);
    json_decref(l);
    return 0;
}

/* "ns/name" of the pod with uid in s->ns, else "pod <UID>"; new string. */
static char *resolve_uid(struct agent_session *s, const char *uid)
{
    struct kube_list_opts lo = { 0 };
    struct kube_error e = KUBE_ERROR_INIT;
    json_t *l = kube_list_all(s->client, &KUBE_RES_PODS, s->ns, &lo, &e);
    char *by = l ? kube_pod_name_by_uid(l, uid) : NULL;
    if (!l)
        KLOG_WARN("cannot list pods to find the preemptor %s: %s", uid, e.message ? e.message : "out of memory");
    json_decref(l);
    kube_error_clear(&e);
    return by ? by : kube_strdup_printf("pod %s", uid);
}

char *agent_preemptor_find(struct agent_session *s, const json_t *pod, int wait_ms)
{
    if (!s->client || !pod)
        return NULL;
    int64_t until = kube_now_ms() + wait_ms;
    char *by = NULL, *uid = NULL;
    for (;;) {
        int rc = look(s, pod, &by, &uid);
        if (by || uid || rc < 0 || kube_now_ms() >= until)
            break; /* found, named by UID, refused (RBAC: no point asking again), or out of time */
        kube_sleep_ms(POLL_MS);
    }
    if (!by && uid)
        by = resolve_uid(s, uid);
    if (!by && kube_now_ms() >= until)
        KLOG_WARN("worker %s was preempted; no Preempted Event on it within %.1f s: the preemptor stays unnamed",
                  kube_obj_name(pod) ? kube_obj_name(pod) : "?", wait_ms / 1000.0);
    free(uid);
    return by;
}
