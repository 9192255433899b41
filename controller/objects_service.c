/* objects_service.c - the headless Service (<job> for v2beta1 as upstream,
 * <job>-worker for v1alpha2) that gives every pod of the job a DNS name
 * <pod>.<service>.<ns>.svc (of the family the annotation mpi-k8s.io/ip-family asks for, else
 * the cluster's primary), and the SSH Secret <job>-ssh. */
#include "objects.h"
#include "kube/json.h"
#include "kube/util.h"

#include <stdlib.h>
#include <string.h>

json_t *objects_service(const struct mpijob *j)
{
    char *name = objects_name_service(j);
    json_t *o = name ? json_pack("{s:s, s:s, s:o, s:{s:s, s:b, s:{s:s, s:s}}}", "apiVersion", "v1", "kind", "Service",
                                 "metadata", objects_meta(j, name), "spec", "clusterIP", "None", "publishNotReadyAddresses",
                                 1, "selector", LBL_T_OPERATOR, MPIJOB_OPERATOR_NAME, LBL_T_JOB_NAME, j->name)
                     : NULL;
    /* a family asked for: the Service's DNS records (the hostfile's names) are that family's only */
    json_t *spec = kube_json_at(o, "spec");
    if (spec && j->ip_family) {
        json_object_set_new(spec, "ipFamilyPolicy", json_string("SingleStack"));
        json_object_set_new(spec, "ipFamilies", json_pack("[s]", j->ip_family));
    }
    free(name);
    return o;
}

json_t *objects_ssh_secret(const struct mpijob *j, const char *private_pem, const char *public_line)
{
    char *name = objects_name_secret(j);
    char *priv = NULL, *pub = NULL;
    json_t *o = NULL;
    /* Secret data is base64; stringData would be echoed back in every read. */
    priv = kube_base64_encode(private_pem, strlen(private_pem));
    pub = kube_base64_encode(public_line, strlen(public_line));
    if (name && priv && pub)
        o = json_pack("{s:s, s:s, s:o, s:s, s:{s:s, s:s, s:s}}", "apiVersion", "v1", "kind", "Secret", "metadata",
                      objects_meta(j, name), "type", "kubernetes.io/ssh-auth", "data", "ssh-privatekey", priv,
                      "ssh-publickey", pub, "authorized_keys", pub);
    free(name);
    free(priv);
    free(pub);
    return o;
}
