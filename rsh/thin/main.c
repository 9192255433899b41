/* thin/main.c - mpi-rsh-thin: what mpi-rsh becomes (by exec) when a stream holder serves
 * this launch ($MPI_RSH_HOLDER). It links libc only, so the process mpirun waits on per
 * worker costs ~130 KB of Pss instead of a process with its own OpenSSL state: it hands its
 * stdin/stdout/stderr and the stream's settings to the holder (rsh/holder_proto.h), forwards
 * a SIGTERM/SIGINT/SIGHUP as a cancel, and exits with the code the holder replies. When the
 * holder cannot be reached (or the request is too large to send), it execs mpi-rsh again
 * without $MPI_RSH_HOLDER: mpi-rsh alone still works. A holder that goes away mid-stream is a
 * failure (255, one line), not a retry: the remote command may already run.
 * Usage (from mpi-rsh only): mpi-rsh-thin SOCKET FIELD... -- MPI-RSH-ARGV... (also --help, --version) */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../holder_proto.h"
#include "../rsh.h"

/* Runs mpi-rsh again on its own (argv: mpi-rsh's arguments, argv[0] replaced). */
static int fallback(char **argv, const char *why)
{
    if (getenv("MPI_RSH_THIN_DEBUG"))
        fprintf(stderr, "mpi-rsh: stream holder not used (%s); running alone\n", why);
    unsetenv(RSH_HOLDER_ENV);
    rsh_exec_sibling("mpi-rsh", argv);
    fprintf(stderr, "mpi-rsh: cannot run mpi-rsh again without the stream holder: %s\n", strerror(errno));
    return 255;
}

/* The request: magic and the fields, each NUL-terminated. NULL when too large. */
static char *build_request(char **fields, size_t *len)
{
    size_t n = strlen(RSH_HOLDER_MAGIC) + 1;
    for (int i = 0; i < RSH_HOLDER_NFIELDS; i++)
        n += strlen(fields[i]) + 1;
    if (n > RSH_HOLDER_REQ_MAX)
        return NULL;
    char *buf = malloc(n), *p = buf;
    if (!buf)
        return NULL;
    p = stpcpy(p, RSH_HOLDER_MAGIC) + 1;
    for (int i = 0; i < RSH_HOLDER_NFIELDS; i++)
        p = stpcpy(p, fields[i]) + 1;
    *len = n;
    return buf;
}

/* Connects to the holder and sends the request with fds 0, 1, 2. The socket, or -1. */
static int hand_over(const char *path, const char *req, size_t len)
{
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof a.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(a.sun_path, path);
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -1;
    if (connect(s, (struct sockaddr *)&a, sizeof a) < 0) {
        int e = errno;
        close(s);
        errno = e;
        return -1;
    }
    int fds[3] = { 0, 1, 2 };
    union {
        char buf[CMSG_SPACE(sizeof fds)];
        struct cmsghdr align;
    } u;
    struct iovec iov = { .iov_base = (void *)req, .iov_len = len };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof fds);
    memcpy(CMSG_DATA(c), fds, sizeof fds);
    ssize_t w;
    do
        w = sendmsg(s, &m, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    if (w != (ssize_t)len) {
        int e = w < 0 ? errno : EMSGSIZE;
        close(s);
        errno = e;
        return -1;
    }
    return s;
}

/* Waits for the reply, turning signals into one cancel message. The exit code. */
static int wait_reply(int s, const char *pod)
{
    int cancelled = 0;
    for (;;) {
        struct pollfd p[2] = { { .fd = s, .events = POLLIN }, { .fd = rsh_sig_pipe[0], .events = POLLIN } };
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "mpi-rsh: %s: poll: %s\n", pod, strerror(errno));
            return 255;
        }
        if (p[1].revents & POLLIN) {
            unsigned char sig;
            if (read(rsh_sig_pipe[0], &sig, 1) == 1 && !cancelled) {
                char msg[2] = { RSH_HOLDER_CANCEL, (char)sig };
                cancelled = send(s, msg, 2, MSG_NOSIGNAL) == 2;
                if (!cancelled)
                    return 128 + sig; /* the holder is gone: nothing runs any more */
            }
        }
        if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            char r[2];
            ssize_t n = recv(s, r, sizeof r, 0);
            if (n < 0 && errno == EINTR)
                continue;
            if (n == 2 && r[0] == RSH_HOLDER_EXIT)
                return (unsigned char)r[1];
            fprintf(stderr, "mpi-rsh: %s: the stream holder ($%s) %s%s\n", pod, RSH_HOLDER_ENV, n < 0 ? "failed: " : "",
                    n < 0    ? strerror(errno)
                    : n == 0 ? "went away before the command's exit status"
                             : "sent a bad reply");
            return 255;
        }
    }
}

#define THIN_USAGE                                                                                                          \
    "usage: mpi-rsh-thin SOCKET FIELD... -- MPI-RSH-ARGV...   (started by mpi-rsh only)\n"                                  \
    "       mpi-rsh-thin --help | --version\n"                                                                              \
    "Hands this process's stdin/stdout/stderr and one stream's settings to the stream holder on\n"                          \
    "SOCKET (mpi-rsh-holder) and exits with the remote command's code; without a holder it runs\n"                          \
    "mpi-rsh MPI-RSH-ARGV... instead.\n"

/* --help / --version as the only argument (a SOCKET is a path, never one of those): the exit
 * code, or -1 when argv is something else. */
static int info(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "--help") != 0 && strcmp(argv[1], "--version") != 0))
        return -1;
    if (argv[1][2] == 'h')
        fputs(THIN_USAGE, stdout);
    else
        printf("mpi-rsh-thin %s\n", RSH_VERSION);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 255;
}

int main(int argc, char **argv)
{
    int dd = 2 + RSH_HOLDER_NFIELDS, code = info(argc, argv);
    if (code >= 0)
        return code;
    if (argc < dd + 2 || strcmp(argv[dd], "--") != 0) {
        fputs(THIN_USAGE, stderr);
        return 255;
    }
    char **rsh_argv = argv + dd + 1;
    if (rsh_signals_setup() < 0) {
        fprintf(stderr, "mpi-rsh: cannot install signal handlers: %s\n", strerror(errno));
        return 255;
    }
    size_t len;
    char *req = build_request(argv + 2, &len);
    if (!req)
        return fallback(rsh_argv, "request too large");
    int s = hand_over(argv[1], req, len);
    free(req);
    if (s < 0)
        return fallback(rsh_argv, strerror(errno));
    code = wait_reply(s, argv[2 + RSH_HF_POD]);
    close(s);
    return code;
}
