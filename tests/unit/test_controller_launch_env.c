/* test_controller_launch_env.c - the two sides of the launch policy cannot drift: for every MPIJob
 * of tests/golden/controller/inputs/ (Open MPI, MPICH and Intel MPI; both API versions, both
 * transports) the launch variables of the launcher's pod spec (objects_launcher_job) are exactly, in
 * order, what `mpi-agent run` would set in that container with an empty environment (the agent's
 * own agent_env_plan, with the inputs the agent reads from that pod spec's MPI_JOB_* variables);
 * a variable the user set in the template is the user's on both sides.
 * Open MPI's list must carry what version 4 (ORTE) and version 5 (PRRTE) each read. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../controller/mpijob.h"
#include "../../controller/objects.h"
#include "kube/json.h"
#include "kube/util.h"
/* The agent's side, compiled into this test: the unit tests link one program's objects, and
 * this is the only test that needs the other's (launch_env.c is self-contained). */
#include "../../agent/launch_env.c"

/* The user's own variables (the template container's env): what the agent finds set. */
static const char *user_env(const char *name, void *ud)
{
    return kube_json_at_str(kube_json_find(ud, "name", name), "value");
}

/* The agent's own variables and the operator's other ones: everything else in the launcher's
 * env is launch environment. */
static int launch_var(const char *name)
{
    return strncmp(name, "MPI_JOB_", 8) != 0 && strncmp(name, "MPI_AGENT_", 10) != 0 &&
           strcmp(name, "K_MPI_JOB_ROLE") != 0 && strncmp(name, "NVIDIA_", 7) != 0;
}

static const char *env_value(json_t *env, const char *name)
{
    return kube_json_at_str(kube_json_find(env, "name", name), "value");
}

static long long env_int(json_t *env, const char *name)
{
    long long v = -1;
    assert_int_equal(kube_parse_int(env_value(env, name), 0, 1000000, &v), 0);
    return v;
}

/* The plan mpi-agent run makes in a container with env, user the template's own variables (its
 * defaults: --dest /opt/kube, --hostfile /etc/mpi/hostfile; implementation, workers and slots from
 * the operator's variables). */
static void agent_plan(json_t *env, json_t *user, struct agent_env_plan *p)
{
    struct mpik8s_launch_in in = { MPIK8S_MPI_DEFAULT, MPIK8S_AGENT_DIR "/mpi-rsh", MPIK8S_HOSTFILE,
                                   env_int(env, MPIK8S_ENV_WORKERS), env_int(env, MPIK8S_ENV_SLOTS) };
    assert_int_equal(mpik8s_mpi_parse(env_value(env, MPIK8S_ENV_MPI_IMPLEMENTATION), &in.mpi), 0);
    assert_int_equal(agent_env_plan(&in, user_env, user, p), 0);
}

/* Checks one container c (user: the template's env): the operator's launch variables are, in
 * order, what the agent sets; the ones the user set are the user's on both sides. */
static void check_container(const char *job, json_t *c, json_t *user)
{
    json_t *env = json_object_get(c, "env"), *e;
    struct agent_env_plan p;
    agent_plan(env, user, &p);
    size_t k = 0, i;
    json_array_foreach(env, i, e) {
        const char *name = kube_json_at_str(e, "name"), *value = kube_json_at_str(e, "value");
        if (!launch_var(name) || kube_json_find(user, "name", name))
            continue;
        while (k < p.n && p.v[k].action == AGENT_ENV_KEPT)
            k++;
        if (k >= p.n)
            fail_msg("%s: the pod spec sets %s=%s, mpi-agent run does not", job, name, value);
        if (strcmp(name, p.v[k].name) != 0 || strcmp(value, p.v[k].value) != 0)
            fail_msg("%s: pod spec %s=%s, mpi-agent run %s=%s", job, name, value, p.v[k].name, p.v[k].value);
        assert_int_equal(p.v[k++].action, AGENT_ENV_SET);
    }
    for (; k < p.n; k++)
        if (p.v[k].action != AGENT_ENV_KEPT)
            fail_msg("%s: mpi-agent run sets %s=%s, the pod spec does not", job, p.v[k].name, p.v[k].value);
    for (k = 0; k < p.n; k++) /* the user's value, kept by both */
        assert_string_equal(env_value(env, p.v[k].name), p.v[k].value);
    agent_env_plan_free(&p);
}

/* What each Open MPI version reads, with the values the launch needs. */
static void check_open_mpi(json_t *env)
{
    static const char *const want[][2] = {
        { "OMPI_MCA_plm_rsh_agent", "/opt/kube/mpi-rsh : false" }, /* 4 (ORTE) */
        { "OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile" }, /* 4 */
        { "OMPI_MCA_orte_keep_fqdn_hostnames", "true" },           /* 4, whatever the hostfile's names */
        { "PRTE_MCA_plm_ssh_agent", "/opt/kube/mpi-rsh : false" }, /* 5 (PRRTE: plm component ssh) */
        { "PRTE_MCA_prte_default_hostfile", "/etc/mpi/hostfile" }, /* 5 */
        { "PRTE_MCA_plm_ssh_no_tree_spawn", "1" },                 /* 5 */
        { "SHELL", MPIK8S_LAUNCH_SHELL },                          /* both */
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const char *v = env_value(env, want[i][0]);
        if (!v || strcmp(v, want[i][1]) != 0)
            fail_msg("%s=%s, want %s", want[i][0], v ? v : "(unset)", want[i][1]);
    }
}

static void check_job(const char *path, unsigned *seen)
{
    json_error_t je;
    json_t *in = json_load_file(path, 0, &je);
    assert_non_null(in);
    struct mpijob j;
    char *err = NULL;
    if (mpijob_load(json_object_get(in, "job"), &j, &err) < 0)
        fail_msg("%s: %s", path, err);
    struct build_opts o;
    objects_build_opts_default(&o);
    json_t *job = objects_launcher_job(&j, &o), *c;
    assert_non_null(job);
    size_t i;
    json_t *users = kube_json_at(j.launcher.template, "spec", "containers");
    json_array_foreach(kube_json_at(job, "spec", "template", "spec", "containers"), i, c) {
        check_container(path, c, json_object_get(json_array_get(users, i), "env"));
        *seen |= 1u << j.impl;
        if (j.impl == MPIK8S_MPI_OPENMPI)
            check_open_mpi(json_object_get(c, "env"));
    }
    json_decref(job);
    json_decref(in);
}

static void test_no_drift(void **s)
{
    (void)s;
    const char *dir = "tests/golden/controller/inputs";
    DIR *d = opendir(dir);
    assert_non_null(d);
    unsigned seen = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strstr(de->d_name, ".json"))
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        check_job(path, &seen);
    }
    closedir(d);
    /* every implementation was compared */
    assert_int_equal(seen, (1u << MPIK8S_MPI_OPENMPI) | (1u << MPIK8S_MPI_INTEL) | (1u << MPIK8S_MPI_MPICH));
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_no_drift) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
