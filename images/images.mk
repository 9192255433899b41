# images/images.mk - build rules for the workload programs of the mpik8s/nccl-benchmarks
# image (sources in images/nccl-benchmarks/src/), auto-included by the top Makefile.
#
#   $(BINDIR)/cnn-bench, $(BINDIR)/allreduce-bench          CPU builds (always): mpicc + OpenBLAS
#   $(BINDIR)/mpi-pi (Open MPI), $(BINDIR)/mpi-pi-mpich     the pi/hello job (MPICH build where mpicc.mpich is found)
#   $(BINDIR)/cnn-bench-gpu, $(BINDIR)/allreduce-bench-gpu  GPU builds, only where CUDA's nvcc and
#       NCCL's nccl.h are found (CUDA_HOME, default /usr/local/cuda): cuBLAS + NCCL + cudart;
#       they default to --device=gpu and also run the CPU path with --device=cpu.
#
# Overridable: MPICC, CUDA_HOME, NCCL_HOME, CUDA_ARCHS (nvcc -gencode list), WL_GPU=no.

MPICC     ?= mpicc
CUDA_HOME ?= /usr/local/cuda
NCCL_HOME ?= $(CUDA_HOME)
WL_SRC    := images/nccl-benchmarks/src
WL_OBJ    := $(BUILD)/images/wl
WL_NVCC   := $(wildcard $(CUDA_HOME)/bin/nvcc)
WL_NCCL_H := $(firstword $(wildcard $(NCCL_HOME)/include/nccl.h /usr/include/nccl.h))
WL_GPU    ?= $(if $(and $(WL_NVCC),$(WL_NCCL_H)),yes,no)
# Turing .. Hopper as cubins, plus PTX for newer GPUs (JIT-compiled by the driver).
CUDA_ARCHS ?= -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 \
              -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90

WL_COMMON := wl_common wl_opts wl_dev_cpu wl_asan
WL_CNN    := cnn_bench cnn_models cnn_trainer cnn_work cnn_report
WL_AR     := allreduce_bench
WL_CFLAGS  = $(CSTD) $(WARN) $(OPT) -I$(WL_SRC) $(CFLAGS)
WL_LIBS    = -lopenblas -lm

# CPU builds
$(WL_OBJ)/cpu/%.o: $(WL_SRC)/%.c
	@mkdir -p $(dir $@)
	$(MPICC) $(WL_CFLAGS) -MMD -MP -c $< -o $@

$(BINDIR)/cnn-bench: $(patsubst %,$(WL_OBJ)/cpu/%.o,$(WL_CNN) $(WL_COMMON) wl_nogpu)
	@mkdir -p $(dir $@)
	$(MPICC) $(ALL_LDFLAGS) -o $@ $^ $(WL_LIBS)

$(BINDIR)/allreduce-bench: $(patsubst %,$(WL_OBJ)/cpu/%.o,$(WL_AR) $(WL_COMMON) wl_nogpu)
	@mkdir -p $(dir $@)
	$(MPICC) $(ALL_LDFLAGS) -o $@ $^ $(WL_LIBS)

$(BINDIR)/mpi-pi: $(WL_OBJ)/cpu/mpi_pi.o $(WL_OBJ)/cpu/wl_asan.o
	@mkdir -p $(dir $@)
	$(MPICC) $(ALL_LDFLAGS) -o $@ $^ -lm

WL_PROGS := $(BINDIR)/cnn-bench $(BINDIR)/allreduce-bench $(BINDIR)/mpi-pi

# mpi-pi for MPICH (examples with mpiDistribution/mpiImplementation MPICH), where found
MPICC_MPICH ?= $(firstword $(wildcard /usr/bin/mpicc.mpich))
ifneq ($(MPICC_MPICH),)
# (never sanitized: MPICH's Hydra kills a job whose ranks are slow to exit, as ASan's
# leak check at exit makes them)
$(BINDIR)/mpi-pi-mpich: $(WL_SRC)/mpi_pi.c
	@mkdir -p $(dir $@)
	$(MPICC_MPICH) $(CSTD) $(WARN) -O2 -g $(CFLAGS) -o $@ $< -lm
WL_PROGS += $(BINDIR)/mpi-pi-mpich
endif

# GPU builds
ifeq ($(WL_GPU),yes)
WL_CUDA_INC  := $(sort -I$(CUDA_HOME)/include -I$(NCCL_HOME)/include)
WL_CUDA_LIBS := $(sort -L$(CUDA_HOME)/lib64 -L$(NCCL_HOME)/lib64) \
                $(sort -Wl,-rpath,$(CUDA_HOME)/lib64 -Wl,-rpath,$(NCCL_HOME)/lib64) -lnccl -lcublas -lcudart -lstdc++

$(WL_OBJ)/gpu/%.o: $(WL_SRC)/%.c
	@mkdir -p $(dir $@)
	$(MPICC) $(WL_CFLAGS) $(WL_CUDA_INC) -DWL_HAVE_GPU -MMD -MP -c $< -o $@

$(WL_OBJ)/gpu/wl_kernels.o: $(WL_SRC)/wl_kernels.cu $(WL_SRC)/wl_hash.h $(WL_SRC)/wl_kernels.h
	@mkdir -p $(dir $@)
	$(WL_NVCC) -O2 -std=c++17 $(CUDA_ARCHS) -I$(WL_SRC) -c $< -o $@

$(BINDIR)/cnn-bench-gpu: $(patsubst %,$(WL_OBJ)/gpu/%.o,$(WL_CNN) $(WL_COMMON) wl_dev_gpu wl_kernels)
	@mkdir -p $(dir $@)
	$(MPICC) $(ALL_LDFLAGS) -o $@ $^ $(WL_CUDA_LIBS) $(WL_LIBS)

$(BINDIR)/allreduce-bench-gpu: $(patsubst %,$(WL_OBJ)/gpu/%.o,$(WL_AR) $(WL_COMMON) wl_dev_gpu wl_kernels)
	@mkdir -p $(dir $@)
	$(MPICC) $(ALL_LDFLAGS) -o $@ $^ $(WL_CUDA_LIBS) $(WL_LIBS)

WL_PROGS += $(BINDIR)/cnn-bench-gpu $(BINDIR)/allreduce-bench-gpu
endif

EXTRA_PROGS += $(WL_PROGS)
all: $(WL_PROGS)

.PHONY: workload
workload: $(WL_PROGS)

# Container images with the Docker Engine (images/README.md): every images/*/Dockerfile as
# mpik8s/NAME:$(IMAGE_TAG). Base images missing from the engine's store are made with
# mmdebstrap and `docker import`ed (no registry is needed); nccl-benchmarks builds its CPU
# variant where CUDA's base images are not there. Unchanged inputs: seconds.
IMAGE_TAG ?= latest
.PHONY: docker-images
docker-images:
	ENGINE=docker IMAGE_TAG=$(IMAGE_TAG) images/build-images.sh $(IMAGES)

# Local images without a registry or a Docker daemon (buildah + mmdebstrap; `make deps`):
# every images/*/Dockerfile (or IMAGES="mpi-operator ...") into the local containers-storage
# as docker.io/mpik8s/NAME:$(IMAGE_TAG), which kubesim's kubelet runs pods from
# (docs/kubesim.md "Real images"). Base images are made with mmdebstrap; the CUDA image
# builds its CPU variant. A Docker daemon is used where buildah is missing. Layer caches
# make a second run take seconds. See images/build-images.sh.
IMAGES ?=
.PHONY: images
images:
	IMAGE_TAG=$(IMAGE_TAG) images/build-images.sh $(IMAGES)

# The SSH transport's worker-side sshd (images/openmpi): mpi-sshd finds its
# sshd_config at <bin>/../share/mpi-k8s/sshd_config.
INSTALL_HOOKS += install-mpi-sshd
.PHONY: install-mpi-sshd
install-mpi-sshd:
	install -D -m 0755 images/openmpi/mpi-sshd $(DESTDIR)$(PREFIX)/bin/mpi-sshd
	install -D -m 0644 images/openmpi/sshd_config $(DESTDIR)$(PREFIX)/share/mpi-k8s/sshd_config
