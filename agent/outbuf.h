/* outbuf.h - the last bytes of the supervised command's output (stdout and
 * stderr interleaved as they arrived), kept bounded in a ring: the text the
 * failure parser reads and the launcher log the agent saves (agent/joblog.c). */
#ifndef MPI_AGENT_OUTBUF_H
#define MPI_AGENT_OUTBUF_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* The launcher log's bound: what `<job>-log` keeps (docs/agent.md). */
#define AGENT_OUTBUF_MAX (256 * 1024)

struct agent_outbuf {
    pthread_mutex_t mu;
    char *buf;
    size_t cap, len, head; /* head: where the oldest byte is once full */
    uint64_t total;        /* bytes ever appended (a writer compares it to skip idle writes) */
};

/* Allocates a ring of cap bytes; 0 ok, -1 out of memory. */
int agent_outbuf_init(struct agent_outbuf *b, size_t cap);
/* Appends n bytes, dropping the oldest beyond cap. Thread-safe. */
void agent_outbuf_append(struct agent_outbuf *b, const char *p, size_t n);
/* The kept bytes in order, NUL-terminated (new string; *len set, *total the counter then). */
char *agent_outbuf_copy(struct agent_outbuf *b, size_t *len, uint64_t *total);
/* Frees the ring (b itself may be on the stack). */
void agent_outbuf_free(struct agent_outbuf *b);

#endif
