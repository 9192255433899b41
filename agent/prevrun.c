/* prevrun.c - a failed run's summary and failure object, kept in the launcher's
 * emptyDir for a rerun of the same container (prevrun.h). */
#include "prevrun.h"
#include "kube/json.h"

#include <stdlib.h>

#include "safefile.h"
#include "kube/log.h"
#include "kube/util.h"

void agent_prev_run_save(const struct agent_session *s, const char *summary)
{
    if (!s->o->dest || !summary)
        return;
    json_t *o = json_pack("{s:s, s:O*}", "summary", summary, "failure", s->failure);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL,
         *path = kube_strdup_printf("%s/%s", s->o->dest, AGENT_PREV_RUN_FILE);
    char *err = NULL;
    if (!text || !path || agent_replace_file(path, text, 0644, &err) < 0)
        KLOG_DEBUG("not keeping this run's failure for a rerun: %s", err ? err : "out of memory");
    free(err);
    free(path);
    free(text);
    json_decref(o);
}

json_t *agent_prev_run_load(const char *dest)
{
    if (!dest)
        return NULL;
    char *path = kube_strdup_printf("%s/%s", dest, AGENT_PREV_RUN_FILE);
    json_error_t je;
    json_t *o = path ? json_load_file(path, 0, &je) : NULL;
    free(path);
    if (o && !json_is_string(kube_json_at(o, "summary"))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

char *agent_prev_run_lead(struct agent_session *s, const json_t *prev, char *summary)
{
    const char *ps = kube_json_at_str(prev, "summary");
    if (!ps)
        return summary;
    KLOG_ERROR("the previous run of this launcher container failed: %s", ps);
    char *out =
        kube_strdup_printf("%s (the previous run of this launcher container); then: %s", ps, summary ? summary : "failed");
    json_t *pf = kube_json_at(prev, "failure");
    if (json_is_object(pf) && (!s->failure || s->stopped_by_signal)) {
        json_decref(s->failure);
        s->failure = json_incref(pf);
    }
    if (!out)
        return summary;
    free(summary);
    return out;
}
