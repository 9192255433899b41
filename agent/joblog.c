/* joblog.c - the writer of <job>-log: a thread that merge-patches the
 * ConfigMap's "log" key with the output ring every AGENT_JOBLOG_PERIOD_MS when
 * it grew, and once more at exit. The ConfigMap is created here with the
 * MPIJob as its controller owner (taken from a worker pod's ownerReferences:
 * the launcher needs no access to MPIJobs), without blockOwnerDeletion (which
 * would need update on mpijobs/finalizers). Best effort: a failed write is
 * logged once and retried at the next period; the job never waits on it. */
#include "joblog.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/json.h"
#include "kube/log.h"
#include "kube/util.h"

struct agent_joblog {
    struct agent_session *s;
    char *name;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop, created, warned;
    uint64_t written; /* the ring's total at the last write */
};

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t k = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (k == 0 || k > n || (k == 2 && s[0] < 0xC2) || (k == 4 && s[0] > 0xF4))
        return 0;
    for (size_t i = 1; i < k; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if ((k == 3 && s[0] == 0xE0 && s[1] < 0xA0) || (k == 3 && s[0] == 0xED && s[1] >= 0xA0) ||
        (k == 4 && s[0] == 0xF0 && s[1] < 0x90) || (k == 4 && s[0] == 0xF4 && s[1] >= 0x90))
        return 0;
    return s[0] == 0 ? 0 : k;
}

size_t agent_utf8_sanitize(char *s, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_len((unsigned char *)s + i, n - i);
        if (k == 0) {
            s[i++] = '?';
            bad++;
        } else {
            i += k;
        }
    }
    return bad;
}

/* The MPIJob's controller reference, from a worker pod in the cache (new reference or NULL). */
static json_t *job_owner(struct agent_session *s)
{
    for (size_t i = 0; s->inf && i < s->hosts.n; i++) {
        json_t *pod = kube_informer_get(s->inf, s->ns, s->hosts.v[i].pod), *r, *pick = NULL;
        size_t k;
        json_array_foreach(kube_json_at(pod, "metadata", "ownerReferences"), k, r) {
            const char *kind = kube_json_at_str(r, "kind");
            if (kind && strcmp(kind, "MPIJob") == 0 && kube_json_at_bool(r, 0, "controller"))
                pick = json_deep_copy(r);
        }
        json_decref(pod);
        if (pick) {
            json_object_del(pick, "blockOwnerDeletion");
            return pick;
        }
    }
    return NULL;
}

static void warn_once(struct agent_joblog *l, const char *what, const struct kube_error *e)
{
    if (!l->warned)
        KLOG_WARN("launcher log ConfigMap %s: %s: %s (retried every %d s)", l->name, what, e->message ? e->message : "error",
                  AGENT_JOBLOG_PERIOD_MS / 1000);
    l->warned = 1;
}

/* Creates the ConfigMap with text (it may exist from an earlier launcher: then patched). */
static int create(struct agent_joblog *l, json_t *data)
{
    json_t *owner = job_owner(l->s);
    if (!owner)
        return -1;
    json_t *cm = json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s}, s:[o]}, s:O}", "apiVersion", "v1", "kind", "ConfigMap",
                           "metadata", "name", l->name, "labels", MPIK8S_LABEL_JOB_NAME, l->s->o->job, "mpi-k8s.io/log",
                           "launcher", "ownerReferences", owner, "data", data);
    struct kube_error e = KUBE_ERROR_INIT;
    json_t *r = cm ? kube_create(l->s->client, &KUBE_RES_CONFIGMAPS, l->s->ns, cm, &e) : NULL;
    int rc = r || e.reason == KUBE_ALREADY_EXISTS ? 0 : -1;
    if (rc < 0)
        warn_once(l, "create", &e);
    l->created = rc == 0;
    json_decref(r);
    json_decref(cm);
    kube_error_clear(&e);
    return r ? 1 : rc;
}

/* Writes the ring's text when it changed since the last write. */
static void write_now(struct agent_joblog *l)
{
    size_t len = 0;
    uint64_t total = 0;
    char *text = agent_outbuf_copy(&l->s->output, &len, &total);
    if (!text || (total == l->written && l->created)) {
        free(text);
        return;
    }
    agent_utf8_sanitize(text, len);
    json_t *data = json_pack("{s:s}", AGENT_JOBLOG_KEY, text);
    free(text);
    int done = data && !l->created ? create(l, data) : 0;
    if (data && l->created && done == 0) {
        struct kube_error e = KUBE_ERROR_INIT;
        json_t *patch = json_pack("{s:O}", "data", data);
        json_t *r =
            patch ? kube_patch(l->s->client, &KUBE_RES_CONFIGMAPS, l->s->ns, l->name, NULL, KUBE_PATCH_MERGE, patch, &e)
                  : NULL;
        done = r ? 1 : -1;
        if (!r)
            warn_once(l, "patch", &e);
        json_decref(r);
        json_decref(patch);
        kube_error_clear(&e);
    }
    if (done > 0)
        l->written = total;
    json_decref(data);
}

static void *writer(void *arg)
{
    struct agent_joblog *l = arg;
    pthread_mutex_lock(&l->mu);
    while (!l->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += AGENT_JOBLOG_PERIOD_MS / 1000;
        int rc = 0;
        while (!l->stop && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&l->cv, &l->mu, &until);
        pthread_mutex_unlock(&l->mu);
        write_now(l);
        pthread_mutex_lock(&l->mu);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

struct agent_joblog *agent_joblog_start(struct agent_session *s)
{
    if (!s->client || !s->o->job || !s->output.buf) {
        KLOG_INFO("not keeping the launcher's output in a ConfigMap: %s", !s->client   ? "no API access"
                                                                          : !s->o->job ? "no job name"
                                                                                       : "no output buffer");
        return NULL;
    }
    struct agent_joblog *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->s = s;
    l->name = kube_strdup_printf("%s%s", s->o->job, AGENT_JOBLOG_SUFFIX);
    if (!l->name || pthread_mutex_init(&l->mu, NULL) != 0) {
        free(l->name);
        free(l);
        return NULL;
    }
    pthread_cond_init(&l->cv, NULL);
    if (pthread_create(&l->th, NULL, writer, l) != 0) {
        pthread_cond_destroy(&l->cv);
        pthread_mutex_destroy(&l->mu);
        free(l->name);
        free(l);
        return NULL;
    }
    return l;
}

void agent_joblog_stop(struct agent_joblog *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    l->stop = 1;
    pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
    pthread_join(l->th, NULL);
    write_now(l); /* the last lines, mpirun's failure report among them */
    if (l->written)
        KLOG_INFO("launcher output kept in ConfigMap %s (key %s)", l->name, AGENT_JOBLOG_KEY);
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    free(l->name);
    free(l);
}
