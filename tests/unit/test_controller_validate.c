/* test_controller_validate.c - normalisation of both API shapes (defaults,
 * version detection, annotations) and 25+ malformed MPIJobs, each of which must
 * be rejected with its own message naming the field at fault. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../controller/mpijob.h"
#include "../../controller/objects.h"
#include "kube/json.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *base_v1 =
    "{\"apiVersion\":\"kubeflow.org/v1alpha2\",\"kind\":\"MPIJob\",\"metadata\":{\"name\":\"tf\",\"namespace\":\"ns\"},"
    "\"spec\":{\"slotsPerWorker\":2,\"cleanPodPolicy\":\"Running\",\"mpiReplicaSpecs\":{"
    "\"Launcher\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"l\",\"image\":\"i\","
    "\"command\":[\"mpirun\"]}]}}},"
    "\"Worker\":{\"replicas\":2,\"template\":{\"spec\":{\"containers\":[{\"name\":\"w\",\"image\":\"i\"}]}}}}}}";

/* Loads base_v1, applies a JSON merge of `patch` at dotted `path` (NULL value = delete). */
static json_t *variant(const char *path, const char *value_json)
{
    json_error_t je;
    json_t *o = json_loads(base_v1, 0, &je);
    char *p = strdup(path), *save = NULL, *tok, *next;
    json_t *cur = o;
    tok = strtok_r(p, ".", &save);
    while ((next = strtok_r(NULL, ".", &save)) != NULL) {
        json_t *child = json_object_get(cur, tok);
        if (!child) {
            child = json_object();
            json_object_set_new(cur, tok, child);
        }
        cur = child;
        tok = next;
    }
    if (value_json)
        json_object_set_new(cur, tok, json_loads(value_json, JSON_DECODE_ANY, &je));
    else
        json_object_del(cur, tok);
    free(p);
    return o;
}

struct bad {
    const char *path, *value, *want;
};

static const struct bad bad_cases[] = {
    { "metadata.name", NULL, "metadata.name: required" },
    { "spec", NULL, "spec: required" },
    { "spec", "[]", "spec: expected an object" },
    { "spec.mpiReplicaSpecs", NULL, "spec.mpiReplicaSpecs: required" },
    { "spec.mpiReplicaSpecs.Workers", "{}", "spec.mpiReplicaSpecs.Workers: unknown replica type" },
    { "spec.mpiReplicaSpecs.Launcher", NULL, "spec.mpiReplicaSpecs.Launcher: required" },
    { "spec.mpiReplicaSpecs.Launcher.replicas", "2", "spec.mpiReplicaSpecs.Launcher.replicas: must be 1, got 2" },
    { "spec.mpiReplicaSpecs.Worker.replicas", "0", "spec.mpiReplicaSpecs.Worker.replicas: must be from 1" },
    { "spec.mpiReplicaSpecs.Worker.replicas", "\"two\"",
      "spec.mpiReplicaSpecs.Worker.replicas: expected an integer, got a string" },
    { "spec.mpiReplicaSpecs.Worker.template", "\"pod\"",
      "spec.mpiReplicaSpecs.Worker.template: expected an object, got a string" },
    { "spec.mpiReplicaSpecs.Worker.restartPolicy", "\"ExitCode\"",
      "spec.mpiReplicaSpecs.Worker.restartPolicy: expected Never, OnFailure or Always" },
    { "spec.mpiReplicaSpecs.Launcher.template", NULL, "spec.mpiReplicaSpecs.Launcher.template: required" },
    { "spec.mpiReplicaSpecs.Worker.template.spec.containers", "[]",
      "spec.mpiReplicaSpecs.Worker.template.spec.containers: at least one container" },
    { "spec.mpiReplicaSpecs.Launcher.template.spec.containers", "[{\"image\":\"x\"}]",
      "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].name: required" },
    { "spec.mpiReplicaSpecs.Worker.template.spec.containers", "[{\"name\":\"w\"}]",
      "spec.mpiReplicaSpecs.Worker.template.spec.containers[0].image: required" },
    { "spec.mpiReplicaSpecs.Launcher.template.spec.containers",
      "[{\"name\":\"l\",\"image\":\"i\",\"command\":\"mpirun -n 2\"}]",
      "containers[0].command: expected an array of strings" },
    { "spec.mpiReplicaSpecs.Launcher.template.spec.containers", "[{\"name\":\"l\",\"image\":\"i\",\"args\":[\"-n\",2]}]",
      "containers[0].args[1]: expected a string" },
    { "spec.slotsPerWorker", "0", "spec.slotsPerWorker: must be from 1 to 1024, got 0" },
    { "spec.slotsPerWorker", "\"2\"", "spec.slotsPerWorker: expected an integer, got a string" },
    { "spec.cleanPodPolicy", "\"Sometimes\"", "spec.cleanPodPolicy: expected one of None, Running, All, got \"Sometimes\"" },
    { "spec.backoffLimit", "-1", "spec.backoffLimit: must be >= 0, got -1" },
    { "spec.activeDeadlineSeconds", "0", "spec.activeDeadlineSeconds: must be >= 1, got 0" },
    { "spec.runPolicy.ttlSecondsAfterFinished", "-5", "spec.runPolicy.ttlSecondsAfterFinished: must be >= 0" },
    { "spec.runPolicy.suspend", "\"yes\"", "spec.runPolicy.suspend: expected a boolean, got a string" },
    { "spec.runPolicy.managedBy", "\"me\"",
      "spec.runPolicy.managedBy: expected kubeflow.org/mpi-operator or kueue.x-k8s.io/multikueue" },
    { "spec.runPolicy", "7", "spec.runPolicy: expected an object, got an integer" },
    { "spec.mpiDistribution", "\"OpenMPI5\"", "spec.mpiDistribution: expected one of OpenMPI, IntelMPI, MPICH" },
    { "spec.mpiImplementation", "\"LAM\"", "spec.mpiImplementation: expected one of OpenMPI, Intel, MPICH" },
    { "spec.launcherCreationPolicy", "\"Later\"",
      "spec.launcherCreationPolicy: expected one of AtStartup, WaitForWorkersReady" },
    { "spec.sshAuthMountPath", "\"relative/.ssh\"", "spec.sshAuthMountPath: expected an absolute path" },
    { "spec.sshAuthMountPath", "\"/root/.ssh;touch /tmp/x\"",
      "spec.sshAuthMountPath: \"/root/.ssh;touch /tmp/x\" contains ';'; a mount path may only contain" },
    { "spec.sshAuthMountPath", "\"/home/$(id -un)/.ssh\"", "spec.sshAuthMountPath: \"/home/$(id -un)/.ssh\" contains '$'" },
    { "spec.sshAuthMountPath", "\"/home/`id`\"", "spec.sshAuthMountPath: \"/home/`id`\" contains '`'" },
    { "spec.sshAuthMountPath", "\"/home/my user/.ssh\"", "spec.sshAuthMountPath: \"/home/my user/.ssh\" contains 0x20" },
    { "spec.sshAuthMountPath", "\"/home/x'y\"", "spec.sshAuthMountPath: \"/home/x'y\" contains '''" },
    { "spec.sshAuthMountPath", "\"/home/a\\nb\"", "contains 0x0a" },
    { "spec.sshAuthMountPath", "\"/home/../etc\"", "spec.sshAuthMountPath: \"/home/../etc\" must not contain '..'" },
    { "spec.runLauncherAsWorker", "1", "spec.runLauncherAsWorker: expected a boolean, got an integer" },
    { "spec.mainContainer", "\"nope\"", "spec.mainContainer: no container named \"nope\" in the Worker template" },
    { "metadata.name", "\"TF_Job\"", "metadata.name: \"TF_Job\" gives worker pod name \"TF_Job-worker-1\"" },
    { "metadata.name", "\"a-very-long-job-name-that-is-just-too-long-for-a-label-xyz\"", "which must be a DNS-1035 label" },
    { "metadata.annotations", "{\"mpi-k8s.io/transport\":\"rdma\"}",
      "metadata.annotations[mpi-k8s.io/transport]: expected \"exec\" or \"ssh\", got \"rdma\"" },
    { "metadata.annotations", "{\"mpi-k8s.io/agent-run\":\"maybe\"}",
      "metadata.annotations[mpi-k8s.io/agent-run]: expected \"true\" or \"false\"" },
    { "metadata.annotations", "{\"mpi-k8s.io/worker-timeout\":\"10m\"}",
      "metadata.annotations[mpi-k8s.io/worker-timeout]: expected an integer string" },
    { "metadata.annotations", "{\"mpi-k8s.io/network-timeout\":\"1m\"}",
      "metadata.annotations[mpi-k8s.io/network-timeout]: expected an integer string from 0 to 604800" },
    { "metadata.annotations", "{\"mpi-k8s.io/network-timeout\":\"-5\"}",
      "metadata.annotations[mpi-k8s.io/network-timeout]: expected an integer string from 0 to 604800" },
    { "metadata.annotations", "{\"mpi-k8s.io/ip-family\":\"ipv6\"}",
      "metadata.annotations[mpi-k8s.io/ip-family]: expected \"IPv4\" or \"IPv6\", got \"ipv6\"" },
    { "metadata.annotations", "{\"mpi-k8s.io/ip-family\":6}",
      "metadata.annotations[mpi-k8s.io/ip-family]: expected \"IPv4\" or \"IPv6\", got \"(not a string)\"" },
    { "metadata.annotations", "{\"mpi-k8s.io/network-timeout\":20}",
      "metadata.annotations[mpi-k8s.io/network-timeout]: expected an integer string" },
    { "metadata.annotations", "{\"mpi-k8s.io/ssh-port\":\"70000\"}",
      "metadata.annotations[mpi-k8s.io/ssh-port]: expected an integer string from 1 to 65535" },
};

static void test_malformed(void **state)
{
    (void)state;
    size_t n = sizeof bad_cases / sizeof bad_cases[0];
    assert_true(n >= 25);
    for (size_t i = 0; i < n; i++) {
        json_t *o = variant(bad_cases[i].path, bad_cases[i].value);
        struct mpijob j;
        char *err = NULL;
        int rc = mpijob_load(o, &j, &err);
        if (rc == 0 || !err || !strstr(err, bad_cases[i].want))
            fail_msg("case %zu (%s): rc %d, message \"%s\", wanted \"%s\"", i, bad_cases[i].path, rc, err ? err : "(none)",
                     bad_cases[i].want);
        assert_null(strchr(err, '\n'));
        free(err);
        json_decref(o);
    }
}

static void test_v1alpha2_defaults(void **state)
{
    (void)state;
    json_error_t je;
    json_t *o = json_loads(base_v1, 0, &je);
    struct mpijob j;
    char *err = NULL;
    assert_int_equal(mpijob_load(o, &j, &err), 0);
    assert_int_equal(j.version, MPIJOB_V1ALPHA2);
    assert_int_equal(j.transport, MPIK8S_TRANSPORT_EXEC);
    assert_int_equal(j.backoff_limit, 6);
    assert_int_equal(j.clean_policy, CLEAN_RUNNING);
    assert_int_equal(j.slots_per_worker, 2);
    assert_int_equal(j.worker.replicas, 2);
    assert_int_equal(j.network_timeout_s, 60); /* MPIK8S_NETWORK_TIMEOUT_DEFAULT */
    assert_string_equal(j.launcher.restart_policy, "OnFailure");
    assert_string_equal(j.worker.restart_policy, "Never");
    json_decref(o);
    /* v1alpha2 forces the launcher to OnFailure unless Never (upstream default.go) */
    o = variant("spec.mpiReplicaSpecs.Launcher.restartPolicy", "\"Always\"");
    assert_int_equal(mpijob_load(o, &j, &err), 0);
    assert_string_equal(j.launcher.restart_policy, "OnFailure");
    assert_int_equal(j.impl, MPIK8S_MPI_OPENMPI);
    assert_false(mpijob_fqdn_hosts(&j));
    assert_string_equal(mpijob_worker_container(&j), "w");
    json_decref(o);
}

/* A v1alpha2 object read back through the v2beta1 endpoint (conversion None) keeps its shape. */
static void test_shape_detection(void **state)
{
    (void)state;
    json_t *o = variant("apiVersion", "\"kubeflow.org/v2beta1\"");
    struct mpijob j;
    assert_int_equal(mpijob_load(o, &j, NULL), 0);
    assert_int_equal(j.version, MPIJOB_V1ALPHA2);
    json_decref(o);
    o = variant("spec.cleanPodPolicy", NULL);
    json_object_set_new(o, "apiVersion", json_string("kubeflow.org/v2beta1"));
    assert_int_equal(mpijob_load(o, &j, NULL), 0);
    assert_int_equal(j.version, MPIJOB_V2BETA1);
    assert_int_equal(j.transport, MPIK8S_TRANSPORT_SSH);
    assert_int_equal(j.backoff_limit, MPIJOB_UNSET);
    assert_string_equal(j.ssh_auth_mount_path, "/root/.ssh");
    assert_true(mpijob_fqdn_hosts(&j));
    json_decref(o);
}

static void test_run_policy_wins(void **state)
{
    (void)state;
    json_t *o = variant("spec.runPolicy",
                        "{\"backoffLimit\":1,\"activeDeadlineSeconds\":30,\"cleanPodPolicy\":\"All\",\"suspend\":true}");
    struct mpijob j;
    assert_int_equal(mpijob_load(o, &j, NULL), 0);
    assert_int_equal(j.backoff_limit, 1);
    assert_int_equal(j.active_deadline_s, 30);
    assert_int_equal(j.clean_policy, CLEAN_ALL);
    assert_true(j.suspend);
    json_decref(o);
}

static void test_annotations(void **state)
{
    (void)state;
    json_t *o = variant(
        "metadata.annotations",
        "{\"mpi-k8s.io/transport\":\"ssh\",\"mpi-k8s.io/agent-run\":\"false\","
        "\"mpi-k8s.io/worker-timeout\":\"60\",\"mpi-k8s.io/progress-timeout\":\"120\",\"mpi-k8s.io/ssh-port\":\"22\","
        "\"mpi-k8s.io/network-timeout\":\"20\"}");
    struct mpijob j;
    assert_int_equal(mpijob_load(o, &j, NULL), 0);
    assert_int_equal(j.transport, MPIK8S_TRANSPORT_SSH);
    assert_false(j.agent_run);
    assert_int_equal(j.agent_timeout_s, 60);
    assert_int_equal(j.progress_timeout_s, 120);
    assert_int_equal(j.network_timeout_s, 20);
    assert_int_equal(j.ssh_port, 22);
    assert_true(mpijob_fqdn_hosts(&j));
    json_decref(o);
}

/* The annotation mpi-k8s.io/pod-failure-policy: each malformed policy refused naming the rule
 * and field; a good one (launcher restartPolicy Never) reaches the launcher Job as its
 * podFailurePolicy. */
static json_t *with_policy(const char *policy, const char *launcher_restart)
{
    json_t *o = variant("metadata.annotations", "{}");
    json_object_set_new(kube_json_at(o, "metadata", "annotations"), "mpi-k8s.io/pod-failure-policy", json_string(policy));
    if (launcher_restart)
        json_object_set_new(kube_json_at(o, "spec", "mpiReplicaSpecs", "Launcher"), "restartPolicy",
                            json_string(launcher_restart));
    return o;
}

static void test_pod_failure_policy(void **state)
{
    (void)state;
    static const struct {
        const char *policy, *want;
    } bad[] = {
        { "rules: []", "pod-failure-policy]: expected a JSON object" },
        { "{\"rules\":{}}", "rules: expected a list of at most 20 rules" },
        { "{\"rule\":[]}", "podFailurePolicy: unknown field \"rule\"" },
        { "{\"rules\":[{\"action\":\"Retry\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[3]}}]}",
          "rules[0].action: expected FailJob, Ignore or Count" },
        { "{\"rules\":[{\"action\":\"Ignore\"}]}", "rules[0]: expected exactly one of onExitCodes and onPodConditions" },
        { "{\"rules\":[{\"action\":\"Count\",\"onExitCode\":{}}]}", "rules[0]: unknown field \"onExitCode\"" },
        { "{\"rules\":[{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":\"Equals\",\"values\":[3]}}]}",
          "rules[0].onExitCodes.operator: expected \"In\" or \"NotIn\"" },
        { "{\"rules\":[{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[3,2]}}]}",
          "rules[0].onExitCodes.values[1]: expected exit codes 0-255 in increasing order" },
        { "{\"rules\":[{\"action\":\"Count\",\"onExitCodes\":{\"operator\":\"NotIn\",\"values\":[1]}},"
          "{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[0]}}]}",
          "rules[1].onExitCodes.values[0]: expected exit codes 0-255" },
        { "{\"rules\":[{\"action\":\"Ignore\",\"onPodConditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"Yes\"}]}]}",
          "rules[0].onPodConditions[0].status: expected True, False or Unknown" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *o = with_policy(bad[i].policy, "Never");
        struct mpijob j;
        char *err = NULL;
        int rc = mpijob_load(o, &j, &err);
        if (rc == 0 || !err || !strstr(err, bad[i].want) ||
            !strstr(err, "metadata.annotations[mpi-k8s.io/pod-failure-policy]"))
            fail_msg("policy %zu: rc %d, message \"%s\", wanted \"%s\"", i, rc, err ? err : "(none)", bad[i].want);
        free(err);
        json_decref(o);
    }
    const char *good = "{\"rules\":[{\"action\":\"Ignore\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[75]}},"
                       "{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":\"NotIn\",\"values\":[0]}}]}";
    json_t *o = with_policy(good, NULL); /* v1alpha2's launcher restarts OnFailure */
    struct mpijob j;
    char *err = NULL;
    assert_int_equal(mpijob_load(o, &j, &err), -1);
    assert_non_null(strstr(err, "needs spec.mpiReplicaSpecs.Launcher.restartPolicy Never"));
    free(err);
    json_decref(o);
    o = with_policy(good, "Never");
    assert_int_equal(mpijob_load(o, &j, NULL), 0);
    struct build_opts bo = { 0 };
    json_t *job = objects_launcher_job(&j, &bo);
    json_error_t je;
    json_t *want = json_loads(good, 0, &je);
    assert_true(json_equal(kube_json_at(job, "spec", "podFailurePolicy"), want));
    assert_string_equal(json_string_value(kube_json_at(job, "spec", "template", "spec", "restartPolicy")), "Never");
    json_decref(want);
    json_decref(job);
    json_decref(o);
}

static void test_seed_example_accepted(void **state)
{
    (void)state;
    json_error_t je;
    json_t *in = json_load_file("tests/golden/controller/inputs/v1alpha2-openmpi-exec-seed.json", 0, &je);
    assert_non_null(in);
    struct mpijob j;
    char *err = NULL;
    assert_int_equal(mpijob_load(json_object_get(in, "job"), &j, &err), 0);
    assert_int_equal(j.clean_policy, CLEAN_RUNNING);
    json_decref(in);
}

/* Accepted mount paths, and the worker's default sshd command keeps whatever path it
 * is given one word: a fake mpi-sshd first in PATH prints its arguments, and a path
 * with $(...) arrives verbatim (before quoting, the shell ran the substitution). */
static void test_ssh_path_quoted(void **state)
{
    (void)state;
    const char *good[] = { "/root/.ssh", "/home/mpiuser/.ssh", "/home/a_b-c+d@e~/.x..y" };
    for (size_t i = 0; i < 3; i++) {
        char v[128];
        snprintf(v, sizeof v, "\"%s\"", good[i]);
        json_t *o = variant("spec.sshAuthMountPath", v);
        struct mpijob j;
        char *err = NULL;
        if (mpijob_load(o, &j, &err) != 0)
            fail_msg("%s refused: %s", good[i], err);
        json_decref(o);
    }
    json_t *o = variant("metadata.annotations", "{\"mpi-k8s.io/transport\":\"ssh\"}");
    struct mpijob j;
    char *err = NULL;
    assert_int_equal(mpijob_load(o, &j, &err), 0);
    j.ssh_auth_mount_path = "/tmp/$(echo INJECTED)'q"; /* past validation: the builder alone */
    struct build_opts bo;
    objects_build_opts_default(&bo);
    json_t *pod = objects_worker_pod(&j, &bo, 0);
    assert_non_null(pod);
    json_t *cmd = json_object_get(json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0), "command");
    const char *script = json_string_value(json_array_get(cmd, 2));
    assert_non_null(script);
    char dir[] = "/tmp/ut-sshq-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *fake = NULL, *path = NULL;
    assert_true(asprintf(&fake, "%s/mpi-sshd", dir) > 0);
    FILE *f = fopen(fake, "w");
    assert_non_null(f);
    fputs("#!/bin/sh\nfor a in \"$@\"; do printf '[%s]' \"$a\"; done\n", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(fake, 0755), 0);
    assert_true(asprintf(&path, "PATH=%s:/usr/bin:/bin", dir) > 0);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        char *envp[] = { path, NULL };
        execle("/bin/sh", "sh", "-c", script, (char *)NULL, envp);
        _exit(127);
    }
    close(fds[1]);
    char buf[512];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof buf - 1 && (r = read(fds[0], buf + n, sizeof buf - 1 - n)) > 0)
        n += (size_t)r;
    buf[n] = 0;
    close(fds[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    unlink(fake);
    rmdir(dir);
    assert_string_equal(buf, "[--dir][/tmp/$(echo INJECTED)'q][--port][2222]");
    free(fake);
    free(path);
    json_decref(pod);
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malformed),       cmocka_unit_test(test_v1alpha2_defaults),
        cmocka_unit_test(test_shape_detection), cmocka_unit_test(test_run_policy_wins),
        cmocka_unit_test(test_annotations),     cmocka_unit_test(test_seed_example_accepted),
        cmocka_unit_test(test_ssh_path_quoted), cmocka_unit_test(test_pod_failure_policy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
