/* http.c - the API server URL of a request, for messages. */
#include "kube/http.h"

#include "kube/util.h"

char *kube_http_url(const struct kube_config *cfg, const char *path, const char *query)
{
    int q = query && *query;
    return kube_strdup_printf("%s%s%s%s", cfg->server, path, q ? "?" : "", q ? query : "");
}
