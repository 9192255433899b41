#!/usr/bin/env bash
# bench/gpu.sh - the GPU benchmark table: builds the GPU workload programs and runs, on
# the GPUs of this machine (NP ranks, default: every visible GPU up to 8, one per rank):
#   1. allreduce-bench-gpu: NCCL allreduce sweep 8 B .. MAXBYTES (nccl-tests' algbw/busbw;
#      with one rank busbw is 0 by definition and algbw is the GPU's copy bandwidth);
#   2. an sgemm anchor: cnn-bench-gpu with 8192^3 GEMMs (near the GPU's FP32 GEMM peak);
#   3. cnn-bench-gpu for each model at its default batch size, reported as images/sec,
#      achieved TFLOP/s and the ratio to the anchor measured in this same run.
# Takes a few minutes on one GPU. Without a GPU (or without CUDA/NCCL at build time) it
# prints one line saying why and exits 2. Output: a table on stdout; raw logs in $OUT_DIR.
# DEVICE=cpu runs the same table on the CPU path (a check of this script without a GPU;
# --cpu_scale CPU_SCALE, default 0.002).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BINDIR=${BINDIR:-$ROOT/bin}
MAXBYTES=${MAXBYTES:-1G}
BATCHES=${BATCHES:-50}
MODELS=${MODELS:-"resnet50 resnet101 resnet152 vgg16 inception3 alexnet"}
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/bench-gpu.XXXXXX)}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp
die() { echo "bench/gpu.sh: $*" >&2; exit 2; }

make -s -C "$ROOT" workload >"$OUT_DIR/build.log" 2>&1 || { tail -n 20 "$OUT_DIR/build.log" >&2; die "build failed (log: $OUT_DIR/build.log)"; }
for p in allreduce-bench-gpu cnn-bench-gpu; do
  [ -x "$BINDIR/$p" ] || die "$BINDIR/$p was not built: CUDA's nvcc or NCCL's nccl.h not found (set CUDA_HOME / NCCL_HOME)"
done
command -v mpirun >/dev/null || die "mpirun not found (apt-get install openmpi-bin)"

ngpu=0
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then ngpu=$(nvidia-smi -L | grep -c '^GPU '); fi
NP=${NP:-$(( ngpu > 8 ? 8 : (ngpu > 0 ? ngpu : 1) ))}
mpi() { timeout -k 10 "${T:-600}" mpirun -np "$NP" -bind-to none "$@"; }
DEVICE=${DEVICE:-gpu}
DEVARGS=(--device="$DEVICE")
[ "$DEVICE" = cpu ] && { NP=${NP_CPU:-2}; CNNARGS=(--cpu_scale="${CPU_SCALE:-0.002}"); } || CNNARGS=()

# 1. allreduce sweep (also the GPU check: a missing driver or device fails here, clearly).
if ! T=600 mpi "$BINDIR/allreduce-bench-gpu" "${DEVARGS[@]}" -b 8 -e "$MAXBYTES" -f 2 -n 20 -w 5 >"$OUT_DIR/allreduce.log" 2>&1; then
  why=$(grep -m1 -E 'error: ' "$OUT_DIR/allreduce.log" | sed 's/^[^:]*: //')
  die "no usable GPU: ${why:-allreduce-bench-gpu failed (log: $OUT_DIR/allreduce.log)}"
fi
gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n 1)
[ -n "$gpu" ] || gpu=$(sed -n 's/^#  Rank  0 .* device  *[0-9]* \[[^]]*\] //p' "$OUT_DIR/allreduce.log" | head -n 1)
echo "== GPU: ${gpu:-unknown}; visible GPUs: $ngpu; ranks: $NP; $(sed -n 's/.*(NCCL \([0-9.]*\)).*/NCCL \1/p' "$OUT_DIR/allreduce.log" | head -n 1)"
echo "== allreduce-bench-gpu: NCCL, out-of-place, float sum, fresh data and a full check every iteration"
printf '%14s %12s %10s %10s %8s\n' "size(B)" "time(us)" "algbw" "busbw" "#wrong"
awk '/^ +[0-9]+ +[0-9]+ +float +sum / {printf "%14s %12s %10s %10s %8s\n", $1, $5, $6, $7, $8}' "$OUT_DIR/allreduce.log"
grep -E '^# (Out of bounds|Avg bus)' "$OUT_DIR/allreduce.log"

# 2. + 3. training throughput against an sgemm anchor from this run.
tflops() { # LOG -> achieved TFLOP/s per GPU from the header's GFLOP/step and total images/sec
  awk -v np="$NP" '/^Compute: / {g=$2} /^Batch size: .* per device/ {b=$1}
    /^ +[0-9]+ per device$/ {b=$1} /^total images\/sec:/ {t=$3}
    END {if (g && b && t) printf "%.4g", t / np / b * g / 1000; else print "?"}' "$1"
}
run_cnn() { # NAME ARGS... -> log in $OUT_DIR/cnn-NAME.log
  local name=$1; shift
  T=600 mpi "$BINDIR/cnn-bench-gpu" "${DEVARGS[@]}" "${CNNARGS[@]}" --num_batches="$BATCHES" --num_warmup_batches=10 "$@" \
    >"$OUT_DIR/cnn-$name.log" 2>&1 || { echo "cnn-bench-gpu $name failed:"; tail -n 5 "$OUT_DIR/cnn-$name.log"; return 1; }
}
echo "== cnn-bench-gpu: synthetic data-parallel training (cuBLAS sgemm FP32 + NCCL allreduce per step)"
anchor=
if run_cnn anchor --model=resnet50 --batch_size=64 --gemm_dim=$([ "$DEVICE" = cpu ] && echo 1024 || echo 8192); then anchor=$(tflops "$OUT_DIR/cnn-anchor.log"); fi
echo "anchor: large sgemm layers (--gemm_dim 8192; 1024 on CPU): ${anchor:-?} TFLOP/s per GPU"
printf '%-11s %6s %14s %14s %10s %9s\n' model batch "images/sec" "per GPU" "TFLOP/s" "x anchor"
rc=0
for m in $MODELS; do
  run_cnn "$m" --model="$m" || { rc=1; continue; }
  f=$OUT_DIR/cnn-$m.log
  total=$(sed -n 's/^total images\/sec: //p' "$f")
  batch=$(sed -n 's/^ *\([0-9]*\) per device$/\1/p' "$f")
  tf=$(tflops "$f")
  ratio=$(awk -v a="${anchor:-0}" -v t="$tf" 'BEGIN {if (a > 0 && t + 0 > 0) printf "%.2f", t / a; else print "?"}')
  printf '%-11s %6s %14s %14.1f %10s %9s\n' "$m" "$batch" "$total" "$(awk -v t="$total" -v n="$NP" 'BEGIN {print t / n}')" "$tf" "$ratio"
  grep -q '^checksums match: yes' "$f" || { echo "  $m: weights differ between ranks!"; rc=1; }
done
echo "logs: $OUT_DIR"
exit $rc
