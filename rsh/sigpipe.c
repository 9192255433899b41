/* sigpipe.c - the one signal set-up of every mpi-rsh program (mpi-rsh, mpi-rsh-ssh,
 * mpi-rsh-thin): SIGTERM/SIGINT/SIGHUP become their number written to a non-blocking
 * self-pipe the transports poll, the first one is remembered for the exit code (128+sig),
 * SIGPIPE is ignored. libc only, so the thin client can link it without libkube. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "rsh.h"

int rsh_sig_pipe[2] = { -1, -1 };
volatile sig_atomic_t rsh_got_signal;

static void on_signal(int sig)
{
    int saved = errno;
    if (!rsh_got_signal)
        rsh_got_signal = sig;
    unsigned char b = (unsigned char)sig;
    if (write(rsh_sig_pipe[1], &b, 1) < 0) { /* nothing to do in a handler */
    }
    errno = saved;
}

int rsh_signals_setup(void)
{
    if (pipe2(rsh_sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    int sigs[] = { SIGTERM, SIGINT, SIGHUP };
    for (int i = 0; i < 3; i++)
        if (sigaction(sigs[i], &sa, NULL) < 0)
            return -1;
    signal(SIGPIPE, SIG_IGN);
    return 0;
}
