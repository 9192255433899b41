# Top-level build for mpi-k8s: the shared Kubernetes client library (lib/),
# the three programs (bin/mpi-operator, bin/mpi-agent, bin/mpi-rsh), the
# workload programs (images/), and every test.
#
#   make            build everything into bin/
#   make test       format check, unit tests, fuzz smoke runs, integration tests on kubesim,
#                   then the real-cluster suite (make test-k8s: tests/k8s/, Docker + Go needed)
#   make format     rewrite the C sources to .clang-format's layout (format-check: list those that differ)
#   make rules      check one rule per idea holds (tests/rules.sh: the contract header, single helpers, errmsg, JSON reads)
#   make prometheus-rules  check the monitoring component: promtool check/test rules, the PrometheusRule, the dashboard
#   make asan       the same tests with AddressSanitizer + UBSan builds
#   make fuzz       libFuzzer targets, each for FUZZ_SECONDS (default 60)
#   make valgrind   every unit test under valgrind memcheck (leaks, invalid accesses)
#   make bench      benchmark tables (bench/*.sh; those that feed a plot also write bench/results/*.tsv)
#   make plots      the benchmarks' PNGs under docs/img/ from bench/results/*.tsv (bench/plot.sh, gnuplot)
#   make plots-check  check bench/plot.sh regenerates every PNG from the committed TSVs (tests/plots.sh)
#   make deps       install the Debian packages the project needs
#   make demo       run an example MPIJob end to end on the embedded simulator
#   make install    DESTDIR=... PREFIX=/usr/local (the layout images mirror)
#   make krew       kubectl mpijob's krew archive and a manifest with its sha256 in build/krew/
#                   (plugins/krew.sh; docs/agent.md "krew")
#
# Conventions (so each component only adds files, not rules):
#   lib/*.c                      -> $(BUILD)/libkube.a
#   mpik8s/*.c                   -> $(BUILD)/libmpik8s.a (the contract's code), linked by
#                                   every program but the bundle launcher, before libkube.a
#   <comp>/*.c, comp in rsh agent controller -> $(BINDIR)/mpi-<comp>
#                                (controller -> mpi-operator); <comp>/main.c holds main()
#   tests/unit/test_<comp>_*.c   -> unit test linked with libmpik8s.a, libkube.a and <comp>'s
#                                   objects except main.o (comp: lib mpik8s rsh agent controller)
#   tests/fuzz/fuzz_*.c          -> libFuzzer target over lib/ (clang)
#   tests/integration/*.sh       -> run by tests/run-integration.sh, each bounded
#   <comp>/module.mk, images/images.mk, tests/tests.mk: optional extra rules

SHELL   := /bin/bash
MODE    ?= release
PREFIX  ?= /usr/local
DESTDIR ?=
FUZZ_SECONDS ?= 60
# how many compilers, unit tests or fuzzers `make test` runs at once (the machine's cores)
NPROC   ?= $(shell nproc 2>/dev/null || echo 1)

PKGS := libcurl jansson yaml-0.1 libssh2 openssl
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# the operator's metrics endpoint alone (controller/metrics_http.c) links libmicrohttpd
OP_PKGS := libmicrohttpd
OP_CFLAGS = $(shell pkg-config --cflags $(OP_PKGS) 2>/dev/null)
OP_LIBS   = $(shell pkg-config --libs $(OP_PKGS) 2>/dev/null)
comp_libs = $(if $(filter controller,$(1)),$(OP_LIBS))

WARN    := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-format-nonliteral
CSTD    := -std=gnu11 -D_GNU_SOURCE
ifeq ($(MODE),asan)
  BUILD  := build/asan
  BINDIR := build/asan/bin
  OPT    := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
  BUILD  := build/release
  BINDIR := bin
  OPT    := -O2 -g
endif
CFLAGS  ?=
LDFLAGS ?=
ALL_CFLAGS  = $(CSTD) $(WARN) $(OPT) -Iinclude $(PKG_CFLAGS) $(OP_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(OPT) -Wl,--as-needed $(LDFLAGS)
LDLIBS_ALL  = $(PKG_LIBS) -lpthread -lm
# Every program links its libraries dynamically from Debian's packages (libcurl with OpenSSL,
# libssl/libcrypto, jansson, libyaml, libssh2), so that security updates reach them; with
# --as-needed each loads only what it uses (mpi-rsh: libssl/libcrypto and jansson, no libcurl).
# The bundle (rsh/module.mk) carries the libraries it loads into users' launcher images.
PROG_LDLIBS = -Wl,--gc-sections $(PKG_LIBS) -lpthread -lm

LIB_SRCS := $(wildcard lib/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
LIBKUBE  := $(BUILD)/libkube.a

# mpik8s/*.c: the contract's code (include/mpik8s/: contract.h, launch.h, util.h), one idea a file,
# so that the operator, mpi-agent and mpi-rsh run the same functions (docs/architecture.md). An
# archive: each program takes only the files it calls, so mpi-rsh-thin stays libc-only and
# mpi-rsh-ssh without jansson (only mpik8s/termination.c reads JSON).
CONTRACT_SRCS := $(wildcard mpik8s/*.c)
CONTRACT_OBJS := $(CONTRACT_SRCS:%.c=$(BUILD)/%.o)
LIBMPIK8S     := $(BUILD)/libmpik8s.a

COMPS := rsh agent controller
prog_of = $(if $(filter controller,$(1)),mpi-operator,mpi-$(1))
comp_srcs = $(wildcard $(1)/*.c)
comp_objs = $(patsubst %.c,$(BUILD)/%.o,$(call comp_srcs,$(1)))
comp_lib_objs = $(filter-out $(BUILD)/$(1)/main.o,$(call comp_objs,$(1)))
PROGS := $(foreach c,$(COMPS),$(if $(wildcard $(c)/main.c),$(BINDIR)/$(call prog_of,$(c))))

UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_TESTS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
test_comp = $(word 2,$(subst _, ,$(notdir $(1))))
# what a unit test links besides libkube.a: its component's objects (none for lib and mpik8s) and
# libmpik8s.a (not for lib: lib/ knows no MPIJob)
unit_objs = $(if $(filter lib mpik8s,$(call test_comp,$(1))),,$(call comp_lib_objs,$(call test_comp,$(1))))
unit_libs = $(if $(filter lib,$(call test_comp,$(1))),,$(LIBMPIK8S)) $(LIBKUBE)

.PHONY: e2e all stage test test-k8s unit integration asan fuzz fuzz-smoke valgrind bench deps demo install clean check-tools format format-check rules prometheus-rules plots plots-check krew
# kubectl-mpijob, the kubectl plugin, is mpi-agent under a second name (agent/plugin_cli.c); a
# tree without agent/ (images/nccl-benchmarks builds the workload programs alone) has neither
PLUGIN_LINK := $(if $(filter $(BINDIR)/mpi-agent,$(PROGS)),$(BINDIR)/kubectl-mpijob)
all: $(PROGS) $(PLUGIN_LINK)

ifneq ($(PLUGIN_LINK),)
$(PLUGIN_LINK): $(BINDIR)/mpi-agent
	ln -sf mpi-agent $@
endif

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(LIBKUBE): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIBMPIK8S): $(CONTRACT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

define prog_rule
$(BINDIR)/$(call prog_of,$(1)): $(call comp_objs,$(1)) $(LIBMPIK8S) $(LIBKUBE)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(ALL_LDFLAGS) -o $$@ $(call comp_objs,$(1)) $(LIBMPIK8S) $(LIBKUBE) $$(PROG_LDLIBS) $$(call comp_libs,$(1))
endef
$(foreach c,$(COMPS),$(if $(wildcard $(c)/main.c),$(eval $(call prog_rule,$(c)))))

define unit_rule
$(BUILD)/tests/$(1): tests/unit/$(1).c $(call unit_objs,$(1)) $(call unit_libs,$(1))
	@mkdir -p $$(dir $$@)
	$$(CC) $$(ALL_CFLAGS) $$(ALL_LDFLAGS) -o $$@ $$< $(call unit_objs,$(1)) $(call unit_libs,$(1)) $$(LDLIBS_ALL) $$(call comp_libs,$(call test_comp,$(1))) -lcmocka
endef
$(foreach t,$(UNIT_SRCS:tests/unit/%.c=%),$(eval $(call unit_rule,$(t))))

-include $(wildcard rsh/module.mk agent/module.mk controller/module.mk images/images.mk tests/tests.mk)

# NPROC at once, each bounded; a failed one's log is printed whole
unit: $(UNIT_TESTS)
	@printf '%s\n' $(UNIT_TESTS) | xargs -P $(NPROC) -I{} bash -c 's=$$SECONDS; \
	  timeout 300 {} >{}.log 2>&1 && echo "PASS {} ($$((SECONDS-s))s)" || { cat {}.log; echo "FAIL: {}"; exit 1; }'

# The install tree kubesim's image map resolves mpik8s/* images to.
stage: all
	$(MAKE) --no-print-directory install DESTDIR=$(abspath build/stage) PREFIX=/usr/local >/dev/null

integration: all stage $(if $(TEST_PROGS),test-progs)
	BINDIR=$(abspath $(BINDIR)) MODE=$(MODE) JOBS=$${JOBS:-3} tests/run-integration.sh

# The real-cluster suite (tests/k8s/run.sh): components built from the Go module proxy
# (cached by version), images with the Docker Engine, then tests/k8s/cases and the listed
# integration tests on a real kube-apiserver, kubelet and containerd.
test-k8s: all stage
	tests/k8s/run.sh

# The format check, tests/rules.sh, the Prometheus rules' checks and the plots' check first: they take seconds and name what to fix. Then the
# build on every core, and tests/run-suites.sh: unit and fuzz-smoke, then the kubesim suite and
# the real-cluster suite side by side (the first is bound by CPU, the second mostly waits), then
# the real-cluster suite's exclusive tests alone. Every suite runs even when an earlier one
# failed, and the target fails if any did, naming them. The real cluster's components and
# images are built (niced) beside the first suites by tests/k8s/prebuild.sh: on a machine with
# a cold cache that is 30 minutes of building that no longer comes after them; on a warm one it
# finds everything and builds the other Kubernetes versions at nice 19 on the idle CPU, until
# the exclusive tests. It ends with the wall time of each suite and the 10 slowest tests
# (tests/report.sh). docs/k8s.md has the measurements.
test: format-check rules prometheus-rules plots-check
	$(MAKE) --no-print-directory -j$(NPROC) all
	NPROC=$(NPROC) tests/run-suites.sh

# ---- layout (.clang-format, clang-format 14) over every C source of ours ----
CLANG_FORMAT ?= clang-format
FORMAT_DIRS  := lib mpik8s controller agent rsh include tests/unit tests/fuzz images/nccl-benchmarks/src
FORMAT_SRCS   = $(shell find $(FORMAT_DIRS) -name '*.[ch]' 2>/dev/null | sort)
format:
	@command -v $(CLANG_FORMAT) >/dev/null || { echo "format: $(CLANG_FORMAT) not found (make deps installs clang-format)"; exit 2; }
	$(CLANG_FORMAT) -i --style=file $(FORMAT_SRCS)
format-check:
	@command -v $(CLANG_FORMAT) >/dev/null || { echo "format-check: $(CLANG_FORMAT) not found (make deps installs clang-format)"; exit 2; }
	@out=$$($(CLANG_FORMAT) --dry-run --style=file $(FORMAT_SRCS) 2>&1) || { echo "$$out"; exit 2; }; \
	bad=$$(printf '%s\n' "$$out" | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' | sort -u); \
	if [ -n "$$bad" ]; then echo "format-check: these files differ from .clang-format's layout (run make format):"; \
	  printf '  %s\n' $$bad; exit 1; fi; echo "format-check: $(words $(FORMAT_SRCS)) files match .clang-format"

# One rule per idea (tests/rules.sh): contract.h declarations only and without jansson, one sh_quote,
# one reader of /proc/self/exe, errmsg set with kube_set_err, named JSON fields read with kube_json_at*,
# C lines within 125 columns. Seconds; make test runs it first.
rules:
	bash tests/rules.sh

# The monitoring component (manifests/components/monitoring): promtool check/test rules, the
# generated PrometheusRule, the metric names against the operator's, the dashboard's queries.
prometheus-rules:
	bash tests/prometheus_rules.sh

# The benchmarks' pictures (docs/plots.md): bench/results/*.tsv -> docs/img/*.png, one command.
plots:
	bench/plot.sh
# bench/plot.sh regenerates every PNG from the committed TSVs (into a temporary directory),
# the TSVs have the headers the plots read, docs/ shows every PNG. Seconds; in make test.
plots-check:
	bash tests/plots.sh

# The whole-system fault matrix, load and security runs (full; a bounded subset is in integration).
e2e: all stage $(if $(TEST_PROGS),test-progs)
	BINDIR=$(abspath $(BINDIR)) tests/e2e/run.sh

asan:
	$(MAKE) MODE=asan all unit integration

# ---- fuzzing (clang + libFuzzer), targets in tests/fuzz/fuzz_*.c ----
# tests/fuzz/fuzz_<comp>_*.c (comp: rsh agent controller) also links <comp>/*.c minus main.c and mpik8s/*.c;
# seeds in tests/fuzz/corpus/<target>/, an optional libFuzzer dictionary in tests/fuzz/<target>.dict.
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=build/fuzz/%)
FUZZ_CFLAGS = $(CSTD) $(WARN) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Iinclude $(PKG_CFLAGS)
fuzz_comp = $(filter $(COMPS),$(word 2,$(subst _, ,$(1))))
fuzz_objs = $(patsubst %.c,build/fuzz/%.o,$(LIB_SRCS) $(if $(call fuzz_comp,$(1)),$(CONTRACT_SRCS)) \
  $(foreach c,$(call fuzz_comp,$(1)),$(filter-out $(c)/main.c,$(call comp_srcs,$(c)))))
build/fuzz/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(CSTD) $(WARN) -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -Iinclude $(PKG_CFLAGS) -MMD -MP -c $< -o $@
define fuzz_rule
build/fuzz/$(1): tests/fuzz/$(1).c $(call fuzz_objs,$(1))
	@mkdir -p $$(dir $$@)
	clang $$(FUZZ_CFLAGS) -o $$@ $$< $(call fuzz_objs,$(1)) $$(LDLIBS_ALL) $$(call comp_libs,$(call fuzz_comp,$(1)))
endef
$(foreach t,$(FUZZ_SRCS:tests/fuzz/%.c=%),$(eval $(call fuzz_rule,$(t))))
.SECONDARY: $(sort $(foreach t,$(FUZZ_SRCS:tests/fuzz/%.c=%),$(call fuzz_objs,$(t))))
# NPROC targets at once; each one's summary lines are printed together when it ends
fuzz: $(FUZZ_BINS)
	@printf '%s\n' $(FUZZ_BINS) | xargs -P $(NPROC) -I{} bash -c 'f={}; n=$$(basename $$f); \
	  mkdir -p build/fuzz/corpus/$$n; seeds=tests/fuzz/corpus/$$n; [ -d $$seeds ] || seeds=; \
	  dict=; [ -f tests/fuzz/$$n.dict ] && dict=-dict=tests/fuzz/$$n.dict; \
	  $$f -max_total_time=$(FUZZ_SECONDS) $(FUZZ_FLAGS) $$dict -print_final_stats=1 -rss_limit_mb=1024 \
	     build/fuzz/corpus/$$n $$seeds >build/fuzz/$$n.log 2>&1; rc=$$?; \
	  { echo "== $$n for $(FUZZ_SECONDS)s"; grep -E "stat::number_of_executed_units|ERROR|SUMMARY|Done" build/fuzz/$$n.log; } | \
	    flock build/fuzz/.out cat; [ $$rc -eq 0 ] || { echo "FAIL: $$n (log: build/fuzz/$$n.log)"; exit 1; }'
# In make test: the seeds plus a short run from a fixed seed (repeatable).
fuzz-smoke:
	$(MAKE) fuzz FUZZ_SECONDS=10 FUZZ_FLAGS=-seed=1

# ---- valgrind: every unit test under memcheck (release build; not part of make test) ----
VALGRIND_FLAGS ?= -q --error-exitcode=1 --leak-check=full
valgrind: $(UNIT_TESTS)
	@[ "$(MODE)" = release ] || { echo "make valgrind runs the release build (MODE=release)"; exit 2; }
	@fail=0; for t in $(UNIT_TESTS); do \
	  s=$$SECONDS; timeout 900 valgrind $(VALGRIND_FLAGS) $$t >$$t.valgrind.log 2>&1 && echo "PASS $$t ($$((SECONDS-s))s)" || \
	    { tail -n 60 $$t.valgrind.log; echo "FAIL: $$t (log: $$t.valgrind.log)"; fail=1; }; \
	done; exit $$fail

# every bench, then bench/plot.sh redraws docs/img/ from the TSVs they wrote
bench: all
	@for b in bench/*.sh; do [ -x "$$b" ] && [ "$$b" != bench/plot.sh ] || continue; echo "== $$b"; timeout 1800 $$b || echo "bench failed: $$b"; done
	bench/plot.sh

# ---- packages (Debian) ----
DEB_PKGS := build-essential pkg-config clang libclang-rt-14-dev \
  libjansson-dev libyaml-dev libssl-dev libcurl4-openssl-dev libssh2-1-dev libcmocka-dev openmpi-bin \
  libopenmpi-dev libpmix-dev libopenblas-dev libmicrohttpd-dev python3 python3-aiohttp python3-yaml \
  iproute2 util-linux procps psmisc busybox-static openssh-server openssh-client \
  hyperfine prometheus valgrind time patchelf openssl curl mpich libmpich-dev bc tinyproxy buildah mmdebstrap \
  clang-format containernetworking-plugins conntrack runc iptables gnuplot-nox
deps:
	@missing=$$(for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing: $$missing"; SUDO=; [ $$(id -u) -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
	@command -v kubectl >/dev/null || echo "note: kubectl not found; the kubectl tests will be skipped"

# CLUSTER=k8s: on the real cluster (tests/k8s), with the Docker Engine's images
demo: all stage $(if $(filter k8s,$(CLUSTER)),docker-images)
	CLUSTER=$(CLUSTER) tests/demo.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	for p in $(PROGS) $(EXTRA_PROGS); do install -m 0755 $$p $(DESTDIR)$(PREFIX)/bin/; done
	$(if $(PLUGIN_LINK),ln -sf mpi-agent $(DESTDIR)$(PREFIX)/bin/kubectl-mpijob)
	$(foreach h,$(INSTALL_HOOKS),$(MAKE) $(h) &&) true

# kubectl mpijob as a krew release ships it: build/krew/mpijob-linux-amd64.tar.gz (bin/mpi-agent,
# deterministic) and build/krew/mpijob.yaml (plugins/mpijob.yaml with its sha256), for
# `kubectl krew install --manifest build/krew/mpijob.yaml --archive build/krew/mpijob-linux-amd64.tar.gz`
krew: all
	plugins/krew.sh $(abspath $(BINDIR)) $(abspath build/krew)

clean:
	rm -rf build bin

-include $(shell find build -name '*.d' 2>/dev/null)
