/* events.c - core v1 Events on MPIJobs (created, running, finished, invalid,
 * foreign objects), visible in `kubectl describe mpijob` and `kubectl get events`.
 * Best effort: a failed Event never fails a sync. */
#include "controller.h"
#include "jsonutil.h"
#include "kube/log.h"

#include <stdlib.h>

void event_record(struct kube_client *c, const json_t *job, const char *type, const char *reason, const char *msg)
{
    const char *ns = ju_str(job, "metadata", "namespace"), *name = obj_name(job);
    char now[40], gen[300];
    ju_time_format(ju_now_ms(), now, sizeof now);
    snprintf(gen, sizeof gen, "%s.", name ? name : "mpijob");
    json_t *ev = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s*, s:s*, s:s*, s:s*}, s:s, s:s, s:s, s:{s:s}, "
                           "s:s, s:s, s:i, s:s}",
                           "apiVersion", "v1", "kind", "Event", "metadata", "generateName", gen, "namespace", ns ? ns : "default",
                           "involvedObject", "kind", "MPIJob", "name", name, "namespace", ns,
                           "uid", ju_str(job, "metadata", "uid"), "apiVersion", ju_str(job, "apiVersion"),
                           "type", type, "reason", reason, "message", msg ? msg : "", "source", "component", "mpi-operator",
                           "firstTimestamp", now, "lastTimestamp", now, "count", 1, "reportingComponent", "mpi-operator");
    if (!ev)
        return;
    struct kube_error err = KUBE_ERROR_INIT;
    json_t *r = kube_create(c, &KUBE_RES_EVENTS, ns ? ns : "default", ev, &err);
    if (!r)
        KLOG_DEBUG("event %s on %s/%s not recorded: %s", reason, ns, name, err.message ? err.message : "error");
    json_decref(r);
    json_decref(ev);
    kube_error_clear(&err);
}
