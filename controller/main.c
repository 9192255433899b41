/* main.c - mpi-operator: parse flags, connect, serve metrics, win the leader
 * Lease, run the controller until SIGTERM/SIGINT, then stop the workers and
 * release the Lease so a standby takes over at once. */
#include "controller.h"
#include "access.h"
#include "crds.h"
#include "health.h"
#include "leader.h"
#include "metrics.h"
#include "kube/config.h"
#include "kube/log.h"

#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct kube_cancel *stop_token;

static void on_signal(int sig)
{
    (void)sig;
    kube_cancel_trigger(stop_token);
}

static void on_lost(void *ud)
{
    metrics_set_leader(controller_metrics(ud), 0);
    KLOG_ERROR("leadership lost; exiting so that a restart stands by again");
    _exit(1);
}

static char *identity(void)
{
    char host[256] = "mpi-operator";
    gethostname(host, sizeof host - 1);
    char *id = NULL;
    if (asprintf(&id, "%s_%08lx%04x", host, (unsigned long)random(), (unsigned)getpid() & 0xffff) < 0)
        return NULL;
    return id;
}

/* --master URL replaces the configuration's server (client-go's BuildConfigFromFlags); without
 * a usable configuration it is a bare server with no credentials. 0 ok, -1 logged. */
static int apply_master(const struct options *o, struct kube_config **cfg, char *load_err)
{
    if (!*cfg) {
        KLOG_WARN("--master %s without a usable configuration (%s): no credentials", o->master,
                  load_err ? load_err : "none");
        *cfg = kube_config_new_server(o->master);
        return *cfg ? 0 : -1;
    }
    char *s = strdup(o->master);
    if (!s)
        return -1;
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '/')
        s[--n] = 0;
    free((*cfg)->server);
    (*cfg)->server = s;
    return 0;
}

/* limited: the client-side rate limit (--kube-api-qps/--kube-api-burst) applies to it. */
static struct kube_client *connect_api(const struct options *o, int limited)
{
    struct kube_config *cfg = NULL;
    char *err = NULL;
    int lrc = kube_config_load(o->kubeconfig, o->context, &cfg, &err);
    if (lrc < 0)
        cfg = NULL;
    if (o->master && apply_master(o, &cfg, err) < 0)
        lrc = -1;
    else if (o->master)
        lrc = 0;
    if (lrc < 0) {
        KLOG_ERROR("%s", err ? err : "cannot load the Kubernetes configuration");
        free(err);
        return NULL;
    }
    free(err);
    err = NULL;
    struct kube_client_opts co;
    kube_client_opts_default(&co);
    if (limited) {
        co.qps = o->kube_api_qps;
        co.burst = o->kube_api_burst;
    }
    struct kube_client *c = kube_client_new(cfg, &co, &err);
    if (!c) {
        KLOG_ERROR("%s", err ? err : "cannot create the API client");
        free(err);
    }
    return c;
}

/* How often discovery asks again while no MPIJob version is served, and how often it says so. */
#define DISCOVERY_RETRY_MS 2000
#define DISCOVERY_LOG_EVERY 15

/* Waits (until stop) for the cluster to serve an MPIJob version and sets o->mpijob_res to it
 * (v2beta1 preferred). 0 ok, -1 on stop. Errors asking are logged and retried. */
static int discover_mpijob(struct kube_client *c, struct options *o)
{
    for (int tries = 0;; tries++) {
        char *err = NULL;
        int rc = crds_mpijob_discover(c, &o->mpijob_res, &err);
        if (rc == 1) {
            KLOG_INFO("MPIJobs at kubeflow.org/%s (API discovery)", o->mpijob_res->version);
            return 0;
        }
        if (tries % DISCOVERY_LOG_EVERY == 0) {
            if (rc < 0)
                KLOG_WARN("%s; asking again", err ? err : "API discovery failed");
            else
                KLOG_WARN("the cluster serves no MPIJob version (kubeflow.org/v2beta1 or v1alpha2 mpijobs): "
                          "is the CRD installed? waiting for it");
        }
        free(err);
        if (kube_cancel_sleep_ms(stop_token, DISCOVERY_RETRY_MS))
            return -1;
    }
}

/* The main loop's period, and how long /healthz lets it go without a beat. */
#define MAIN_LOOP_MS 5000
#define MAIN_LOOP_BOUND_MS 30000

/* Leader election: waits for the Lease and starts renewing it into *lp. -1 when this process
 * leads; otherwise run's exit code (0: shut down while standing by; 1: a failure, logged). */
static int elect(struct options *o, struct kube_client *c, struct kube_client *wc, struct controller *ctl,
                 struct leader **lp)
{
    char *id = identity(), *errmsg = NULL;
    struct leader_opts lo = { o->lock_ns, o->lock_name,        id ? id : "mpi-operator",
                              o->lease_s, o->renew_deadline_s, o->retry_s,
                              wc };
    struct leader *l = leader_new(c, &lo, &errmsg);
    free(id);
    if (!l) {
        KLOG_ERROR("%s", errmsg ? errmsg : "leader election: out of memory");
        free(errmsg);
        return 1;
    }
    struct metrics *m = controller_metrics(ctl);
    metrics_set_ready(m, 1);                  /* standing by is healthy */
    if (leader_acquire(l, stop_token) != 0) { /* shutting down before winning */
        leader_free(l);
        return 0;
    }
    metrics_set_ready(m, 0);
    if (leader_start_renewing(l, on_lost, ctl, &errmsg) < 0) {
        KLOG_ERROR("%s", errmsg ? errmsg : "leader election: cannot start the lease renewer");
        free(errmsg);
        leader_release(l); /* a leader that cannot renew must not lead */
        leader_free(l);
        return 1;
    }
    *lp = l;
    return -1;
}

/* Wins the Lease (when elected), asks the API which MPIJob version it serves, then runs ctl
 * until SIGTERM/SIGINT. */
static int run(struct options *o, struct kube_client *c, struct kube_client *wc, struct controller *ctl)
{
    struct metrics *m = controller_metrics(ctl);
    struct leader *l = NULL;
    if (o->leader_elect) {
        int rc = elect(o, c, wc, ctl, &l);
        if (rc >= 0)
            return rc;
    }
    metrics_set_leader(m, 1);
    /* discovery and the RBAC probe go through wc, which SIGTERM cancels: an API server that
     * stalls mid-reply must not hold the operator past its termination grace period */
    struct access_rights acc;
    int found = discover_mpijob(wc, o) == 0;
    if (found)
        access_probe(wc, o->ns, &acc);
    if (!found || kube_cancel_requested(stop_token)) {
        metrics_set_leader(m, 0);
        leader_release(l);
        leader_free(l);
        return 0;
    }
    o->build.no_launcher_rbac = !acc.launcher_rbac;
    o->build.no_patch_configmaps = !acc.patch_configmaps;
    o->build.no_patch_jobs = !acc.patch_jobs;
    o->build.no_launcher_log = !acc.launcher_log;
    o->build.no_launcher_events = !acc.launcher_events;
    controller_learned(ctl, o);
    char *err = NULL;
    int rc = 0;
    if (controller_start(ctl, stop_token, &err) < 0) {
        if (err || !kube_cancel_requested(stop_token)) {
            KLOG_ERROR("%s", err ? err : "cannot start the controller");
            rc = 1;
        }
        free(err);
    } else {
        health_arm(H_MAIN, MAIN_LOOP_BOUND_MS);
        while (!kube_cancel_sleep_ms(stop_token, MAIN_LOOP_MS)) {
            health_beat(H_MAIN);
            controller_beat(ctl);
        }
        KLOG_INFO("shutting down");
    }
    health_disarm(H_MAIN);
    health_disarm(H_WORKERS);
    controller_stop(ctl);
    metrics_set_leader(m, 0);
    leader_release(l);
    leader_free(l);
    return rc;
}

int main(int argc, char **argv)
{
    struct options o;
    char *err = NULL;
    /* one malloc arena per thread would cost MBs of RSS for a dozen mostly idle threads */
    mallopt(M_ARENA_MAX, 2);
    kube_log_set_component("mpi-operator");
    int prc = options_parse(argc, argv, &o, &err);
    if (prc != 0) {
        if (prc < 0)
            fprintf(stderr, "mpi-operator: %s\n", err);
        free(err);
        return prc < 0 ? 2 : 0;
    }
    kube_log_set_verbosity(o.verbosity);
    srandom((unsigned)getpid() ^ (unsigned)time(NULL));
    stop_token = kube_cancel_new();
    struct sigaction sa = { .sa_handler = on_signal };
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* two clients: changes and the Lease on one; the caches' lists and watches on the other,
     * which SIGTERM cancels at once (the first must still release the Lease) */
    struct kube_client *c = connect_api(&o, 1), *wc = c ? connect_api(&o, 0) : NULL;
    if (!wc) {
        kube_client_free(c);
        return 1;
    }
    kube_client_set_cancel(wc, stop_token);
    KLOG_INFO("mpi-operator starting: namespace %s, agent image %s, %d workers", o.ns ? o.ns : "(all)", o.build.agent_image,
              o.threadiness);
    KLOG_DEBUG("API client limit: --kube-api-qps %g (0 = none) --kube-api-burst %d (requests; watches aside); queue "
               "--controller-queue-rate-limit %d --controller-queue-burst %d",
               o.kube_api_qps, o.kube_api_burst, o.queue_rate_limit, o.queue_burst);
    /* the controller (with its metrics endpoint) exists before the election: a standby
     * answers /healthz and /readyz */
    struct controller *ctl = controller_new(c, wc, &o);
    int rc = 1;
    if (!ctl)
        KLOG_ERROR("cannot create the controller: out of memory");
    else if (controller_serve(ctl, &err) < 0)
        KLOG_ERROR("%s", err ? err : "cannot serve the metrics port");
    else
        rc = run(&o, c, wc, ctl);
    free(err);
    controller_free(ctl);
    kube_client_free(wc);
    kube_client_free(c);
    kube_cancel_free(stop_token);
    return rc;
}
