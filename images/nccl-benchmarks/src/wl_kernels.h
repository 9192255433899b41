/* wl_kernels.h - the two CUDA kernels the GPU device needs (fill a buffer with hashed
 * values; count elements that differ from the expected allreduce sum), callable from C.
 * Each returns a cudaError_t as int (0 = cudaSuccess). */
#ifndef WL_KERNELS_H
#define WL_KERNELS_H
#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif
/* p[i] = wl_hash_val(seed, i) * scale, queued on stream. */
int wl_gpu_fill(float *p, size_t n, uint64_t seed, float scale, cudaStream_t stream);
/* *wrong (device counter, zeroed here) += elements differing from the expected sum. */
int wl_gpu_check(const float *p, size_t n, uint64_t base, int nranks, float scale, unsigned long long *wrong,
                 cudaStream_t stream);
#ifdef __cplusplus
}
#endif
#endif
