/* restart_record.h - the pure parts of the MPIJob's record of its restarts:
 * the dedupe key of one early end of a launcher run, the bounded list
 * status.restarts (newest first), the words that name what ended a run and the
 * Restarting condition's message with the retry budget. */
#ifndef RESTART_RECORD_H
#define RESTART_RECORD_H

#include <jansson.h>

/* Most entries kept in status.restarts (the newest). */
#define RESTARTS_KEPT 10
/* status.restarts entry key of the durable id of one early end (restart_record_key). */
#define RESTART_KEY "key"

/* The durable id of one early end of a launcher run: "POD@CREATED#N" for the Nth restart in
 * place of pod's container (n > 0), "POD@CREATED" for a launcher pod that ended (n == 0). The
 * pod's name and creationTimestamp outlive an operator restart in the status (the pod cache
 * keeps no uid; a re-created pod of the same name is younger). New string, NULL on failure. */
char *restart_record_key(const char *pod, const char *created, long long n);
/* The cause of a launcher entry written before its pod's record arrived (filled in later). */
#define RESTART_NO_RECORD_YET "the launcher failed; its Job starts another"

/* The highest N of the keys "POD@CREATED#N" in status.restarts; 0 when none. */
long long restart_record_last(const json_t *status, const char *pod, const char *created);
/* 1 when status.restarts holds an entry with key. */
int restart_record_seen(const json_t *status, const char *key);
/* Puts entry (stolen) first in status.restarts, keeping the newest RESTARTS_KEPT; -1 when
 * entry is NULL or the list cannot grow (entry freed), else 0. */
int restart_record_add(json_t *status, json_t *entry);
/* What ended a launcher run, from its container's terminated state t: "launcher pod P: <the
 * agent's summary>" (the rank, pod, node and exit code, signal or OOM kill, or the worker that
 * went), else "launcher pod P: exit code N (reason)"; NULL without t or memory. */
char *restart_record_cause(const char *pod, const json_t *t);
/* The Restarting condition's words: "is restarting (run RUN of RUNS): CAUSE" (runs <= 0:
 * "(run RUN)"), or NULL without memory. */
char *restart_record_message(long long run, long long runs, const char *cause);

#endif
