/* fuzz_exec_status.c - libFuzzer target for the channel-3 Status decoder
 * (kube_exec_status_decode): any bytes give an exit code 0..255; 0 only for a
 * Success status; every non-status-derived 255 comes with a one-line message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/exec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *msg = NULL;
    int code = kube_exec_status_decode((const char *)data, size, &msg);
    if (code < 0 || code > 255)
        abort();
    if (code == 0 && (msg || !memmem(data, size, "Success", 7)))
        abort();
    if (msg && (strchr(msg, '\n') || strlen(msg) > 400))
        abort();
    if (code != 0 && code != 255 && !memmem(data, size, "ExitCode", 8))
        abort();
    free(msg);
    return 0;
}
