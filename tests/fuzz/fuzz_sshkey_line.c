/* fuzz_sshkey_line.c - libFuzzer target for kube_sshkey_parse_line (the parser of
 * pinned host-key files: authorized_keys, known_hosts, .pub lines): any bytes give
 * 1 (a key whose blob names its own type), 0 or -1, with nothing allocated unless 1;
 * the fingerprint of a found blob is well formed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/sshkey.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *type = (char *)1;
    unsigned char *blob = (unsigned char *)1;
    size_t len = 1;
    int r = kube_sshkey_parse_line((const char *)data, size, &type, &blob, &len);
    if (r < -1 || r > 1)
        abort();
    if (r != 1) {
        if (type || blob || len)
            abort();
        return 0;
    }
    size_t tl = strlen(type);
    if (len < 4 + tl || memcmp(blob + 4, type, tl) != 0)
        abort();
    char *fp = kube_sshkey_fingerprint(blob, len);
    if (!fp || strncmp(fp, "SHA256:", 7) != 0 || strlen(fp) != 7 + 43)
        abort();
    free(fp);
    free(type);
    free(blob);
    return 0;
}
