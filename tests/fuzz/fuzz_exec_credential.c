/* fuzz_exec_credential.c - libFuzzer target: an exec credential plugin's stdout (the
 * ExecCredential parser in lib/credplugin.c) must never crash, leak or hang; a success has a
 * token or a certificate with its key, a failure one line naming the plugin. The first byte
 * picks the apiVersion the kubeconfig asked for. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/credplugin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *api = size && (data[0] & 1) ? "client.authentication.k8s.io/v1beta1" : "client.authentication.k8s.io/v1";
    struct kube_credential c;
    int64_t exp = 0;
    char *err = NULL;
    int rc = Kube_exec_credential_parse(size ? (const char *)data + 1 : "", size ? size - 1 : 0, api,
                                        "exec plugin fuzz (fuzz.yaml)", &c, &exp, &err);
    if (rc == 0) {
        if (err || (!c.token && !(c.cert && c.key)) || (!c.cert != !c.key))
            abort();
    } else if (!err || strchr(err, 0x0a) || !strstr(err, "fuzz")) {
        if (strcmp(err ? err : "", "out of memory"))
            abort();
    }
    kube_credential_free(&c);
    free(err);
    return 0;
}
