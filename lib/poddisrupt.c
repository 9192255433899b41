/* poddisrupt.c - a pod's DisruptionTarget condition in words, and the preemptor of a
 * preempted pod from the scheduler's Preempted Event (kube/poddisrupt.h). */
#include "kube/poddisrupt.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/rfc3339.h"
#include "kube/str.h"

/* What each DisruptionTarget reason means, said for a user who did not see it happen. */
static const struct {
    const char *reason;
    const char *words;
} disruptions[] = {
    { KUBE_DISRUPT_PREEMPTION, "preempted by the scheduler for a higher-priority pod" },
    { KUBE_DISRUPT_EVICTION_API, "evicted through the Eviction API (a drain, a descheduler or kubectl evict)" },
    { KUBE_DISRUPT_TAINT_MANAGER, "deleted by the taint manager (a NoExecute taint on its node it does not tolerate)" },
    { KUBE_DISRUPT_KUBELET, "terminated by the kubelet (node-pressure eviction or node shutdown)" },
    { KUBE_DISRUPT_POD_GC, "deleted by the pod garbage collector (its node is gone or out of service)" },
};

const json_t *kube_pod_disruption_cond(const json_t *pod)
{
    const json_t *c = kube_json_find(kube_json_at(pod, "status", "conditions"), "type", "DisruptionTarget");
    const char *st = kube_json_at_str(c, "status");
    return st && strcmp(st, "True") == 0 ? c : NULL;
}

int kube_pod_preempted(const json_t *pod)
{
    const char *r = kube_json_at_str(kube_pod_disruption_cond(pod), "reason");
    return r && strcmp(r, KUBE_DISRUPT_PREEMPTION) == 0;
}

char *kube_pod_disruption_text(const json_t *pod, const char *by)
{
    const json_t *c = kube_pod_disruption_cond(pod);
    if (!c)
        return NULL;
    const char *r = kube_json_at_str(c, "reason"), *m = kube_json_at_str(c, "message");
    const char *words = "disrupted";
    for (size_t i = 0; r && i < sizeof disruptions / sizeof disruptions[0]; i++)
        if (strcmp(r, disruptions[i].reason) == 0)
            words = disruptions[i].words;
    if (by && r && strcmp(r, KUBE_DISRUPT_PREEMPTION) == 0)
        return kube_strdup_printf("preempted by %s (DisruptionTarget %s%s%s)", by, r, m ? ": " : "", m ? m : "");
    return kube_strdup_printf("%s (DisruptionTarget %s%s%s)", words, r ? r : "with no reason", m ? ": " : "", m ? m : "");
}

/* An Event's time in ms: eventTime (events.k8s.io), else lastTimestamp, else creation; 0 unknown. */
static int64_t event_ms(const json_t *e)
{
    static const char *const keys[] = { "eventTime", "lastTimestamp", "firstTimestamp" };
    int64_t t;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (kube_time_parse_ms(kube_json_at_str(e, keys[i]), &t) == 0)
            return t;
    if (kube_time_parse_ms(kube_json_at_str(e, "metadata", "creationTimestamp"), &t) == 0)
        return t;
    return 0;
}

/* 1 when Event e is a Preempted Event about victim (by uid; by name when either has none). */
static int about(const json_t *e, const json_t *victim)
{
    const char *r = kube_json_at_str(e, "reason");
    if (!r || strcmp(r, KUBE_EVENT_PREEMPTED) != 0)
        return 0;
    const char *eu = kube_json_at_str(e, "involvedObject", "uid"), *vu = kube_obj_uid(victim);
    if (eu && vu)
        return strcmp(eu, vu) == 0;
    const char *en = kube_json_at_str(e, "involvedObject", "name"), *vn = kube_obj_name(victim);
    return en && vn && strcmp(en, vn) == 0;
}

/* The UID in "Preempted by pod <UID> on node <node>" (also "by PodGroup <UID>"); new string or NULL. */
static char *uid_in_message(const char *m)
{
    const char *p = m ? strstr(m, "Preempted by ") : NULL;
    if (!p)
        return NULL;
    p += strlen("Preempted by ");
    p += strcspn(p, " "); /* the preemptor's type: pod, PodGroup */
    p += strspn(p, " ");
    size_t n = strcspn(p, " ");
    return n ? strndup(p, n) : NULL;
}

char *kube_preemptor_from_events(const json_t *events, const json_t *victim, char **uid)
{
    const json_t *best = NULL, *e;
    int64_t best_ms = -1;
    size_t i;
    if (uid)
        *uid = NULL;
    json_array_foreach(json_object_get(events, "items"), i, e) {
        int64_t t = event_ms(e);
        if (about(e, victim) && t >= best_ms) {
            best = e;
            best_ms = t;
        }
    }
    if (!best)
        return NULL;
    const char *rk = kube_json_at_str(best, "related", "kind"), *rn = kube_json_at_str(best, "related", "name");
    const char *rns = kube_json_at_str(best, "related", "namespace");
    if (rn && (!rk || strcmp(rk, "Pod") == 0))
        return kube_strdup_printf("%s/%s", rns ? rns : kube_json_at_str(best, "involvedObject", "namespace") ?: "?", rn);
    if (uid)
        *uid = uid_in_message(kube_json_at_str(best, "message") ?: kube_json_at_str(best, "note"));
    return NULL;
}

char *kube_pod_name_by_uid(const json_t *pods, const char *uid)
{
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(pods, "items"), i, p) {
        const char *u = kube_obj_uid(p);
        if (uid && u && strcmp(u, uid) == 0)
            return kube_strdup_printf("%s/%s", kube_obj_namespace(p) ?: "?", kube_obj_name(p) ?: "?");
    }
    return NULL;
}
