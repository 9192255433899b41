#include <string.h>
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int r;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    const char *m = getenv("FAIL_MODE");
    int who = atoi(getenv("FAIL_RANK") ? getenv("FAIL_RANK") : "1");
    printf("rank %d up\n", r);
    fflush(stdout);
    if (r == who) {
        if (!strcmp(m, "exit"))
            exit(3);
        if (!strcmp(m, "segv"))
            raise(SIGSEGV);
        if (!strcmp(m, "kill"))
            raise(SIGKILL);
    }
    sleep(3);
    MPI_Finalize();
    return 0;
}
