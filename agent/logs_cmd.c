/* logs_cmd.c - `mpi-agent logs [-f] JOB`: the launcher's output as the agent
 * kept it in the ConfigMap <job>-log (joblog.c), readable after every pod of
 * the job is gone. With -f, while the newest launcher pod runs, its log is
 * followed through the API (polled every second, new bytes printed); what the
 * pod printed is then complete and the ConfigMap is not printed again. */
#include "commands.h"
#include "joblog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/json.h"
#include "kube/url.h"
#include "kube/util.h"

#define FOLLOW_POLL_MS 1000

/* The newest launcher pod of the job (new reference) or NULL. */
static json_t *newest_launcher(struct agent_session *s)
{
    struct kube_list_opts lo = { 0 };
    char *sel = kube_strdup_printf(MPIK8S_LABEL_JOB_NAME "=%s," MPIK8S_LABEL_ROLE "=" MPIK8S_ROLE_LAUNCHER, s->o->job);
    lo.label_selector = sel;
    struct kube_error e = KUBE_ERROR_INIT;
    json_t *l = sel ? kube_list(s->client, &KUBE_RES_PODS, s->ns, &lo, &e) : NULL, *p, *best = NULL;
    size_t i;
    json_array_foreach(json_object_get(l, "items"), i, p) {
        const char *ct = kube_json_at_str(p, "metadata", "creationTimestamp") ?: "";
        if (!best || strcmp(ct, kube_json_at_str(best, "metadata", "creationTimestamp") ?: "") > 0)
            best = p;
    }
    json_incref(best);
    json_decref(l);
    kube_error_clear(&e);
    free(sel);
    return best;
}

/* Prints what pod's log has beyond *done bytes; returns 0, or -1 when it cannot be read. */
static int print_new(struct agent_session *s, const char *pod, const char *container, size_t *done)
{
    char *path = kube_strdup_printf("/api/v1/namespaces/%s/pods/%s/log", s->ns, pod);
    char *q = container ? kube_strdup_printf("container=%s", container) : NULL;
    struct kube_error e = KUBE_ERROR_INIT;
    size_t len = 0;
    char *body = path ? kube_request_raw(s->client, "GET", path, q, NULL, 0, NULL, 1, &len, &e) : NULL;
    if (body && len > *done) {
        fwrite(body + *done, 1, len - *done, stdout);
        fflush(stdout);
        *done = len;
    }
    int rc = body ? 0 : -1;
    free(body);
    free(q);
    free(path);
    kube_error_clear(&e);
    return rc;
}

/* Follows the running launcher's log; 1 when it printed one, 0 when there was none running. */
static int follow(struct agent_session *s)
{
    json_t *pod = newest_launcher(s);
    const char *ph = kube_json_at_str(pod, "status", "phase") ?: "";
    if (!pod || (strcmp(ph, "Running") != 0 && strcmp(ph, "Pending") != 0)) {
        json_decref(pod);
        return 0;
    }
    char *name = strdup(kube_obj_name(pod));
    char *ctr = strdup(kube_json_at_str(json_array_get(kube_json_at(pod, "spec", "containers"), 0), "name") ?: "");
    json_decref(pod);
    size_t done = 0;
    for (int running = 1; running && name && ctr;) {
        print_new(s, name, *ctr ? ctr : NULL, &done);
        struct kube_error e = KUBE_ERROR_INIT;
        json_t *p = kube_get(s->client, &KUBE_RES_PODS, s->ns, name, &e);
        ph = kube_json_at_str(p, "status", "phase") ?: "";
        running = p && (strcmp(ph, "Running") == 0 || strcmp(ph, "Pending") == 0);
        json_decref(p);
        kube_error_clear(&e);
        if (running)
            kube_sleep_ms(FOLLOW_POLL_MS);
        else
            print_new(s, name, *ctr ? ctr : NULL, &done); /* the last lines */
    }
    free(name);
    free(ctr);
    return 1;
}

int agent_cmd_logs(struct agent_opts *o)
{
    if (o->argc != 1) {
        fprintf(stderr, "mpi-agent logs: expected one JOB argument, got %d\n", o->argc);
        return 2;
    }
    free(o->job);
    o->job = strdup(o->argv[0]);
    struct agent_session s = { 0 };
    char *err = NULL, *name = kube_strdup_printf("%s%s", o->job, AGENT_JOBLOG_SUFFIX);
    int rc = 1;
    if (!name || agent_session_connect(&s, o, &err) < 0) {
        fprintf(stderr, "mpi-agent logs: %s\n", err ? err : "out of memory");
        goto out;
    }
    if (o->follow && follow(&s)) {
        rc = 0;
        goto out;
    }
    struct kube_error e = KUBE_ERROR_INIT;
    json_t *cm = kube_get(s.client, &KUBE_RES_CONFIGMAPS, s.ns, name, &e);
    const char *text = kube_json_at_str(cm, "data", AGENT_JOBLOG_KEY);
    if (text) {
        fputs(text, stdout);
        rc = 0;
    } else {
        fprintf(stderr, "mpi-agent logs: no launcher output kept for %s/%s: %s\n", s.ns, o->job,
                !cm ? (e.message ? e.message : "ConfigMap not found") : "the ConfigMap has no \"log\" key");
    }
    json_decref(cm);
    kube_error_clear(&e);
out:
    free(name);
    free(err);
    agent_session_close(&s);
    return rc;
}
