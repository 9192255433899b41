/* watch.h - streaming watches: the newline-delimited JSON event parser (a pure
 * state machine fed arbitrary chunks), one watch request, and a resuming watch
 * that reconnects from the last resourceVersion and reports 410 Gone. */
#ifndef KUBE_WATCH_H
#define KUBE_WATCH_H

#include <stddef.h>
#include <jansson.h>
#include "kube/client.h"

enum kube_event_type {
    KUBE_EVENT_ADDED,
    KUBE_EVENT_MODIFIED,
    KUBE_EVENT_DELETED,
    KUBE_EVENT_BOOKMARK,
    KUBE_EVENT_ERROR, /* object is a metav1.Status */
};

struct kube_watch_event {
    enum kube_event_type type;
    json_t *object; /* owned by the event; a callback may take it (json_incref) */
};

/* Returns "ADDED", "MODIFIED", ... for t. */
const char *kube_event_type_name(enum kube_event_type t);
/* Parses one line {"type":...,"object":{...}} (no newline needed). 0 ok (ev filled, caller clears),
 * 1 blank line (nothing), -1 malformed with *errmsg. */
int kube_watch_parse_line(const char *line, size_t len, struct kube_watch_event *ev, char **errmsg);
/* Releases ev->object and resets ev. */
void kube_watch_event_clear(struct kube_watch_event *ev);

/* Receives each parsed event; return 0 to continue, nonzero to stop the stream. */
typedef int (*kube_watch_cb)(const struct kube_watch_event *ev, void *ud);

struct kube_watch_parser;
/* Creates a parser that rejects lines longer than max_line bytes (0 = 64 MiB). */
struct kube_watch_parser *kube_watch_parser_new(size_t max_line);
/* Feeds a chunk (any split); calls cb for each complete line. 0 ok, 1 when cb asked to stop,
 * -1 on a malformed line or overlong line (*errmsg). */
int kube_watch_parser_feed(struct kube_watch_parser *p, const char *data, size_t len, kube_watch_cb cb, void *ud,
                           char **errmsg);
/* Bytes held of an incomplete trailing line (nonzero at end of stream = truncated event). */
size_t kube_watch_parser_pending(const struct kube_watch_parser *p);
/* Frees p (NULL is fine). */
void kube_watch_parser_free(struct kube_watch_parser *p);

/* One watch request (watch=1 plus opts: resource_version, selectors, timeout_seconds,
 * allow_bookmarks) until the server ends it, cb stops it, or cancel triggers (noticed within
 * ~100 ms). ERROR events are not passed to cb: they end the call with their decoded Status
 * (410 -> KUBE_GONE). Returns 0 on a normal end of stream, 1 when cb stopped, -1 with err. */
int kube_watch_stream(struct kube_client *c, const struct kube_resource *r, const char *ns,
                      const struct kube_list_opts *opts, kube_watch_cb cb, void *ud, struct kube_cancel *cancel,
                      struct kube_error *err);

/* A resuming watch from opts->resource_version: reconnects after normal ends and retryable
 * failures (backoff, reset after progress), always from the last resourceVersion seen (events
 * and BOOKMARKs, which are passed to cb). Returns 1 when cb stopped, -1 with err otherwise:
 * KUBE_GONE (relist needed), KUBE_CANCELLED, or a non-retryable error (403, 404...).
 * last_rv (may be NULL) receives a new copy of the last resourceVersion seen. */
int kube_watch(struct kube_client *c, const struct kube_resource *r, const char *ns, const struct kube_list_opts *opts,
               kube_watch_cb cb, void *ud, struct kube_cancel *cancel, char **last_rv, struct kube_error *err);

#endif
