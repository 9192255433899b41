/* supervise.h - running CMD (mpirun) as a supervised child: own process group,
 * signal forwarding with escalation, output passed through (watchdog on silence),
 * worker pods watched while it runs, exit code propagated. */
#ifndef MPI_AGENT_SUPERVISE_H
#define MPI_AGENT_SUPERVISE_H

#include <signal.h>
#include "session.h"

/* Fills set with the signals the supervisor handles (TERM, INT, HUP, CHLD). They must be
 * blocked in every thread (block them before any thread starts) so signalfd receives them. */
void agent_supervise_sigset(sigset_t *set);
/* Prints the expected rank -> pod -> node (GPUs) map, ranks filled by slot. */
void agent_print_rank_map(struct agent_session *s);
/* Runs argv as a child and supervises it (see file comment). Marks mpirunStarted, firstOutput,
 * finished. Returns the exit code to exit with (CMD's, 128+signal if it was killed, 127 if it
 * could not start); *summary gets a one-line account (new string). */
int agent_supervise(struct agent_session *s, char **argv, char **summary);

#endif
