/* mpi_pi.c - mpi-pi: the classic "hello" MPI job. Every rank integrates its share of
 * 4/(1+x^2) over [0,1] by the midpoint rule; rank 0 prints the reduced value of pi and
 * its error. Built for Open MPI (mpi-pi) and, where MPICH's compiler wrapper is found,
 * for MPICH (mpi-pi-mpich), so the flavour examples can run the same program.
 * Usage: mpi-pi [INTERVALS]   (default 50000000). Exit 1 when the error exceeds 1e-9.
 * A failed rank for the tests of failure attribution, on any MPI the image carries (no
 * compiler needed): MPI_PI_EXIT_RANK=R makes rank R exit with MPI_PI_EXIT_CODE (default 3),
 * or raise signal MPI_PI_EXIT_SIGNAL when that is set, right after MPI_Init, without
 * MPI_Finalize, while the others wait in the reduction. */
#include <signal.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank = 0, size = 1, len = 0;
    char host[MPI_MAX_PROCESSOR_NAME];
    long n = 50000000;
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "mpi-pi: error: MPI_Init failed\n");
        return 2;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (MPI_Get_processor_name(host, &len) != MPI_SUCCESS)
        strcpy(host, "unknown");
    if (argc > 1) {
        char *end = NULL;
        n = strtol(argv[1], &end, 10);
        if (!end || *end || n < 1 || n > 100000000000L) {
            if (rank == 0)
                fprintf(stderr,
                        "mpi-pi: error: INTERVALS: expected an integer between 1 and "
                        "1e11, got '%s'\n",
                        argv[1]);
            MPI_Finalize();
            return 2;
        }
    }
    printf("Rank %d of %d running on %s\n", rank, size, host);
    fflush(stdout);
    const char *fail = getenv("MPI_PI_EXIT_RANK"), *code = getenv("MPI_PI_EXIT_CODE"), *sig = getenv("MPI_PI_EXIT_SIGNAL");
    if (fail && *fail && atoi(fail) == rank) {
        int c = code && *code ? atoi(code) : 3, s = sig && *sig ? atoi(sig) : 0;
        fprintf(stderr, "mpi-pi: rank %d %s %d (MPI_PI_EXIT_RANK)\n", rank, s ? "raises signal" : "exits with code",
                s ? s : c);
        if (s > 0) {
            signal(s, SIG_DFL);
            raise(s);
        }
        exit(c);
    }
    double h = 1.0 / (double)n, sum = 0.0, pi = 0.0;
    for (long i = rank; i < n; i += size) {
        double x = h * ((double)i + 0.5);
        sum += 4.0 / (1.0 + x * x);
    }
    double mine = h * sum, t0 = MPI_Wtime();
    MPI_Reduce(&mine, &pi, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    int rc = 0;
    if (rank == 0) {
        double err = fabs(pi - 3.141592653589793238462643);
        printf("pi is approximately %.16f, Error is %.16f (%ld intervals, %d ranks, reduce %.1f us)\n", pi, err, n, size,
               (MPI_Wtime() - t0) * 1e6);
        rc = err > 1e-9 && n >= 1000000;
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
