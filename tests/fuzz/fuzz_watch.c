/* fuzz_watch.c - libFuzzer target: the watch stream parser fed the input in
 * chunks of varying size; events are inspected, ERROR events decoded. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/watch.h"

static int on_event(const struct kube_watch_event *ev, void *ud)
{
    size_t *n = ud;
    (*n)++;
    if (!ev->object || !json_is_object(ev->object))
        abort();
    if (ev->type == KUBE_EVENT_ERROR) {
        struct kube_error e = KUBE_ERROR_INIT;
        kube_status_decode_json(ev->object, 0, &e);
        if (!e.message)
            abort();
        kube_error_clear(&e);
    }
    (void)kube_obj_resource_version(ev->object);
    return *n > 1000; /* exercise early stop too */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t chunk = (data[0] % 17) + 1, n = 0;
    struct kube_watch_parser *p = kube_watch_parser_new(4096);
    if (!p)
        return 0;
    const char *s = (const char *)data + 1;
    size_t left = size - 1;
    while (left > 0) {
        size_t k = left < chunk ? left : chunk;
        char *err = NULL;
        int rc = kube_watch_parser_feed(p, s, k, on_event, &n, &err);
        if (rc < 0 && !err)
            abort();
        free(err);
        if (rc != 0)
            break;
        s += k;
        left -= k;
    }
    (void)kube_watch_parser_pending(p);
    kube_watch_parser_free(p);
    return 0;
}
