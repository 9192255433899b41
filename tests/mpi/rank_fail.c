/* rank_fail.c - an MPI program that fails on purpose, for the failure
 * attribution tests (tests/integration/controller_failures.sh, the real-cluster
 * case tests/k8s/cases/failure_attribution.sh). Every rank prints "rank R up on
 * HOST"; rank FAIL_RANK (default 1) then does FAIL_MODE: exit (exit 3), segv
 * (raise SIGSEGV), kill (raise SIGKILL), oom (allocate and touch memory, 8 MiB
 * at a time, up to FAIL_MB MiB, default 4096, until the kernel kills it); the
 * other ranks wait in a barrier, so mpirun reports the failed one. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fail(const char *mode, int rank)
{
    if (strcmp(mode, "exit") == 0)
        exit(3);
    if (strcmp(mode, "segv") == 0)
        raise(SIGSEGV);
    if (strcmp(mode, "kill") == 0)
        raise(SIGKILL);
    if (strcmp(mode, "oom") == 0) {
        long mb = getenv("FAIL_MB") ? atol(getenv("FAIL_MB")) : 4096;
        for (long used = 0; used < mb; used += 8) {
            char *p = malloc(8 << 20);
            if (!p)
                break;
            memset(p, 1, 8 << 20);
            if (used % 64 == 0) {
                printf("rank %d: %ld MiB touched\n", rank, used + 8);
                fflush(stdout);
            }
        }
        printf("rank %d: not killed after %ld MiB\n", rank, mb);
        exit(4);
    }
}

int main(int argc, char **argv)
{
    int rank;
    char host[256] = "?";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    gethostname(host, sizeof host - 1);
    printf("rank %d up on %s\n", rank, host);
    fflush(stdout);
    const char *mode = getenv("FAIL_MODE") ? getenv("FAIL_MODE") : "exit";
    if (rank == (getenv("FAIL_RANK") ? atoi(getenv("FAIL_RANK")) : 1)) {
        sleep(1); /* the others' lines first: they are the "last lines" the Event shows */
        fail(mode, rank);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
