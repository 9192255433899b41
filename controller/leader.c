/* leader.c - Lease-based leader election (see leader.h). */
#include "leader.h"
#include "health.h"
#include "kube/json.h"
#include "kube/util.h"
#include "kube/log.h"
#include "kube/resource.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct leader {
    struct kube_client *c;  /* release */
    struct kube_client *ac; /* acquire (interruptible by shutdown) */
    char *ns, *name, *id;
    int lease_s, renew_s, retry_s;
    char *seen;         /* holder + renewTime last observed */
    int64_t seen_at;    /* monotonic ms when `seen` last changed */
    int64_t last_renew; /* monotonic ms of our last successful acquire/renew */
    struct kube_cancel *stop;
    pthread_t th;
    int renewing, held;
    void (*on_lost)(void *);
    void *ud;
};

static void micro_now(char *buf, size_t n)
{
    char tmp[40];
    kube_time_format_ms(kube_realtime_ms(), tmp, sizeof tmp);
    size_t l = strlen(tmp); /* "...:02.123Z" -> "...:02.123000Z" */
    snprintf(buf, n, "%.*s000Z", (int)(l - 1), tmp);
}

struct leader *leader_new(struct kube_client *c, const struct leader_opts *o, char **errmsg)
{
    struct leader *l = calloc(1, sizeof *l);
    if (!l) {
        kube_set_err(errmsg, "leader election: out of memory");
        return NULL;
    }
    l->c = c;
    l->ac = o->cancellable ? o->cancellable : c;
    l->ns = strdup(o->ns);
    l->name = strdup(o->name);
    l->id = strdup(o->identity);
    l->lease_s = o->lease_s;
    l->renew_s = o->renew_deadline_s;
    l->retry_s = o->retry_s;
    l->stop = kube_cancel_new();
    if (!l->ns || !l->name || !l->id || !l->stop) {
        leader_free(l);
        kube_set_err(errmsg, "leader election: out of memory");
        return NULL;
    }
    return l;
}

static json_t *lease_spec(struct leader *l, const json_t *old)
{
    char now[48];
    micro_now(now, sizeof now);
    json_t *spec =
        json_pack("{s:s, s:i, s:s}", "holderIdentity", l->id, "leaseDurationSeconds", l->lease_s, "renewTime", now);
    const char *holder = kube_json_at_str(old, "spec", "holderIdentity");
    long long tr = kube_json_at_int(old, 0, "spec", "leaseTransitions");
    if (holder && strcmp(holder, l->id) == 0 && kube_json_at_str(old, "spec", "acquireTime")) {
        json_object_set(spec, "acquireTime", kube_json_at(old, "spec", "acquireTime"));
    } else {
        json_object_set_new(spec, "acquireTime", json_string(now));
        if (old)
            tr++;
    }
    json_object_set_new(spec, "leaseTransitions", json_integer(tr));
    return spec;
}

/* One attempt through client c: 1 = we hold the lease now, 0 = someone else does, -1 = API error. */
static int try_once(struct leader *l, struct kube_client *c)
{
    struct kube_error err = KUBE_ERROR_INIT;
    json_t *cur = kube_get(c, &KUBE_RES_LEASES, l->ns, l->name, &err);
    int rc = -1;
    if (!cur && err.reason == KUBE_NOT_FOUND) {
        kube_error_clear(&err);
        json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:s}, s:o}", "apiVersion", "coordination.k8s.io/v1", "kind", "Lease",
                                "metadata", "name", l->name, "namespace", l->ns, "spec", lease_spec(l, NULL));
        json_t *made = kube_create(c, &KUBE_RES_LEASES, l->ns, obj, &err);
        json_decref(obj);
        rc = made ? 1 : err.reason == KUBE_ALREADY_EXISTS ? 0 : -1;
        json_decref(made);
    } else if (cur) {
        const char *holder = kube_json_at_str(cur, "spec", "holderIdentity");
        const char *renew = kube_json_at_str(cur, "spec", "renewTime");
        char *seen = NULL;
        if (asprintf(&seen, "%s|%s", holder ? holder : "", renew ? renew : "") < 0)
            seen = NULL;
        if (seen && (!l->seen || strcmp(seen, l->seen) != 0)) {
            free(l->seen);
            l->seen = seen;
            l->seen_at = kube_now_ms();
        } else {
            free(seen);
        }
        int mine = holder && strcmp(holder, l->id) == 0;
        int free_lease = !holder || !*holder;
        int expired = kube_now_ms() - l->seen_at > (int64_t)l->lease_s * 1000;
        if (mine || free_lease || expired) {
            json_t *upd = json_deep_copy(cur);
            json_object_set_new(upd, "spec", lease_spec(l, cur));
            json_t *done = kube_update(c, &KUBE_RES_LEASES, l->ns, l->name, upd, &err);
            json_decref(upd);
            rc = done ? 1 : err.reason == KUBE_CONFLICT ? 0 : -1;
            json_decref(done);
        } else {
            rc = 0;
        }
        json_decref(cur);
    }
    if (rc < 0)
        KLOG_WARN("leader election on lease %s/%s: %s", l->ns, l->name, err.message ? err.message : "error");
    kube_error_clear(&err);
    if (rc == 1)
        l->last_renew = kube_now_ms();
    return rc;
}

/* How long the election loop may go without a beat: a lease period, a retry, and one attempt
 * blocked on the API (the client's timeouts bound it). */
static int64_t loop_bound_ms(const struct leader *l) { return ((int64_t)l->lease_s + l->retry_s) * 1000 + 60000; }

int leader_acquire(struct leader *l, struct kube_cancel *cancel)
{
    KLOG_INFO("waiting for the leader lease %s/%s as %s", l->ns, l->name, l->id);
    health_arm(H_LEADER, loop_bound_ms(l));
    while (!kube_cancel_requested(cancel)) {
        health_beat(H_LEADER);
        if (try_once(l, l->ac) == 1) {
            l->held = 1;
            KLOG_INFO("acquired the leader lease %s/%s", l->ns, l->name);
            return 0;
        }
        kube_cancel_sleep_ms(cancel, (int64_t)l->retry_s * 1000);
    }
    return 1;
}

static void *renew_loop(void *arg)
{
    struct leader *l = arg;
    int64_t wait = (int64_t)l->retry_s * 1000;
    while (!kube_cancel_sleep_ms(l->stop, wait)) {
        health_beat(H_LEADER);
        int rc = try_once(l, l->c); /* not interrupted by SIGTERM: the renewer is stopped first */
        if (rc == 1) {
            wait = (int64_t)l->retry_s * 1000;
            continue;
        }
        if (rc == 0 || kube_now_ms() - l->last_renew > (int64_t)l->renew_s * 1000) {
            KLOG_ERROR("lost the leader lease %s/%s (%s)", l->ns, l->name,
                       rc == 0 ? "another process holds it" : "renew deadline passed");
            l->held = 0;
            if (l->on_lost)
                l->on_lost(l->ud);
            return NULL;
        }
        wait = 1000;
    }
    return NULL;
}

int leader_start_renewing(struct leader *l, void (*on_lost)(void *), void *ud, char **errmsg)
{
    l->on_lost = on_lost;
    l->ud = ud;
    int e = pthread_create(&l->th, NULL, renew_loop, l);
    if (e != 0)
        return kube_set_err(errmsg, "leader election: cannot start the lease renewer: %s", strerror(e));
    l->renewing = 1;
    return 0;
}

void leader_release(struct leader *l)
{
    health_disarm(H_LEADER);
    if (!l)
        return;
    if (l->renewing) {
        kube_cancel_trigger(l->stop);
        pthread_join(l->th, NULL);
        l->renewing = 0;
    }
    if (!l->held)
        return;
    struct kube_error err = KUBE_ERROR_INIT;
    json_t *cur = kube_get(l->c, &KUBE_RES_LEASES, l->ns, l->name, &err);
    const char *holder = kube_json_at_str(cur, "spec", "holderIdentity");
    if (cur && holder && strcmp(holder, l->id) == 0) {
        json_t *upd = json_deep_copy(cur);
        json_t *spec = kube_json_at(upd, "spec");
        json_object_set_new(spec, "holderIdentity", json_string(""));
        json_object_set_new(spec, "leaseDurationSeconds", json_integer(1));
        json_t *done = kube_update(l->c, &KUBE_RES_LEASES, l->ns, l->name, upd, &err);
        if (done)
            KLOG_INFO("released the leader lease %s/%s", l->ns, l->name);
        json_decref(done);
        json_decref(upd);
    }
    json_decref(cur);
    kube_error_clear(&err);
    l->held = 0;
}

void leader_free(struct leader *l)
{
    if (!l)
        return;
    kube_cancel_free(l->stop);
    free(l->ns);
    free(l->name);
    free(l->id);
    free(l->seen);
    free(l);
}
