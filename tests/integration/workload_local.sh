#!/usr/bin/env bash
# workload_local: runs cnn-bench and allreduce-bench directly under mpirun on this
# machine (CPU path, 2-3 ranks) and checks what users rely on: tf_cnn_benchmarks'
# output format, a falling loss, identical weights on every rank, a correct allreduce
# sweep with nccl-tests' bandwidth definitions, and clear non-zero exits for corrupted
# results, mismatched options, a rank that never reaches the first collective, bad
# options, and (GPU build, no GPU here) a missing driver/device.
# timeout: 600
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BINDIR=${BINDIR:-$ROOT/bin}
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# 3 ranks on 2 shared cores: yield instead of busy-polling when idle
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1 OPENBLAS_NUM_THREADS=1
for p in cnn-bench allreduce-bench; do
  [ -x "$BINDIR/$p" ] || { echo "SKIP: $BINDIR/$p not built"; exit 77; }
done
command -v mpirun >/dev/null || { echo "SKIP: mpirun not installed"; exit 77; }
TMP=$(mktemp -d /tmp/workload-local.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fails=0
. "$(dirname "$0")/workload_checks.bash"
ok()   { echo "ok   - $*"; }
bad()  { echo "FAIL - $*"; fails=$((fails+1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
run() { # run NAME mpirun-args... ; output in $TMP/NAME.out, exit code in $TMP/NAME.rc
  local name=$1; shift
  timeout -k 5 120 mpirun "$@" >"$TMP/$name.out" 2>&1; echo $? >"$TMP/$name.rc"
}
rc() { cat "$TMP/$1.rc"; }
has() { grep -qE -- "$2" "$TMP/$1.out"; }

# ---- cnn-bench: format, falling loss, matching checksums ----
NB=40; DE=10
run cnn -np 2 "$BINDIR/cnn-bench" --model=resnet50 --batch_size=32 --num_batches=$NB \
  --num_warmup_batches=5 --display_every=$DE --cpu_scale=0.0005 --variable_update=horovod
check "cnn-bench exits 0" [ "$(rc cnn)" = 0 ]
check_cnn "$TMP/cnn.out" cnn-bench 2 $NB $DE cpu
check "cnn-bench states its CPU scale" has cnn '^CPU scale:   0.0005 '
check "first step line is step 1 with zero error and jitter" \
  grep -qE $'^1\timages/sec: [0-9.]+ \\+/- 0\\.0 \\(jitter = 0\\.0\\)\t' "$TMP/cnn.out"

run cnn_corrupt -np 2 "$BINDIR/cnn-bench" --batch_size=8 --num_batches=3 --num_warmup_batches=1 \
  --cpu_scale=0.0001 --test_corrupt
check "cnn-bench with differing weights exits non-zero" [ "$(rc cnn_corrupt)" != 0 ]
check "... and says checksums match: no" has cnn_corrupt '^checksums match: no'

# ---- allreduce-bench: correct sweep, nccl-tests bandwidth definitions ----
# Under `make asan` each rank's MPI_Init is slow (full unwinding on every malloc for the
# leak suppressions): 3 ranks on 2 shared cores do not fit the bound, so asan runs 2.
nps="2 3"; [ "${MODE:-release}" = asan ] && nps=2
for np in $nps; do
  if [ $np = 2 ]; then e=1M rows=18; else e=64K rows=14; fi
  run ar$np -np $np "$BINDIR/allreduce-bench" -b 8 -e $e -f 2 -n 5 -w 2
  check "allreduce-bench -np $np exits 0" [ "$(rc ar$np)" = 0 ]
  check_allreduce "$TMP/ar$np.out" "allreduce-bench -np $np" $np 8 $rows
done
run ar_corrupt -np 2 "$BINDIR/allreduce-bench" -b 1K -e 4K -n 3 -w 0 --test_corrupt
check "allreduce-bench with a corrupted result exits non-zero" [ "$(rc ar_corrupt)" != 0 ]
check "... and counts the 3 x 3 wrong values" has ar_corrupt '^# Out of bounds values : 9 FAILED$'

# ---- mpi-pi (the hello job), Open MPI and, where built, MPICH ----
if [ -x "$BINDIR/mpi-pi" ]; then
  run pi -np 2 "$BINDIR/mpi-pi" 2000000
  check "mpi-pi: rc 0, both ranks report, pi correct to 1e-9" [ "$(rc pi)" = 0 ] && \
    [ "$(grep -c '^Rank [01] of 2 running on ' "$TMP/pi.out")" = 2 ] && has pi '^pi is approximately 3\.14159265[0-9]+, Error is 0\.000000000'
else bad "mpi-pi not built"; fi
if [ -x "$BINDIR/mpi-pi-mpich" ] && command -v mpiexec.hydra >/dev/null; then
  timeout -k 5 60 mpiexec.hydra -n 2 "$BINDIR/mpi-pi-mpich" 2000000 >"$TMP/pimpich.out" 2>&1; echo $? >"$TMP/pimpich.rc"
  check "mpi-pi-mpich under MPICH's Hydra: rc 0, 2 ranks, pi correct" [ "$(rc pimpich)" = 0 ] && \
    [ "$(grep -c '^Rank [01] of 2 running on ' "$TMP/pimpich.out")" = 2 ] && has pimpich '^pi is approximately 3\.14159265'
else echo "note - MPICH (mpicc.mpich, mpiexec.hydra) not installed: mpi-pi-mpich not checked"; fi

# ---- clear errors, never a hang ----
run mismatch -np 1 "$BINDIR/cnn-bench" --batch_size=32 --num_batches=2 : -np 1 "$BINDIR/cnn-bench" --batch_size=64 --num_batches=2
check "mismatched --batch_size exits non-zero" [ "$(rc mismatch)" != 0 ]
check "... naming the option and both values" has mismatch 'ranks disagree on --batch_size \(min 32, max 64\)'
run badopt -np 2 "$BINDIR/allreduce-bench" --bogus
check "unknown option exits 2" [ "$(rc badopt)" = 2 ]
check "... with one line naming it" [ "$(grep -c "unknown option '--bogus'" "$TMP/badopt.out")" = 1 ]
run badval -np 2 "$BINDIR/cnn-bench" --model=resnet9
check "unknown model exits 2 naming the choices" [ "$(rc badval)" = 2 ] && has badval "model: expected one of resnet50\|"
run help -np 2 "$BINDIR/cnn-bench" --help
check "--help exits 0 and lists --cpu_scale" [ "$(rc help)" = 0 ] && has help '--cpu_scale'
run nogpu -np 2 "$BINDIR/cnn-bench" --device=gpu
check "CPU build asked for a GPU exits 2 with a clear message" [ "$(rc nogpu)" = 2 ] && has nogpu 'built without CUDA/NCCL'

# A rank that starts MPI but never reaches the first collective: bounded by --startup_timeout.
cat >"$TMP/stuck.c" <<'C'
#include <mpi.h>
#include <unistd.h>
int main(int argc, char **argv) { MPI_Init(&argc, &argv); sleep(60); MPI_Finalize(); return 0; }
C
if mpicc -o "$TMP/stuck" "$TMP/stuck.c"; then
  start=$(date +%s)
  run stuck -np 1 "$BINDIR/cnn-bench" --startup_timeout=3 : -np 1 "$TMP/stuck"
  took=$(( $(date +%s) - start ))
  check "first collective times out: non-zero exit within 30 s (took ${took}s)" [ "$(rc stuck)" != 0 -a "$(rc stuck)" != 124 -a $took -lt 30 ]
  check "... with a message naming the timeout" has stuck 'timed out after 3 s waiting for all 2 ranks at the first collective'
else
  bad "mpicc could not build the stuck-rank helper"
fi

# ---- GPU builds on a machine without a GPU: clear message, non-zero exit ----
for p in cnn-bench-gpu allreduce-bench-gpu; do
  [ -x "$BINDIR/$p" ] || { echo "note - $p not built (no CUDA/NCCL at build time)"; continue; }
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    echo "note - a GPU is present: skipping the no-GPU check of $p (bench/gpu.sh covers GPUs)"; continue
  fi
  if [ $p = cnn-bench-gpu ]; then args=(--num_batches=3 --batch_size=8); cpuargs=(--cpu_scale=0.0001)
  else args=(-e 64K -n 2); cpuargs=(); fi
  run $p -np 2 "$BINDIR/$p" "${args[@]}"
  check "$p without a GPU exits non-zero (rc $(rc $p))" [ "$(rc $p)" != 0 -a "$(rc $p)" != 124 ]
  check "... saying why (cudaErrorInsufficientDriver 35 or cudaErrorNoDevice 100), once" \
    [ "$(grep -cE 'no usable NVIDIA driver .*cudaErrorInsufficientDriver \(35\)|no CUDA device visible .*cudaErrorNoDevice \(100\)' "$TMP/$p.out")" = 1 ]
  run ${p}_cpu -np 2 "$BINDIR/$p" --device=cpu "${args[@]}" "${cpuargs[@]}"
  check "$p --device=cpu runs the CPU path" [ "$(rc ${p}_cpu)" = 0 ]
done

if [ $fails -ne 0 ]; then
  for f in "$TMP"/*.out; do echo "==== $(basename "$f")"; tail -n 25 "$f"; done
  echo "workload_local: $fails check(s) failed"; exit 1
fi
echo "workload_local: all checks passed"
