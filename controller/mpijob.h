/* mpijob.h - the controller's one internal view of an MPIJob, whichever API
 * version (v1alpha2 or v2beta1) it was written in: normalisation from the
 * API object, validation with field-naming messages, and the names of the
 * objects it owns. */
#ifndef MPIJOB_H
#define MPIJOB_H

#include <stdint.h>
#include <jansson.h>

#include "mpik8s/contract.h"

#define MPIJOB_GROUP "kubeflow.org"
#define MPIJOB_KIND "MPIJob"
#define MPIJOB_OPERATOR_NAME "mpi-operator"
#define MPIJOB_MANAGED_BY_US "kubeflow.org/mpi-operator"
#define MPIJOB_MANAGED_BY_KUEUE "kueue.x-k8s.io/multikueue"

/* Annotations that change how a job is run (documented in docs/controller.md): MPIK8S_ANN_*
 * in mpik8s/contract.h, with the pod labels the agent relies on (MPIK8S_LABEL_*). */

/* Default sshAuthMountPath, the only one whose Secret files get mode 0600 (as upstream). */
#define ROOT_SSH_PATH "/root/.ssh"

/* Labels put on every owned pod: the seed's (MPIK8S_LABEL_JOB_NAME, MPIK8S_LABEL_ROLE) and
 * the training-operator's. */
#define LBL_T_OPERATOR "training.kubeflow.org/operator-name"
#define LBL_T_JOB_NAME "training.kubeflow.org/job-name"
#define LBL_T_ROLE "training.kubeflow.org/job-role"
#define LBL_T_INDEX "training.kubeflow.org/replica-index"

/* "not given" for the optional integer fields. */
#define MPIJOB_UNSET (-1LL - 0x7fffffffffffffffLL)

enum mpijob_version { MPIJOB_V1ALPHA2, MPIJOB_V2BETA1 };
enum clean_pod_policy { CLEAN_NONE, CLEAN_RUNNING, CLEAN_ALL };
enum launcher_creation { LAUNCH_AT_STARTUP, LAUNCH_WAIT_FOR_WORKERS_READY };

struct replica_spec {
    int present;                /* the spec exists in mpiReplicaSpecs */
    long long replicas;         /* defaulted: launcher 1, worker 0 */
    const char *restart_policy; /* "Never" | "OnFailure" | "Always"; borrowed */
    json_t *template;           /* borrowed pod template ({metadata, spec}) or NULL */
};

struct mpijob {
    enum mpijob_version version; /* the shape the spec is written in */
    const char *name, *ns, *uid; /* borrowed from obj */
    const char *api_version;     /* as read (kubeflow.org/v2beta1 ...) */
    json_t *obj;                 /* the whole object (borrowed) */
    long long slots_per_worker;  /* default MPIK8S_DEFAULT_SLOTS */
    enum clean_pod_policy clean_policy;
    long long backoff_limit;        /* MPIJOB_UNSET, or given (v1alpha2 defaults 6) */
    long long worker_restart_limit; /* lost workers re-created at most this often: a v2beta1 job's
                                     * runPolicy.backoffLimit when given, else 0 (worker_restart.h) */
    long long active_deadline_s;    /* MPIJOB_UNSET or given */
    long long ttl_after_finished_s; /* MPIJOB_UNSET or given */
    int suspend;
    const char *managed_by;          /* NULL = us */
    const char *pod_failure_policy;  /* annotation mpi-k8s.io/pod-failure-policy (borrowed), or NULL */
    enum mpik8s_mpi impl;            /* mpik8s/contract.h */
    const char *ssh_auth_mount_path; /* default /root/.ssh */
    enum launcher_creation launcher_creation;
    int run_launcher_as_worker;
    const char *main_container; /* v1alpha2 mainContainer, or NULL */
    struct replica_spec launcher, worker;
    enum mpik8s_transport transport;
    int agent_run;                /* wrap the launcher command in mpi-agent run */
    long long agent_timeout_s;    /* MPI_AGENT_TIMEOUT (default 900) */
    long long progress_timeout_s; /* MPI_AGENT_PROGRESS_TIMEOUT (default 0 = off) */
    long long network_timeout_s;  /* MPI_AGENT_NETWORK_TIMEOUT (default 60; 0 = off) */
    const char *ip_family;        /* annotation mpi-k8s.io/ip-family: "IPv4", "IPv6" (borrowed) or NULL */
    long long ssh_port;           /* default 2222 */
};

/* Reads an MPIJob object (any served version) into j; fields borrow from obj, which must outlive j.
 * Applies the defaults of the detected version. 0 ok; -1 with *errmsg naming the field on a
 * type error (e.g. "spec.slotsPerWorker: expected an integer, got a string"). */
int mpijob_normalize(json_t *obj, struct mpijob *j, char **errmsg);
/* Checks a normalised job's values (ranges, enums, names). 0 ok; -1 with *errmsg naming the field. */
int mpijob_validate(const struct mpijob *j, char **errmsg);
/* normalize + validate in one call. */
int mpijob_load(json_t *obj, struct mpijob *j, char **errmsg);

/* Name of the worker container (mainContainer, else the first container), or NULL. */
const char *mpijob_worker_container(const struct mpijob *j);
/* Whether hostfile entries are FQDNs (<pod>.<service>.<ns>.svc) rather than pod names. */
int mpijob_fqdn_hosts(const struct mpijob *j);
/* Whether a raw MPIJob object (not normalised) is of the v1alpha2 shape. */
int mpijob_object_is_v1alpha2(const json_t *obj);

/* The API's spelling of each enum value (for messages, labels and env; the MPI implementation's
 * is mpik8s_mpi_name, contract.h). */
const char *mpijob_clean_policy_name(enum clean_pod_policy p);

#endif
