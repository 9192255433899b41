/* textpack.c - static-dictionary packing of compact JSON (see textpack.h).
 * A text that already holds a byte 0x01-0x1f is stored as is behind the
 * marker byte 0x1f, so unpacking is exact for any input. */
#include "textpack.h"

#include <stdlib.h>
#include <string.h>

#define RAW_MARK '\x1f'

/* Code i + 1 stands for DICT[i]; longer fragments first where one starts another. */
static const char *const DICT[] = {
    "{\"metadata\":{\"resourceVersion\":\"",
    "\",\"ownerReferences\":[{\"kind\":\"MPIJob\",\"uid\":\"",
    "\",\"ownerReferences\":[{\"kind\":\"Job\",\"uid\":\"",
    "\",\"controller\":true}]",
    "\"creationTimestamp\":\"",
    "\"labels\":{\"training.kubeflow.org/job-role\":\"",
    "\",\"training.kubeflow.org/replica-index\":\"",
    "\"status\":{\"phase\":\"",
    "\"conditions\":[{",
    "\"lastTransitionTime\":\"",
    "\"lastUpdateTime\":\"",
    "\"status\":\"",
    "\"type\":\"",
    "\"reason\":\"",
    "\"message\":\"MPIJob ",
    "\"startTime\":\"",
    "\"spec\":{\"suspend\":",
    "\"data\":{\"discover_hosts.sh\":\"#!/bin/sh\\n",
    "\"hostfile\":\"",
    "\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],\"verbs\":[\"get\",\"list\",\"watch\"]}",
    ",{\"apiGroups\":[\"\"],\"resourceNames\":[\"",
    "\"],\"resources\":[\"pods/exec\"],\"verbs\":[\"get\",\"create\"]}]",
    "-worker-",
    " slots=1\\n",
    "\"apiVersion\":\"kubeflow.org/v2beta1\",\"kind\":\"MPIJob\"",
    "\"template\":{\"spec\":{\"containers\":[{",
    "\"replicas\":",
    "\"image\":\"",
    "\"name\":\"",
    "\"resourceVersion\":\"",
};
#define NDICT (sizeof DICT / sizeof DICT[0])
_Static_assert(NDICT <= 30, "codes are 0x01-0x1e");

/* The longest fragment matching at s, as its index, or -1. */
static int match(const char *s)
{
    int best = -1;
    size_t best_len = 0;
    for (size_t i = 0; i < NDICT; i++) {
        if (DICT[i][0] != *s)
            continue;
        size_t n = strlen(DICT[i]);
        if (n > best_len && strncmp(s, DICT[i], n) == 0) {
            best = (int)i;
            best_len = n;
        }
    }
    return best;
}

char *tp_pack(const char *text)
{
    size_t n = strlen(text);
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)text[i] < 0x20) { /* not compact JSON: keep as is */
            char *raw = malloc(n + 2);
            if (raw) {
                raw[0] = RAW_MARK;
                memcpy(raw + 1, text, n + 1);
            }
            return raw;
        }
    }
    char *out = malloc(n + 1), *o = out; /* packing never grows the text */
    if (!out)
        return NULL;
    while (*text) {
        int m = match(text);
        if (m >= 0) {
            *o++ = (char)(m + 1);
            text += strlen(DICT[m]);
        } else {
            *o++ = *text++;
        }
    }
    *o = '\0';
    char *fit = realloc(out, (size_t)(o - out) + 1);
    return fit ? fit : out;
}

char *tp_unpack(const char *packed)
{
    if (packed[0] == RAW_MARK)
        return strdup(packed + 1);
    size_t n = 0;
    for (const char *p = packed; *p; p++)
        n += (unsigned char)*p <= NDICT ? strlen(DICT[(unsigned char)*p - 1]) : 1;
    char *out = malloc(n + 1), *o = out;
    if (!out)
        return NULL;
    for (const char *p = packed; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 1 && c <= NDICT) {
            size_t l = strlen(DICT[c - 1]);
            memcpy(o, DICT[c - 1], l);
            o += l;
        } else {
            *o++ = (char)c;
        }
    }
    *o = '\0';
    return out;
}
