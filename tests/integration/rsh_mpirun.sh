#!/usr/bin/env bash
# rsh_mpirun.sh - real MPI launchers through mpi-rsh into kubesim pods (exec transport):
# Open MPI 4.1 mpirun with OMPI_MCA_plm_rsh_agent=mpi-rsh for 2 workers (default tree
# spawn) and 8 workers (no_tree_spawn + leave-session-attached, as the agent sets it),
# an MPI_Allreduce across the pods; a hostfile naming a missing pod fails fast instead of
# hanging; MPICH Hydra (mpiexec.hydra -launcher rsh -launcher-exec mpi-rsh) for 2 workers.
# timeout: 300
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BINDIR=${BINDIR:-$ROOT/bin}
. "$ROOT/tests/lib/kubesim.sh"
ks_skip_unless_root
command -v mpicc >/dev/null && command -v mpirun >/dev/null || { echo "Open MPI not installed"; exit 77; }
RSH=$BINDIR/mpi-rsh
ks_up
# pods have a private /tmp: the MPI program lives where they can see it
M=$(mktemp -d "$ROOT/build/rsh-mpi.XXXXXX")
ks_on_exit 'rm -rf "$M"'
NETNS=$(cat "$KS_DIR/state/netns")
export KUBECONFIG=$KS_DIR/kubeconfig MPI_JOB_NAMESPACE=default MPI_JOB_WORKER_CONTAINER=main
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset MPI_JOB_TRANSPORT
IN() { nsenter --net=/run/netns/$NETNS -- "$@"; }
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails+1)); }

cat > "$M/allred.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    int r, n, s = 0;
    char h[256];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    gethostname(h, sizeof h);
    MPI_Allreduce(&r, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank %d/%d on %s sum %d\n", r, n, h, s);
    MPI_Finalize();
    return 0;
}
EOF
mpicc -o "$M/allred" "$M/allred.c" || ks_fail "mpicc"

for i in $(seq 0 7); do
  printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: job-worker-%d, labels: {mpi_job_name: job, mpi_role_type: worker}}\nspec:\n  hostname: job-worker-%d\n  subdomain: job-worker\n  containers: [{name: main, image: debian, command: [sleep, infinity]}]\n' $i $i
done > "$M/pods.yaml"
IN kubectl apply --validate=false -f "$M/pods.yaml" >/dev/null || ks_fail "apply"
ks_wait_for '[ "$(IN kubectl get pods -o jsonpath="{.items[*].status.phase}")" = "$(echo Running Running Running Running Running Running Running Running)" ]' 90 \
  || ks_fail "worker pods not running"

# expect_ranks N OUTPUT: one line per rank, each on its own pod, correct sum
expect_ranks() {
  local n=$1 out=$2 sum=$(( $1 * ($1 - 1) / 2 )) i
  for i in $(seq 0 $((n-1))); do
    grep -qx "rank $i/$n on job-worker-$i sum $sum" <<<"$out" || return 1
  done
  [ "$(grep -c '^rank ' <<<"$out")" = "$n" ]
}

# --- Open MPI, 2 workers, defaults (tree spawn on the orted line)
seq 0 1 | sed 's/^/job-worker-/; s/$/ slots=1/' > "$M/hosts2"
t0=$(date +%s%N)
out=$(OMPI_MCA_plm_rsh_agent=$RSH IN timeout 120 mpirun --hostfile "$M/hosts2" -np 2 "$M/allred" 2>&1); rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
if [ $rc = 0 ] && expect_ranks 2 "$out"; then ok "Open MPI, 2 workers, tree spawn (${ms} ms)"; else bad "Open MPI 2 workers rc=$rc: $out"; fi

# --- Open MPI, 8 workers, the agent's settings
seq 0 7 | sed 's/^/job-worker-/; s/$/ slots=1/' > "$M/hosts8"
t0=$(date +%s%N)
out=$(OMPI_MCA_plm_rsh_agent=$RSH OMPI_MCA_plm_rsh_no_tree_spawn=1 OMPI_MCA_orte_leave_session_attached=1 \
      OMPI_MCA_plm_rsh_num_concurrent=128 IN timeout 180 mpirun --hostfile "$M/hosts8" -np 8 "$M/allred" 2>&1); rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
if [ $rc = 0 ] && expect_ranks 8 "$out"; then ok "Open MPI, 8 workers, no tree spawn, attached (${ms} ms)"; else bad "Open MPI 8 workers rc=$rc: $out"; fi

# --- FQDN host names (orte_keep_fqdn_hostnames): first label is the pod
seq 0 1 | sed 's/^/job-worker-/; s/$/.job-worker.default.svc slots=1/' > "$M/hostsf"
out=$(OMPI_MCA_plm_rsh_agent=$RSH OMPI_MCA_orte_keep_fqdn_hostnames=1 IN timeout 120 mpirun --hostfile "$M/hostsf" -np 2 "$M/allred" 2>&1); rc=$?
if [ $rc = 0 ] && expect_ranks 2 "$out"; then ok "Open MPI with FQDN hostnames"; else bad "FQDN rc=$rc: $out"; fi

# --- a missing worker: the agent fails (255), mpirun gives up instead of hanging
printf 'job-worker-0 slots=1\njob-worker-99 slots=1\n' > "$M/hostsbad"
t0=$(date +%s%N)
out=$(OMPI_MCA_plm_rsh_agent=$RSH IN timeout 60 mpirun --hostfile "$M/hostsbad" -np 2 "$M/allred" 2>&1); rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
if [ $rc != 0 ] && [ $rc != 124 ] && grep -q 'pods "job-worker-99" not found' <<<"$out"; then ok "missing pod: mpirun rc=$rc in ${ms} ms, reason shown"
else bad "missing pod: rc=$rc: $out"; fi

# --- MPICH Hydra: -launcher rsh -launcher-exec mpi-rsh
if command -v mpiexec.hydra >/dev/null; then
  printf 'job-worker-0\njob-worker-1\n' > "$M/hydrahosts"
  out=$(IN timeout 60 mpiexec.hydra -launcher rsh -launcher-exec "$RSH" -localhost 10.250.0.1 -f "$M/hydrahosts" -n 2 hostname 2>&1); rc=$?
  if [ $rc = 0 ] && [ "$(sort <<<"$out" | tr '\n' ' ')" = "job-worker-0 job-worker-1 " ]; then ok "Hydra launches hostname in 2 pods"
  else bad "Hydra rc=$rc: $out"; fi
  if command -v mpicc.mpich >/dev/null; then
    mpicc.mpich -o "$M/allred-mpich" "$M/allred.c" || bad "mpicc.mpich"
    out=$(IN timeout 90 mpiexec.hydra -launcher rsh -launcher-exec "$RSH" -localhost 10.250.0.1 -f "$M/hydrahosts" -n 2 "$M/allred-mpich" 2>&1); rc=$?
    if [ $rc = 0 ] && expect_ranks 2 "$out"; then ok "MPICH Allreduce across 2 pods via Hydra"; else bad "MPICH rc=$rc: $out"; fi
  fi
else
  echo "note: mpiexec.hydra not installed (apt-get install mpich); Hydra part skipped"
fi

echo "failures: $fails"
[ $fails -eq 0 ]
