/* wl_kernels.cu - CUDA kernels for the GPU device: fill buffers with the same hashed
 * values the CPU code uses (wl_hash.h) and check allreduce results on the device. */
#include "wl_hash.h"
#include "wl_kernels.h"

static __global__ void fill_k(float *p, size_t n, uint64_t seed, float scale)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        p[i] = wl_hash_val(seed, i) * scale;
}

static __global__ void check_k(const float *p, size_t n, uint64_t base, int nranks, float scale,
                               unsigned long long *wrong)
{
    extern __shared__ uint64_t seeds[];
    for (int r = threadIdx.x; r < nranks; r += blockDim.x)
        seeds[r] = wl_rank_seed(base, r);
    __syncthreads();
    unsigned long long bad = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float e = 0.0f;
        for (int r = 0; r < nranks; r++)
            e += wl_hash_val(seeds[r], i);
        if (p[i] != e * scale)
            bad++;
    }
    if (bad)
        atomicAdd(wrong, bad);
}

static unsigned grid_for(size_t n)
{
    size_t blocks = (n + 255) / 256;
    if (blocks > 4096)
        blocks = 4096;
    return blocks ? (unsigned)blocks : 1u;
}

extern "C" int wl_gpu_fill(float *p, size_t n, uint64_t seed, float scale, cudaStream_t stream)
{
    fill_k<<<grid_for(n), 256, 0, stream>>>(p, n, seed, scale);
    return (int)cudaGetLastError();
}

extern "C" int wl_gpu_check(const float *p, size_t n, uint64_t base, int nranks, float scale,
                            unsigned long long *wrong, cudaStream_t stream)
{
    cudaError_t e = cudaMemsetAsync(wrong, 0, sizeof(*wrong), stream);
    if (e != cudaSuccess)
        return (int)e;
    size_t shmem = (size_t)nranks * sizeof(uint64_t);
    if (shmem > 48 * 1024)
        return (int)cudaErrorInvalidValue;
    check_k<<<grid_for(n), 256, shmem, stream>>>(p, n, base, nranks, scale, wrong);
    return (int)cudaGetLastError();
}
