/* fuzz_controller_mpijob.c - libFuzzer target: an MPIJob JSON object as the
 * API server returns it (any bytes) goes through the controller's
 * normalisation and validation (controller/mpijob_normalize.c, mpijob_validate.c)
 * without a crash, leak or hang; a rejection is one line naming a field; an
 * accepted job has every value the object builders rely on, and building its
 * objects (launcher Job, a worker pod, ConfigMap, Service, RBAC) succeeds. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../controller/mpijob.h"
#include "../../controller/objects.h"

/* Aborts unless err is one line of sane length. */
static void check_err(const char *err)
{
    if (!err || !*err || strchr(err, '\n') || strchr(err, '\r') || strlen(err) > 2048)
        abort();
}

/* Aborts unless o is a JSON object, then drops it. */
static void check_obj(json_t *o)
{
    if (!json_is_object(o))
        abort();
    json_decref(o);
}

/* An accepted job: invariants the builders assume, then build its objects. */
static void check_job(const struct mpijob *j)
{
    if (!j->name || !j->ns || !j->launcher.present || !j->launcher.template || j->launcher.replicas != 1 ||
        j->slots_per_worker < 1 || !j->ssh_auth_mount_path)
        abort();
    if (j->worker.present && (!j->worker.template || j->worker.replicas < 1))
        abort();
    if (j->worker.present && !mpijob_worker_container(j))
        abort();
    (void)mpik8s_mpi_name(j->impl);
    (void)mpijob_clean_policy_name(j->clean_policy);
    (void)mpik8s_transport_name(j->transport);
    (void)mpijob_fqdn_hosts(j);
    struct build_opts o;
    objects_build_opts_default(&o);
    check_obj(objects_launcher_job(j, &o));
    check_obj(objects_service(j));
    check_obj(objects_role(j, 1, 1));
    if (j->worker.present && j->worker.replicas <= 64) {
        check_obj(objects_worker_pod(j, &o, j->worker.replicas - 1));
        check_obj(objects_configmap(j, &o, NULL));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *obj = json_loadb((const char *)data, size, 0, &jerr);
    if (!obj)
        return 0;
    struct mpijob j;
    char *err = NULL;
    if (mpijob_load(obj, &j, &err) == 0) {
        if (err)
            abort();
        check_job(&j);
    } else {
        check_err(err);
    }
    free(err);
    json_decref(obj);
    return 0;
}
