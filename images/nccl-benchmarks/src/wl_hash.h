/* wl_hash.h - deterministic hashing shared by host C code and CUDA kernels:
 * the values the benchmarks put in buffers are a pure function of (seed, index),
 * so any rank (or GPU kernel) can recompute what every other rank sent and check
 * an allreduce result exactly. Values are small integers times a power of two,
 * so float sums of them are exact in any summation order. */
#ifndef WL_HASH_H
#define WL_HASH_H
#include <stdint.h>

#ifdef __CUDACC__
#define WL_HD __host__ __device__ static inline
#else
#define WL_HD static inline
#endif

/* splitmix64 finaliser: a bijective 64-bit mix. */
WL_HD uint64_t wl_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Seed of rank r's buffer for a given base seed (one base per size and iteration). */
WL_HD uint64_t wl_rank_seed(uint64_t base, int rank)
{
    return wl_mix64(base ^ (0x632be59bd9b4e019ULL * (uint64_t)(rank + 1)));
}

/* Element i of the buffer with this seed: an integer in [-16, 15] (zero 1 time in 32). */
WL_HD float wl_hash_val(uint64_t seed, uint64_t i)
{
    return (float)((int)(wl_mix64(seed + i * 0xd1b54a32d192ed03ULL) >> 59) - 16);
}

/* Uniform double in [0, 1) from a seed and an index. */
WL_HD double wl_hash_unit(uint64_t seed, uint64_t i)
{
    return (double)(wl_mix64(seed ^ wl_mix64(i)) >> 11) * (1.0 / 9007199254740992.0);
}

#endif
