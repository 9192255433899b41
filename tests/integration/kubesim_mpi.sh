#!/usr/bin/env bash
# timeout: 240
# Open MPI really crosses kubesim pods: 3 pods (hostname/subdomain + headless service,
# a ServiceAccount allowed to exec), a hostfile of their names, and `mpirun` started in
# pod 0 with OMPI_MCA_plm_rsh_agent = the seed's two-line kubexec.sh
# (`kubectl exec $POD -- /bin/sh -c "$*"`, kubectl using the mounted SA token).
# tests/mpi/allreduce_check must print the right sum from every rank, each in its pod.
# Upstream's kubexec.sh needs plm_rsh_no_tree_spawn=1 + orte_leave_session_attached=1
# (mpi-runtime.md section 1): the agent then lives as long as the remote orted.
set -u
: "${ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$ROOT/tests/lib/kubesim.sh"
ks_skip_unless_root
command -v kubectl >/dev/null || { echo "skip: kubectl not installed"; exit 77; }
command -v mpirun >/dev/null || { echo "skip: mpirun not installed"; exit 77; }
PROG=$ROOT/build/${MODE:-release}/tests/mpi/allreduce_check
if [ ! -x "$PROG" ]; then
  make -C "$ROOT" --no-print-directory MODE="${MODE:-release}" test-progs >/dev/null || ks_fail "cannot build $PROG"
fi

ks_up
M=$(mktemp) || ks_fail mktemp
ks_on_exit "rm -f $M"
cat "$ROOT/tests/integration/kubesim_data/mpi-base.yaml" > "$M"
for i in 0 1 2; do
  sed "s/@I@/$i/g" "$ROOT/tests/integration/kubesim_data/mpi-pod.yaml" >> "$M"
done
ks_kubectl apply -f - < "$M" >/dev/null || ks_fail "apply"
ks_kubectl wait --for=condition=Ready pod -l app=mpi --timeout=60s >/dev/null ||
  ks_fail "pods not Ready"

# DNS stand-in and in-pod kubectl before the real run (clear failures)
out=$(ks_kubectl exec mpi-0 -- getent hosts mpi-2.mpi.default.svc) || ks_fail "getent: $out"
ip2=$(ks_kubectl get pod mpi-2 -o jsonpath='{.status.podIP}')
[[ "$out" == "$ip2 "* ]] || ks_fail "mpi-2.mpi.default.svc resolves to '$out', pod IP is $ip2"
out=$(ks_kubectl exec mpi-0 -- kubectl exec mpi-1 -- hostname 2>&1)
[ "$out" = "mpi-1" ] || ks_fail "kubectl exec from inside a pod gave '$out'"

start=$(date +%s%N)
out=$(ks_kubectl exec mpi-0 -- timeout 120 mpirun -np 3 "$PROG" 65536 2>&1)
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "$out"
[ $rc -eq 0 ] || ks_fail "mpirun exited $rc"
for i in 0 1 2; do
  grep -qx "rank $i/3 host mpi-$i sum=6 OK" <<<"$out" || ks_fail "rank $i: no OK line from mpi-$i"
done
[ "$(grep -c ' OK$' <<<"$out")" -eq 3 ] || ks_fail "expected exactly 3 OK lines"

# a failing rank must fail the job: every rank rejects a bad COUNT and exits 2
out=$(ks_kubectl exec mpi-0 -- timeout 120 mpirun -np 3 "$PROG" notanumber 2>&1)
rc=$?
[ $rc -ne 0 ] || ks_fail "mpirun with a bad argument exited 0"
echo "PASS: 3 ranks in 3 pods through kubexec.sh, mpirun ${ms} ms; failure propagated (rc $rc)"
