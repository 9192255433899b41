/* fuzz_agent_hostfile.c - libFuzzer target: the agent's hostfile parser
 * (agent/hostfile.c; Open MPI `host slots=N`, MPICH `host:N`, bare `host`,
 * FQDNs) never crashes, leaks or hangs; errors are one bounded line; a parsed
 * list printed in every flavour's syntax parses back to the same list. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/hostfile.h"

/* Aborts unless err is one line of sane length. */
static void check_err(const char *err)
{
    if (!err || !*err || strchr(err, '\n') || strchr(err, '\r') || strlen(err) > 1024)
        abort();
}

/* Aborts unless l is a well-formed list: valid pods, no duplicates, sane slots. */
static void check_list(const struct agent_hostlist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        const struct agent_host *h = &l->v[i];
        char *err = NULL;
        char *pod = mpik8s_host_to_pod(h->host, &err);
        if (!pod || strcmp(pod, h->pod) != 0 || h->slots < 0 || h->slots > 1000000)
            abort();
        free(pod);
        if (agent_hostlist_find_pod(l, h->pod) != (long)i)
            abort();
    }
}

/* Formatting for flavour m and parsing again gives the same hosts and slots. */
static void check_roundtrip(const struct agent_hostlist *l, enum mpik8s_mpi m, int dflt)
{
    char *text = agent_hostfile_format(l, m, dflt);
    if (!text)
        abort();
    struct agent_hostlist back = { 0 };
    char *err = NULL;
    if (agent_hostfile_parse(text, "formatted", &back, &err) != 0 || back.n != l->n)
        abort();
    for (size_t i = 0; i < l->n; i++) {
        int want = agent_host_slots(&l->v[i], dflt);
        if (strcmp(back.v[i].host, l->v[i].host) != 0 || back.v[i].slots != want)
            abort();
    }
    agent_hostlist_free(&back);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the agent reads hostfiles as text (a NUL byte is rejected by agent_hostfile_load) */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct agent_hostlist l = { 0 };
    char *err = NULL;
    if (agent_hostfile_parse(text, "/etc/mpi/hostfile", &l, &err) == 0) {
        if (err)
            abort();
        check_list(&l);
        check_roundtrip(&l, MPIK8S_MPI_OPENMPI, 0);
        check_roundtrip(&l, MPIK8S_MPI_MPICH, 2);
        check_roundtrip(&l, MPIK8S_MPI_INTEL, 0);
        size_t before = l.n, dropped = agent_hostlist_drop_launcher(&l);
        if (l.n + dropped != before)
            abort();
        check_list(&l);
    } else {
        check_err(err);
        if (l.n != 0 || l.v)
            abort();
    }
    free(err);
    agent_hostlist_free(&l);
    free(text);
    return 0;
}
