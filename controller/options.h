/* options.h - the operator's command line (options.c). */
#ifndef CONTROLLER_OPTIONS_H
#define CONTROLLER_OPTIONS_H

#include "kube/resource.h"
#include "objects.h"

struct options {
    const char *kubeconfig, *context, *ns;
    const char *master; /* --master: API server URL overriding the kubeconfig's */
    int threadiness, monitoring_port, verbosity;
    int leader_elect;
    const char *lock_ns, *lock_name;
    int lease_s, renew_deadline_s, retry_s;
    double kube_api_qps;  /* --kube-api-qps: client-side limit on requests, 0 = none (upstream 5) */
    int kube_api_burst;   /* --kube-api-burst (default 10, as upstream) */
    int queue_rate_limit; /* --controller-queue-rate-limit (upstream default 10/s) */
    int queue_burst;      /* --controller-queue-burst (upstream default 100) */
    /* klog's flags, accepted as upstream's Deployment passes them; our log always goes to
     * stderr (klog's default with -logtostderr), whatever they say */
    int alsologtostderr, logtostderr;
    int stderrthreshold; /* 0 INFO, 1 WARNING, 2 ERROR, 3 FATAL */
    struct build_opts build;
    /* The MPIJob version the cluster serves (crds.h's crds_mpijob_discover, at start; not a flag,
     * as upstream has none); NULL = v2beta1. */
    const struct kube_resource *mpijob_res;
};

/* Parses argv into o (defaults from the environment). 0 ok, 1 when the program should exit 0
 * (--help/--version printed), -1 with *errmsg on a bad flag. */
int options_parse(int argc, char **argv, struct options *o, char **errmsg);

#endif
