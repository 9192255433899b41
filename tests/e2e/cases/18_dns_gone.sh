#!/usr/bin/env bash
# 18 (real cluster only): cluster DNS gone while a job launches. CoreDNS is scaled to 0
# (the kube-dns Service has no endpoint: queries to 10.96.0.10 are refused or time out)
# before an MPIJob is created, once with the exec transport and once with ssh (worker-timeout
# 60 s, backoffLimit 0). Measured (docs/reliability.md): exec Succeeded (the agent and
# mpi-rsh reach pods through the API server; mpirun's own lookups time out: 37.6 s for an
# `echo`); ssh Failed 107-109 s after create naming DNS ("ssh DNS: cannot resolve host
# ..."), at the agent's reach deadline (worker-timeout + 30 s, overrun by a blocking lookup).
# timeout: 420
. "$(dirname "$0")/../lib.sh"
[ "$KUBE_BACKEND" = k8s ] || e2e_skip "CoreDNS needs the real cluster (KUBE_BACKEND=k8s)"
e2e_begin
e2e_up
e2e_op_start a
kc -n kube-system scale deploy coredns --replicas 0 >/dev/null || e2e_fail "scale CoreDNS to 0"
e2e_wait_for "[ -z \"\$(kc -n kube-system get pods -l k8s-app=kube-dns -o name)\" ]" 60 || e2e_fail "CoreDNS pods still there"
for tr in ${TRANSPORTS:-exec ssh}; do
  job=d-$tr
  t0=$(e2e_now_ms)
  TRANSPORT=$tr BACKOFF=0 WORKER_TIMEOUT=60 \
    PROG='[timeout, "120", mpirun, -np, "2", --bind-to, none, sh, -c, "echo rank-up"]' e2e_create $job
  # the launcher's log, followed from its start (the Job deletes a failed launcher pod)
  e2e_wait_for "[ -n \"\$(launcher_pod $job)\" ]" 60 || e2e_fail "$job: no launcher pod"
  ( for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
      timeout 200 "$KUBESIM" run --dir "$KS" -- kubectl logs -f --all-containers "$(launcher_pod $job)" 2>/dev/null && break
      sleep 1; done >"$E2E_DIR/$job-launcher.log" ) &
  E2E_PIDS+=("$!")
  e2e_final $job 200 || { launcher_log $job | tail -n 20 >&2; e2e_fail "$job: no final state within 200 s (HANG)"; }
  secs=$(awk -v a="$T_FINAL" -v b="$t0" 'BEGIN { printf "%.1f", (a - b) / 1000 }')
  sleep 1
  grep -v '^rank-up' "$E2E_DIR/$job-launcher.log" | tail -n 12 | sed "s/^/$job launcher: /" >&2
  e2e_log "$job: $FINAL/$FINAL_REASON ${secs}s after create: $FINAL_MSG"
  e2e_note "$tr=$FINAL(${secs}s)"
  if [ $tr = exec ]; then
    [ "$FINAL" = Succeeded ] || e2e_fail "$job: $FINAL ($FINAL_MSG), expected Succeeded (exec needs no cluster DNS)"
  else
    [ "$FINAL" = Failed ] && [[ $FINAL_MSG =~ "DNS: cannot resolve host" ]] ||
      e2e_fail "$job: $FINAL ($FINAL_MSG), expected Failed naming DNS"
    awk -v s="$secs" 'BEGIN { exit !(s <= 150) }' || e2e_fail "$job: Failed ${secs}s after create (bound 150 s)"
  fi
  e2e_no_leftovers $job 60
done
e2e_pass
