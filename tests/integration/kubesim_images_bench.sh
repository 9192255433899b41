#!/usr/bin/env bash
# timeout: 1500
# The CPU benchmark example (examples/v2beta1/allreduce-bench-cpu.yaml, SSH transport)
# with its launcher and 2 workers running in the real mpik8s/nccl-benchmarks image (its
# CPU variant, built by `make images IMAGES=nccl-benchmarks` = images/build-images.sh, run
# by kubesim's kubelet in the image's own root filesystem from the local store); only the
# sweep is made smaller (8 B .. 1 MB instead of 16 MB). The operator (bin/mpi-operator, a
# process) and the launcher's init (mpik8s/mpi-agent -> build/stage) stay as in the other
# tests. The job must end Succeeded, and the launcher log must hold the benchmark's
# result: the header for 2 ranks on the two worker pods, one row per size from 8 B to
# 1 MB with #wrong 0 and a positive bus bandwidth at 1 MB, and "Out of bounds values : 0
# OK". Also checks that the pods ran in the image (imageID, the image's mpi-sshd serving
# the workers, a host-only file not visible). Skips (77) without root, kubectl, buildah or
# a way to make the Debian base. Cold (no cached layers) the image build takes minutes;
# warm (unchanged workload sources) seconds.
set -u
. "$(dirname "$0")/controller_common.bash"
. "$ROOT/tests/integration/kubesim_images.bash"
img_skip_unless_tools
[ -d "$ROOT/build/stage/usr/local/lib/mpi-k8s/bundle" ] || ks_fail "no build/stage bundle (run make stage)"
EX=$ROOT/examples/v2beta1/allreduce-bench-cpu.yaml
W=$(mktemp -d /tmp/ks-images-bench.XXXXXX)
HOSTONLY=/var/tmp/kubesim-host-only.$$
trap 'rm -rf "$W" "$HOSTONLY"' EXIT
t0=$(date +%s)
"$ROOT/images/build-images.sh" nccl-benchmarks || ks_fail "make images IMAGES=nccl-benchmarks (log: build/images/)"
echo "image mpik8s/nccl-benchmarks:latest ready in $(( $(date +%s) - t0 )) s"
printf '%s\n' "mpik8s/nccl-benchmarks store" "mpik8s/* build/stage/usr/local/bin" >"$W/images.conf"
# the example with a smaller sweep: -e 16M -> -e 1M
sed -e 's/^            - 16M$/            - 1M/' "$EX" >"$W/bench.yaml"
grep -qx '            - 1M' "$W/bench.yaml" || ks_fail "$EX no longer sweeps to 16M (- 16M): update this test"
echo on-host >"$HOSTONLY"

ctl_cluster --set images_conf="$W/images.conf"
ks_on_exit "rm -rf '$W' '$HOSTONLY'"
ctl_start op --leader-elect=false
J=allreduce-bench-cpu
# workers are kept after success (cleanPodPolicy None) so that they can be inspected
sed 's/cleanPodPolicy: Running/cleanPodPolicy: None/' "$W/bench.yaml" | kc create -f - >/dev/null || ks_fail "create $J"
ks_wait_for "[ \"\$(cond $J Succeeded status)\" = True ] || [ \"\$(cond $J Failed status)\" = True ]" 300 || true
L=$(kc get pods -l "mpi_job_name=$J,mpi_role_type=launcher" -o name | tail -1)
log=$(kc logs "$L" -c allreduce-bench 2>&1)
echo "$log" | tail -n 20
if [ "$(cond $J Succeeded status)" != True ]; then
  kc get mpijob $J -o yaml; kc get pods -o wide
  kc logs "$L" -c mpi-agent-init --tail 20
  for w in 0 1; do kc logs "$J-worker-$w" --tail 20; done
  ks_fail "$J did not succeed (Failed: $(cond $J Failed message))"
fi

# the benchmark's result lines
grep -q '^# nRanks 2 minBytes 8 maxBytes 1048576 ' <<<"$log" || ks_fail "no header for 2 ranks, 8 B .. 1 MB"
for i in 0 1; do
  grep -Eq "^#  Rank  $i Pid +[0-9]+ on +$J-worker-[01] cpu " <<<"$log" || ks_fail "rank $i is not on a worker pod"
done
[ "$(grep -Ec "^# +Rank +[01] Pid .* on +$J-worker-0 " <<<"$log")" = 1 ] || ks_fail "not one rank per worker pod"
rows=$(awk '$1 ~ /^[0-9]+$/ && NF == 8' <<<"$log")
want=$(for ((b = 8; b <= 1048576; b *= 2)); do echo "$b"; done)
[ "$(awk '{print $1}' <<<"$rows")" = "$want" ] || ks_fail "result rows are not one per size 8 B .. 1 MB: $rows"
awk '$8 != 0 {bad = 1} END {exit bad}' <<<"$rows" || ks_fail "#wrong is not 0 in every row: $rows"
awk '$1 == 1048576 && $3 == "float" && $4 == "sum" && $7 > 0 {ok = 1} END {exit !ok}' <<<"$rows" ||
  ks_fail "no positive busbw for 1 MB float sum: $rows"
grep -q '^# Out of bounds values : 0 OK$' <<<"$log" || ks_fail "no 'Out of bounds values : 0 OK'"

# the pods ran in the image: imageID, the image's mpi-sshd behind the workers, not the host's files
for p in "${L#pod/}" "$J-worker-0" "$J-worker-1"; do
  id=$(kc get pod "$p" -o jsonpath='{.status.containerStatuses[0].imageID}')
  [[ $id == docker.io/mpik8s/nccl-benchmarks@sha256:* ]] || ks_fail "$p: imageID '$id' is not the store's mpik8s/nccl-benchmarks"
done
out=$(kc exec "$J-worker-0" -- sh -c "test -e $HOSTONLY && echo host-file-visible; for p in allreduce-bench cnn-bench mpi-sshd; do command -v \$p; done; for c in /proc/[0-9]*/cmdline; do tr '\\0' ' ' <\"\$c\"; echo; done" 2>&1) ||
  ks_fail "exec into $J-worker-0: $out"
grep -qx host-file-visible <<<"$out" && ks_fail "the worker sees the host's $HOSTONLY: not in its image's root"
for p in allreduce-bench cnn-bench mpi-sshd; do
  grep -qx "/usr/local/bin/$p" <<<"$out" || ks_fail "the image lacks /usr/local/bin/$p: $out"
done
grep -q 'sshd -D -e -f /tmp/mpi-sshd\.' <<<"$out" || ks_fail "the worker's sshd was not started by the image's mpi-sshd: $out"
kc delete mpijob $J --wait=false >/dev/null || ks_fail "delete $J"
echo "PASS: $J ran to Succeeded in the store's mpik8s/nccl-benchmarks ($id), results checked"
