/* holder.h - `mpi-agent run` starts the launch's command under mpi-rsh-holder, the process
 * that holds every worker's exec stream (docs/rsh.md "Stream holder"). */
#ifndef AGENT_HOLDER_H
#define AGENT_HOLDER_H

#include "agent.h"

/* argv prefixed with the holder ("HOLDER -- argv...") when the transport is exec, the holder
 * is found (DEST/mpi-rsh-holder, else beside this binary) and $MPI_AGENT_STREAM_HOLDER is
 * not "0"; NULL otherwise (argv runs as it is; each mpi-rsh then holds its own stream).
 * The array is new (free it); its strings are argv's and one new string (the holder path,
 * element 0: free it too). */
char **agent_holder_wrap(const struct agent_opts *o, char **argv);

#endif
