/* config_check.c - the checks the kubeconfig's reader (config.c) and the exec plugin's
 * (credplugin.c) share: no unknown field, messages on one line. */
#include "config_check.h"
#include "kube/str.h"

#include <string.h>

/* Refuses a key client-go does not know either (a typo would otherwise be silently ignored). */
int Kube_config_known_keys(const json_t *in, const char *tag, const char *const *keys, char **errmsg)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)in, k, v) {
        int ok = 0;
        for (const char *const *q = keys; *q && !ok; q++)
            ok = !strcmp(k, *q);
        if (!ok)
            return kube_set_err(errmsg, "%s.%s: unknown field", tag, k);
    }
    return 0;
}

/* Messages quote names and values from the file or a plugin: keep them on one line. */
int Kube_config_one_line(int rc, char **errmsg)
{
    if (rc && errmsg && *errmsg)
        for (char *p = *errmsg; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = ' ';
    return rc;
}
