/* fuzz_status.c - libFuzzer target: decoding a non-2xx reply body (Status
 * JSON or anything else) always yields a reason and a one-line message. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int code = 100 + (data[0] | data[1] << 8) % 500;
    struct kube_error e = KUBE_ERROR_INIT;
    kube_status_decode((const char *)data + 2, size - 2, code, &e);
    if (!e.message || strchr(e.message, '\n') || strchr(e.message, '\r') || e.reason == KUBE_OK)
        abort();
    if (strlen(e.message) > 2048)
        abort();
    (void)kube_reason_name(e.reason);
    kube_error_clear(&e);
    return 0;
}
