# Extra build rules for test programs (owned by kubesim-node).
# TEST_PROGS: small MPI programs the integration tests run inside kubesim pods;
# `make test-progs` builds them (the top-level `integration` target depends on it).
MPICC ?= mpicc
TEST_PROGS += $(BUILD)/tests/mpi/allreduce_check $(BUILD)/tests/mpi/rank_fail
# The same programs built against MPICH (Debian's mpicc.mpich), where it is installed.
MPICC_MPICH ?= mpicc.mpich
ifneq ($(shell command -v $(MPICC_MPICH) 2>/dev/null),)
TEST_PROGS += $(BUILD)/tests/mpi/rank_fail_mpich
endif

.PHONY: test-progs
test-progs: $(TEST_PROGS)

# wl_asan.c: under MODE=asan, the LeakSanitizer suppressions for libmpi & co and hwloc
# without its PCI scan (see the file); compiled to nothing otherwise
$(BUILD)/tests/mpi/%: tests/mpi/%.c images/nccl-benchmarks/src/wl_asan.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CSTD) $(WARN) $(OPT) -o $@ $^

$(BUILD)/tests/mpi/%_mpich: tests/mpi/%.c images/nccl-benchmarks/src/wl_asan.c
	@mkdir -p $(dir $@)
	$(MPICC_MPICH) $(CSTD) $(WARN) $(OPT) -o $@ $^
