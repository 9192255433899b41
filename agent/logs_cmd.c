/* logs_cmd.c - `mpi-agent logs [-f] JOB`: the launcher's output as the agent
 * kept it in the ConfigMap <job>-log (joblog.c), readable after every pod of
 * the job is gone. With -f, while the newest launcher pod runs, its log is
 * followed through the API (polled every second, new bytes printed); what the
 * pod printed is then complete and the ConfigMap is not printed again. Without
 * a kept ConfigMap (a launcher whose write was refused), the newest launcher
 * pod's log. The plugin's `kubectl mpijob logs` prints through the same code
 * (agent_logs_write, its sink filters one rank's lines). */
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
    json_array_foreach(kube_json_at(l, "items"), i, p) {
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

struct log_out {
    agent_log_sink sink;
    void *arg;
};

/* Passes what pod's log has beyond *done bytes to out (previous: the container's last instance);
 * 0, or -1 with *errmsg when it cannot be read. */
static int print_new(struct agent_session *s, const char *pod, const char *container, int previous, size_t *done,
                     const struct log_out *out, char **errmsg)
{
    char *path = kube_strdup_printf("/api/v1/namespaces/%s/pods/%s/log", s->ns, pod);
    char *q = kube_strdup_printf("container=%s%s", container ? container : "", previous ? "&previous=true" : "");
    struct kube_error e = KUBE_ERROR_INIT;
    size_t len = 0;
    char *body = path && q
                     ? kube_request_raw(s->client, "GET", path, container || previous ? q : NULL, NULL, 0, NULL, 1, &len, &e)
                     : NULL;
    if (body && len > *done) {
        out->sink(body + *done, len - *done, out->arg);
        *done = len;
    }
    int rc = body ? 0 : -1;
    if (!body)
        kube_set_err(errmsg, "pod %s: %s", pod, e.message ? e.message : "its log cannot be read");
    free(body);
    free(q);
    free(path);
    kube_error_clear(&e);
    return rc;
}

/* The name of the first container of pod, or NULL (a pointer into pod). */
static const char *first_container(const json_t *pod)
{
    return kube_json_at_str(json_array_get(kube_json_at(pod, "spec", "containers"), 0), "name");
}

/* Follows the running launcher's log; 1 when it printed one, 0 when there was none running. */
static int follow(struct agent_session *s, const struct log_out *out)
{
    json_t *pod = newest_launcher(s);
    const char *ph = kube_json_at_str(pod, "status", "phase") ?: "";
    if (!pod || (strcmp(ph, "Running") != 0 && strcmp(ph, "Pending") != 0)) {
        json_decref(pod);
        return 0;
    }
    char *name = strdup(kube_obj_name(pod));
    char *ctr = strdup(first_container(pod) ?: "");
    json_decref(pod);
    size_t done = 0;
    for (int running = 1; running && name && ctr;) {
        char *err = NULL;
        print_new(s, name, *ctr ? ctr : NULL, 0, &done, out, &err);
        free(err);
        err = NULL;
        struct kube_error e = KUBE_ERROR_INIT;
        json_t *p = kube_get(s->client, &KUBE_RES_PODS, s->ns, name, &e);
        ph = kube_json_at_str(p, "status", "phase") ?: "";
        running = p && (strcmp(ph, "Running") == 0 || strcmp(ph, "Pending") == 0);
        json_decref(p);
        kube_error_clear(&e);
        if (running)
            kube_sleep_ms(FOLLOW_POLL_MS);
        else
            print_new(s, name, *ctr ? ctr : NULL, 0, &done, out, &err); /* the last lines */
        free(err);
    }
    free(name);
    free(ctr);
    return 1;
}

/* The newest launcher pod's log once (previous: its container's last instance). 0, or -1 with *errmsg. */
static int launcher_log(struct agent_session *s, int previous, const struct log_out *out, char **errmsg)
{
    json_t *pod = newest_launcher(s);
    size_t done = 0;
    int rc = pod ? print_new(s, kube_obj_name(pod), first_container(pod), previous, &done, out, errmsg)
                 : kube_set_err(errmsg, "job %s/%s: no launcher pod", s->ns, s->o->job);
    json_decref(pod);
    return rc;
}

int agent_logs_write(struct agent_session *s, int follow_it, int previous, agent_log_sink sink, void *arg, char **errmsg)
{
    struct log_out out = { sink, arg };
    if (previous)
        return launcher_log(s, 1, &out, errmsg);
    if (follow_it && follow(s, &out))
        return 0;
    char *name = kube_strdup_printf("%s%s", s->o->job, AGENT_JOBLOG_SUFFIX);
    struct kube_error e = KUBE_ERROR_INIT;
    json_t *cm = name ? kube_get(s->client, &KUBE_RES_CONFIGMAPS, s->ns, name, &e) : NULL;
    const char *text = kube_json_at_str(cm, "data", AGENT_JOBLOG_KEY);
    int rc = 0;
    if (text)
        sink(text, strlen(text), arg);
    else if (launcher_log(s, 0, &out, errmsg) < 0)
        rc = kube_set_err(errmsg, "no launcher output kept for %s/%s (%s) and no launcher pod to read", s->ns, s->o->job,
                          !cm ? (e.message ? e.message : "ConfigMap not found") : "the ConfigMap has no \"log\" key");
    json_decref(cm);
    kube_error_clear(&e);
    free(name);
    return rc;
}

static void to_stdout(const char *buf, size_t len, void *arg)
{
    (void)arg;
    fwrite(buf, 1, len, stdout);
    fflush(stdout);
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
    char *err = NULL;
    int rc = 1;
    if (!o->job || agent_session_connect(&s, o, &err) < 0 || agent_logs_write(&s, o->follow, 0, to_stdout, NULL, &err) < 0)
        fprintf(stderr, "mpi-agent logs: %s\n", err ? err : "out of memory");
    else
        rc = 0;
    free(err);
    agent_session_close(&s);
    return rc;
}
