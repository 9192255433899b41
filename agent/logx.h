/* logx.h - logging a multi-line report (a header and one line per worker) as
 * separate log lines, so each worker's reason stays readable. */
#ifndef MPI_AGENT_LOGX_H
#define MPI_AGENT_LOGX_H

/* Logs each line of text at level (leading blanks kept, empty lines skipped). */
void agent_log_lines(int level, const char *text);

#endif
