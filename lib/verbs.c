/* verbs.c - JSON verbs over kube_request_raw: get, list (+ pagination),
 * create, update, patch, delete, and the status subresource. */
#include <stdlib.h>
#include <string.h>

#include "client_int.h"
#include "kube/client.h"
#include "kube/json.h"
#include "kube/util.h"

static int method_idempotent(const char *m)
{
    return !strcmp(m, "GET") || !strcmp(m, "HEAD") || !strcmp(m, "PUT") || !strcmp(m, "DELETE");
}

/* Request with JSON in/out and an extra cancel token. */
static json_t *request_json(struct kube_client *c, const char *method, const char *path, const char *query,
                            const json_t *body, const char *content_type, struct kube_cancel *extra, struct kube_error *err)
{
    char *b = NULL;
    if (body) {
        b = json_dumps(body, JSON_COMPACT);
        if (!b) {
            kube_error_set(err, 0, KUBE_BAD_REQUEST, "%s %s: request body cannot be serialized", method, path);
            return NULL;
        }
    }
    size_t len = 0;
    char *reply = Kube_request_raw_cancel(c, method, path, query, b, b ? strlen(b) : 0,
                                          content_type ? content_type : "application/json", method_idempotent(method), extra,
                                          &len, err);
    free(b);
    if (!reply)
        return NULL;
    if (len == 0) {
        free(reply);
        return json_object();
    }
    char *perr = NULL;
    json_t *v = kube_json_parse(reply, len, &perr);
    free(reply);
    if (!v) {
        kube_error_set(err, err->http_code, KUBE_PROTOCOL, "%s %s: reply is not JSON: %s", method, path, perr ? perr : "?");
        free(perr);
    }
    return v;
}

json_t *kube_request(struct kube_client *c, const char *method, const char *path, const char *query, const json_t *body,
                     const char *content_type, struct kube_error *err)
{
    return request_json(c, method, path, query, body, content_type, NULL, err);
}

/* Builds the path or reports bad input. */
static char *path_or_err(const struct kube_resource *r, const char *ns, const char *name, const char *sub,
                         struct kube_error *err)
{
    if (r && r->namespaced && name && !ns) {
        kube_error_set(err, 0, KUBE_BAD_REQUEST, "%s \"%s\": a namespace is required", r->resource, name);
        return NULL;
    }
    char *p = kube_resource_path(r, ns, name, sub);
    if (!p)
        kube_error_set(err, 0, KUBE_BAD_REQUEST, "invalid resource path (resource %s, namespace \"%s\", name \"%s\")",
                       r && r->resource ? r->resource : "?", ns ? ns : "", name ? name : "");
    return p;
}

static json_t *verb(struct kube_client *c, const char *method, const struct kube_resource *r, const char *ns,
                    const char *name, const char *sub, const char *query, const json_t *body, const char *ctype,
                    struct kube_error *err)
{
    char *path = path_or_err(r, ns, name, sub, err);
    if (!path)
        return NULL;
    json_t *v = request_json(c, method, path, query, body, ctype, NULL, err);
    free(path);
    return v;
}

json_t *kube_get(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                 struct kube_error *err)
{
    return verb(c, "GET", r, ns, name, NULL, NULL, NULL, NULL, err);
}

json_t *kube_get_status(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                        struct kube_error *err)
{
    return verb(c, "GET", r, ns, name, "status", NULL, NULL, NULL, err);
}

static json_t *list_page(struct kube_client *c, const struct kube_resource *r, const char *ns,
                         const struct kube_list_opts *opts, struct kube_cancel *extra, struct kube_error *err)
{
    struct kube_query *q = kube_query_new();
    char *path = path_or_err(r, ns, NULL, NULL, err);
    json_t *v = NULL;
    if (!q || kube_query_add_list_opts(q, opts)) {
        kube_error_set(err, 0, KUBE_BAD_REQUEST, "out of memory");
    } else if (path) {
        v = request_json(c, "GET", path, kube_query_str(q), NULL, NULL, extra, err);
        if (v && !json_is_array(json_object_get(v, "items"))) {
            kube_error_set(err, 200, KUBE_PROTOCOL, "GET %s: reply is not a List (no items array)", path);
            json_decref(v);
            v = NULL;
        }
    }
    kube_query_free(q);
    free(path);
    return v;
}

json_t *kube_list(struct kube_client *c, const struct kube_resource *r, const char *ns, const struct kube_list_opts *opts,
                  struct kube_error *err)
{
    return list_page(c, r, ns, opts, NULL, err);
}

json_t *kube_list_cancel(struct kube_client *c, const struct kube_resource *r, const char *ns,
                         const struct kube_list_opts *opts, struct kube_cancel *extra, struct kube_error *err)
{
    return list_page(c, r, ns, opts, extra, err);
}

/* Pages through continue tokens, appending items to the first page. */
static json_t *list_pages(struct kube_client *c, const struct kube_resource *r, const char *ns,
                          const struct kube_list_opts *opts, struct kube_cancel *extra, struct kube_error *err)
{
    struct kube_list_opts o = opts ? *opts : (struct kube_list_opts){ 0 };
    o.continue_token = NULL;
    json_t *all = list_page(c, r, ns, &o, extra, err);
    char *cont = NULL;
    for (int pages = 1; all; pages++) {
        free(cont);
        const char *ct = kube_json_at_str(all, "metadata", "continue");
        cont = ct && *ct ? strdup(ct) : NULL;
        if (!cont)
            break;
        json_object_del(json_object_get(all, "metadata"), "continue");
        if (pages > 100000) {
            kube_error_set(err, 0, KUBE_PROTOCOL, "list %s: more than 100000 pages", r->resource);
            json_decref(all);
            all = NULL;
            break;
        }
        o.continue_token = cont;
        o.resource_version = NULL; /* not allowed together with continue */
        json_t *page = list_page(c, r, ns, &o, extra, err);
        if (!page) {
            json_decref(all);
            all = NULL;
            break;
        }
        json_array_extend(json_object_get(all, "items"), json_object_get(page, "items"));
        json_t *pm = json_object_get(page, "metadata");
        if (json_object_get(pm, "continue"))
            json_object_set(json_object_get(all, "metadata"), "continue", json_object_get(pm, "continue"));
        json_decref(page);
    }
    free(cont);
    return all;
}

json_t *Kube_list_all_cancel(struct kube_client *c, const struct kube_resource *r, const char *ns,
                             const struct kube_list_opts *opts, struct kube_cancel *extra, struct kube_error *err)
{
    json_t *all = list_pages(c, r, ns, opts, extra, err);
    if (!all && err->reason == KUBE_GONE && opts && opts->limit > 0) {
        /* the continue token expired mid-way: fall back to one unpaginated list, as client-go does */
        struct kube_list_opts o = *opts;
        o.limit = 0;
        o.continue_token = NULL;
        all = list_page(c, r, ns, &o, extra, err);
    }
    return all;
}

json_t *kube_list_all(struct kube_client *c, const struct kube_resource *r, const char *ns,
                      const struct kube_list_opts *opts, struct kube_error *err)
{
    return Kube_list_all_cancel(c, r, ns, opts, NULL, err);
}

json_t *kube_create(struct kube_client *c, const struct kube_resource *r, const char *ns, const json_t *obj,
                    struct kube_error *err)
{
    return verb(c, "POST", r, ns, NULL, NULL, NULL, obj, NULL, err);
}

static json_t *update_sub(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                          const char *sub, const json_t *obj, struct kube_error *err)
{
    if (!name)
        name = kube_obj_name(obj);
    if (!name) {
        kube_error_set(err, 0, KUBE_BAD_REQUEST, "update %s: no name given and the object has no metadata.name",
                       r ? r->resource : "?");
        return NULL;
    }
    return verb(c, "PUT", r, ns, name, sub, NULL, obj, NULL, err);
}

json_t *kube_update(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                    const json_t *obj, struct kube_error *err)
{
    return update_sub(c, r, ns, name, NULL, obj, err);
}

json_t *kube_update_status(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                           const json_t *obj, struct kube_error *err)
{
    return update_sub(c, r, ns, name, "status", obj, err);
}

json_t *kube_patch(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                   const char *subresource, enum kube_patch_type type, const json_t *patch, struct kube_error *err)
{
    static const char *const ctypes[] = { "application/merge-patch+json", "application/json-patch+json",
                                          "application/strategic-merge-patch+json" };
    if ((unsigned)type > KUBE_PATCH_STRATEGIC || !patch || (type == KUBE_PATCH_JSON && !json_is_array(patch)) ||
        (type != KUBE_PATCH_JSON && !json_is_object(patch))) {
        kube_error_set(err, 0, KUBE_BAD_REQUEST, "patch %s/%s: patch must be %s", r ? r->resource : "?", name ? name : "?",
                       type == KUBE_PATCH_JSON ? "a JSON array" : "a JSON object");
        return NULL;
    }
    return verb(c, "PATCH", r, ns, name, subresource, NULL, patch, ctypes[type], err);
}

json_t *kube_delete(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                    const struct kube_delete_opts *opts, struct kube_error *err)
{
    json_t *body = NULL;
    if (opts && (opts->propagation_policy || opts->set_grace_period || opts->precondition_uid)) {
        body = json_pack("{s:s, s:s}", "kind", "DeleteOptions", "apiVersion", "v1");
        if (body && opts->propagation_policy)
            json_object_set_new(body, "propagationPolicy", json_string(opts->propagation_policy));
        if (body && opts->set_grace_period)
            json_object_set_new(body, "gracePeriodSeconds", json_integer(opts->grace_period_seconds));
        if (body && opts->precondition_uid)
            json_object_set_new(body, "preconditions", json_pack("{s:s}", "uid", opts->precondition_uid));
        if (!body) {
            kube_error_set(err, 0, KUBE_BAD_REQUEST, "out of memory");
            return NULL;
        }
    }
    json_t *v = verb(c, "DELETE", r, ns, name, NULL, NULL, body, NULL, err);
    json_decref(body);
    return v;
}
