/* pause: the sandbox process of the test cluster's pods (tests/k8s). It holds the pod's
 * namespaces, reaps the orphans reparented to it (it is PID 1 of a shared PID namespace)
 * and exits 0 on SIGINT or SIGTERM. Built static, it is the only file of mpik8s/pause. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_signal(int sig) { (void)sig; }

int main(int argc, char **argv)
{
    sigset_t set;
    struct sigaction sa;
    int sig;

    if (argc > 1 && strcmp(argv[1], "-v") == 0) {
        puts("mpik8s pause 1");
        return 0;
    }
    /* handlers, so that PID 1 of a namespace does not drop these signals; then wait for
     * them synchronously */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGCHLD);
    if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ||
        sigaction(SIGCHLD, &sa, NULL) || sigprocmask(SIG_BLOCK, &set, NULL)) {
        perror("pause: signals");
        return 1;
    }
    for (;;) {
        if (sigwait(&set, &sig) != 0)
            continue;
        if (sig == SIGCHLD) {
            while (waitpid(-1, NULL, WNOHANG) > 0)
                ;
            continue;
        }
        return 0;
    }
}
