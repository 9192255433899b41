/* objects.h - pure builders: one normalised MPIJob (+ options) in, the exact
 * Kubernetes objects it owns out (new jansson references). No API calls here,
 * so the golden tests can compare every byte. */
#ifndef OBJECTS_H
#define OBJECTS_H

#include <jansson.h>
#include "mpijob.h"

struct build_opts {
    const char *agent_image;    /* init container image (default mpik8s/mpi-agent:latest) */
    const char *gang;           /* NULL/"" = none, "volcano", or "scheduler-plugins" */
    const char *cluster_domain; /* appended to FQDN hosts when set (e.g. "cluster.local") */
    /* access.h's limited mode (the operator's RBAC, probed at start; 0 = full grants): no
     * ServiceAccount/Role/RoleBinding for the launcher, which runs without API access and is
     * created once every worker is Ready; updates instead of merge patches */
    int no_launcher_rbac, no_patch_configmaps, no_patch_jobs;
    int no_launcher_log;    /* the launcher Role leaves out <job>-log (access.h launcher_log) */
    int no_launcher_events; /* the launcher Role leaves out events list (access.h launcher_events) */
};

#define DEFAULT_AGENT_IMAGE "mpik8s/mpi-agent:latest"

/* Fills o with the defaults. */
void objects_build_opts_default(struct build_opts *o);

/* Object names (new strings): "<job>-config", the Service ("<job>" for v2beta1, "<job>-worker"
 * for v1alpha2), "<job>-launcher", "<job>-ssh",
 * "<job>-worker-<i>". */
char *objects_name_config(const struct mpijob *j);
char *objects_name_service(const struct mpijob *j);
char *objects_name_launcher(const struct mpijob *j);
char *objects_name_secret(const struct mpijob *j);
char *objects_name_worker(const struct mpijob *j, long long i);
/* The launcher template's own serviceAccountName (not a copy), or NULL when unset/empty. */
const char *objects_launcher_user_sa(const struct mpijob *j);
/* The account the launcher runs as and our Role is bound to: the template's
 * serviceAccountName when set (kept, as upstream), else "<job>-launcher". New string. */
char *objects_name_launcher_sa(const struct mpijob *j);

/* metadata {name, namespace, labels (app, operator, job-name), ownerReferences}. */
json_t *objects_meta(const struct mpijob *j, const char *name);
/* The ownerReference pointing at the MPIJob (controller, blockOwnerDeletion). */
json_t *objects_owner_ref(const struct mpijob *j);
/* Returns 1 when obj's controller ownerReference is this MPIJob (same uid). */
int objects_owned_by(const json_t *obj, const struct mpijob *j);

/* The hostfile for the job's MPI flavour (new string). */
char *objects_hostfile(const struct mpijob *j, const struct build_opts *o);
/* discover_hosts.sh listing the workers whose running[i] is nonzero (running may be NULL). */
char *objects_discover_hosts(const struct mpijob *j, const struct build_opts *o, const unsigned char *running);
/* ConfigMap <job>-config with hostfile and discover_hosts.sh. */
json_t *objects_configmap(const struct mpijob *j, const struct build_opts *o, const unsigned char *running);

/* ServiceAccount, Role and RoleBinding <job>-launcher for the launcher's agent (the Role with the
 * <job>-log rules when with_log: access.h launcher_log). */
json_t *objects_service_account(const struct mpijob *j);
json_t *objects_role(const struct mpijob *j, int with_log, int with_events);
json_t *objects_role_binding(const struct mpijob *j);

/* Secret <job>-ssh (kubernetes.io/ssh-auth) from an OpenSSH key pair. */
json_t *objects_ssh_secret(const struct mpijob *j, const char *private_pem, const char *public_line);

/* Headless Service (objects_name_service) selecting the job's pods. */
json_t *objects_service(const struct mpijob *j);

/* Worker pod <job>-worker-<i>. */
json_t *objects_worker_pod(const struct mpijob *j, const struct build_opts *o, long long i);

/* Launcher batch Job <job>-launcher. */
json_t *objects_launcher_job(const struct mpijob *j, const struct build_opts *o);

/* PodGroup <job> for o->gang (NULL when no gang scheduling). */
json_t *objects_podgroup(const struct mpijob *j, const struct build_opts *o);

/* Labels a pod of role ("launcher"|"worker") carries; index < 0 = none. */
json_t *objects_pod_labels(const struct mpijob *j, const char *role, long long index);

#endif
