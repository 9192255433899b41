/* fuzz_kubeconfig.c - libFuzzer target: kubeconfig YAML parsing, context
 * selection and field validation must never crash, leak or hang, and every
 * failure must come with a one-line message. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kube_config *cfg = NULL;
    char *err = NULL;
    /* a leading '@' byte selects an explicit context named by the next line */
    const char *ctx = NULL;
    char ctxbuf[64];
    if (size > 1 && data[0] == '@') {
        size_t n = 0;
        while (n + 1 < size && n < sizeof ctxbuf - 1 && data[n + 1] != '\n')
            n++;
        memcpy(ctxbuf, data + 1, n);
        ctxbuf[n] = '\0';
        ctx = ctxbuf;
    }
    int rc = kube_config_parse((const char *)data, size, "fuzz.yaml", "/nonexistent-fuzz-dir", ctx, &cfg, &err);
    if (rc == 0) {
        if (!cfg || !cfg->server || !cfg->namespace || !cfg->origin)
            abort();
        char *tok = kube_config_token(cfg, &err);
        free(tok);
    } else {
        if (cfg || !err || strchr(err, '\n'))
            abort();
    }
    free(err);
    kube_config_free(cfg);
    return 0;
}
