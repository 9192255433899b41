/* test_controller_golden.c - golden tests for the object builders: every MPIJob
 * in tests/golden/controller/inputs/ (both API versions, each MPI flavour, both
 * transports, gang scheduling) is turned into the exact objects the controller
 * creates and compared byte for byte with tests/golden/controller/<name>.json.
 * UPDATE_GOLDEN=1 rewrites the golden files (review the diff before committing). */
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

static const char *golden_dir(void)
{
    const char *d = getenv("GOLDEN_DIR");
    return d ? d : "tests/golden/controller";
}

static json_t *build_all(json_t *in)
{
    json_t *job = json_object_get(in, "job"), *opts = json_object_get(in, "opts");
    struct mpijob j;
    char *err = NULL;
    if (mpijob_load(job, &j, &err) < 0) {
        fprintf(stderr, "invalid golden input: %s\n", err);
        free(err);
        return NULL;
    }
    struct build_opts o;
    objects_build_opts_default(&o);
    if (json_string_value(json_object_get(opts, "agent_image")))
        o.agent_image = json_string_value(json_object_get(opts, "agent_image"));
    o.gang = json_string_value(json_object_get(opts, "gang"));
    o.cluster_domain = json_string_value(json_object_get(opts, "cluster_domain"));
    unsigned char running[64] = { 1, 0, 1, 1 };
    json_t *out =
        json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:[]}", "configmap", objects_configmap(&j, &o, running), "serviceaccount",
                  objects_service_account(&j), "role", objects_role(&j, 1, 1), "rolebinding", objects_role_binding(&j),
                  "service", objects_service(&j), "launcher", objects_launcher_job(&j, &o), "workers");
    for (long long i = 0; i < j.worker.replicas; i++)
        json_array_append_new(json_object_get(out, "workers"), objects_worker_pod(&j, &o, i));
    if (j.transport == MPIK8S_TRANSPORT_SSH)
        json_object_set_new(
            out, "secret",
            objects_ssh_secret(&j, "-----BEGIN OPENSSH PRIVATE KEY-----\ntest\n-----END OPENSSH PRIVATE KEY-----\n",
                               "ssh-ed25519 AAAAtest mpi-k8s\n"));
    json_t *pg = objects_podgroup(&j, &o);
    if (pg)
        json_object_set_new(out, "podgroup", pg);
    return out;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n = getdelim(&buf, &cap, '\0', f);
    fclose(f);
    if (n < 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static void check_case(const char *name)
{
    char in_path[512], gold_path[512];
    snprintf(in_path, sizeof in_path, "%s/inputs/%s", golden_dir(), name);
    snprintf(gold_path, sizeof gold_path, "%s/%.*s.golden.json", golden_dir(), (int)(strlen(name) - 5), name);
    json_error_t je;
    json_t *in = json_load_file(in_path, 0, &je);
    assert_non_null(in);
    json_t *out = build_all(in);
    assert_non_null(out);
    char *got = json_dumps(out, JSON_INDENT(2) | JSON_SORT_KEYS);
    assert_non_null(got);
    size_t len = strlen(got);
    if (getenv("UPDATE_GOLDEN") && strcmp(getenv("UPDATE_GOLDEN"), "1") == 0) {
        FILE *f = fopen(gold_path, "w");
        assert_non_null(f);
        assert_int_equal(fwrite(got, 1, len, f), len);
        fputc('\n', f);
        assert_int_equal(fclose(f), 0);
        printf("updated %s\n", gold_path);
    } else {
        char *want = read_all(gold_path);
        if (!want)
            fail_msg("missing golden file %s (run with UPDATE_GOLDEN=1 and review)", gold_path);
        if (strncmp(got, want, len) != 0 || strcmp(want + len, "\n") != 0) {
            fprintf(stderr, "golden mismatch for %s; got:\n%s\n", gold_path, got);
            free(want);
            fail_msg("%s differs from the builders' output", gold_path);
        }
        free(want);
    }
    free(got);
    json_decref(out);
    json_decref(in);
}

static void test_golden_all(void **state)
{
    (void)state;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/inputs", golden_dir());
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    assert_true(n > 0);
    int cases = 0;
    for (int i = 0; i < n; i++) {
        const char *nm = names[i]->d_name;
        size_t l = strlen(nm);
        if (l > 5 && strcmp(nm + l - 5, ".json") == 0) {
            check_case(nm);
            cases++;
        }
        free(names[i]);
    }
    free(names);
    assert_true(cases >= 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_golden_all) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
