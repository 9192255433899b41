/* wl_asan.c - sanitizer defaults built into the workload programs under `make asan`:
 * MPI, PMIx, hwloc, libevent, OpenBLAS and the CUDA libraries keep memory until exit,
 * which LeakSanitizer would report as leaks of ours. Full stack unwinding lets the
 * suppressions below see those libraries' frames (their code lacks frame pointers), so
 * leaks in our own code are still reported. Compiled to nothing without ASan. */
#if defined(__SANITIZE_ADDRESS__)
#include <stdlib.h>

/* hwloc's PCI discovery (libpciaccess) grows its pci.ids buffer one realloc at a time, and
 * ASan's realloc always copies: MPI_Init took minutes per rank (2.2 s without ASan). The
 * topology needs no PCI devices here; a value the user set is kept. */
__attribute__((constructor)) static void wl_asan_no_pci(void) { setenv("HWLOC_COMPONENTS", "-pci", 0); }

const char *__asan_default_options(void);
const char *__lsan_default_suppressions(void);
const char *__lsan_default_options(void);

const char *__asan_default_options(void) { return "fast_unwind_on_malloc=0"; }

const char *__lsan_default_options(void) { return "print_suppressions=0"; }

const char *__lsan_default_suppressions(void)
{
    return "leak:libmpi.so\nleak:libmpich.so\nleak:libopen-pal.so\nleak:libopen-rte.so\n"
           "leak:libpmix.so\nleak:libhwloc.so\nleak:libevent\nleak:mca_\nleak:libopenblas\n"
           "leak:libcudart\nleak:libnccl\nleak:libcublas\nleak:libucs\nleak:libucp\n";
}
#else
typedef int wl_asan_unused; /* keeps the translation unit non-empty */
#endif
