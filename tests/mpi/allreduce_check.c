/* allreduce_check: a small MPI program for kubesim's cross-pod tests.
 * Every rank contributes rank+1 to an MPI_Allreduce (sum) over ints and over a
 * vector of COUNT doubles, checks the result against size*(size+1)/2, and prints
 * one line "rank R/S host H sum=N OK" (or BAD) with its processor name, so a test
 * can assert that each rank ran in the pod it expected and got the right sum.
 * Exit status: 0 if this rank's results are right, 1 otherwise.
 * Usage: allreduce_check [COUNT]   (COUNT doubles per rank, default 1024) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int check_vector(long count, int rank, double want)
{
    double *in = malloc(sizeof(double) * (size_t)count);
    double *out = malloc(sizeof(double) * (size_t)count);
    int ok = in != NULL && out != NULL;
    if (ok) {
        for (long i = 0; i < count; i++)
            in[i] = (double)(rank + 1);
        if (MPI_Allreduce(in, out, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
            ok = 0;
        for (long i = 0; ok && i < count; i++)
            if (out[i] != want)
                ok = 0;
    }
    free(in);
    free(out);
    return ok;
}

int main(int argc, char **argv)
{
    long count = 1024;
    if (argc > 1) {
        char *end = NULL;
        count = strtol(argv[1], &end, 10);
        if (end == argv[1] || *end != '\0' || count < 1 || count > (1L << 26)) {
            fprintf(stderr, "allreduce_check: COUNT must be an integer in 1..%ld, got '%s'\n",
                    1L << 26, argv[1]);
            return 2;
        }
    }
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "allreduce_check: MPI_Init failed\n");
        return 1;
    }
    int rank = 0, size = 0, len = 0;
    char host[MPI_MAX_PROCESSOR_NAME];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);
    int mine = rank + 1, sum = 0;
    int ok = MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS;
    long want = (long)size * (size + 1) / 2;
    ok = ok && sum == want;
    ok = check_vector(count, rank, (double)want) && ok;
    printf("rank %d/%d host %s sum=%d %s\n", rank, size, host, sum, ok ? "OK" : "BAD");
    fflush(stdout);
    MPI_Finalize();
    return ok ? 0 : 1;
}
