# Extra build rules for test programs (owned by kubesim-node).
# TEST_PROGS: small MPI programs the integration tests run inside kubesim pods;
# `make test-progs` builds them (the top-level `integration` target depends on it).
MPICC ?= mpicc
TEST_PROGS += $(BUILD)/tests/mpi/allreduce_check

.PHONY: test-progs
test-progs: $(TEST_PROGS)

$(BUILD)/tests/mpi/%: tests/mpi/%.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CSTD) $(WARN) $(OPT) -o $@ $<
