# tests/e2e/restart_lib.sh - the body of cases 16 (kubelet restarted) and 17 (containerd
# restarted), real cluster only: two nodes, the launcher on k8s-node-1 and both workers on
# k8s-node-2; while mpirun runs (the ranks print rank-up, sleep 20 s, print rank-done) node
# 2's kubelet or containerd is restarted (tests/k8s/k8s fault restart-kubelet|
# restart-containerd k8s-node-2: SIGTERM, then started again; the containers run on). Once
# with the exec transport, once with ssh, each backoffLimit 0, one after the other on the
# same cluster. The expected outcome per transport is the case's EXPECT_EXEC / EXPECT_SSH
# ("Succeeded", or "Failed:<message regex>", or "record"), reached within BOUND seconds of
# the fault; EXPECT_EXEC_LOG: a regex the exec job's first launcher run must log.
# Sourced after lib.sh; FAULT names the fault.
# What the fault does to a plain exec'd shell and to its child that keeps writing to the
# stream (recorded, not asserted; docs/reliability.md): `kubectl exec` of a shell whose child
# prints a tick every 0.5 s for 10 s (HUP, PIPE and TERM trapped into a file) and then leaves
# a file, the shell then leaving the child's exit code. 3 s and 12 s after the fault: which of
# the two runs, what did they leave, how many ticks reached kubectl?
plain_writer_start() {
  timeout 60 "$KUBESIM" run --dir "$KS" -- kubectl exec "$1-worker-0" -- sh -c 'sh -c "$1"; echo $? >/tmp/writer-rc' sh \
    'for s in HUP PIPE TERM; do trap "echo $s >/tmp/writer-sig; exit 1" $s; done
     i=0; while [ $i -lt 20 ]; do echo tick $i; i=$((i+1)); sleep 0.5; done; echo lived >/tmp/writer-done' \
    >"$E2E_DIR/writer.out" 2>&1 &
  E2E_PIDS+=("$!")
  sleep 1.2
}
plain_writer_check() {
  local s='for p in /proc/[0-9]*; do if grep -q -s "writer-r[c]" $p/cmdline; then echo "shell running"
    elif grep -q -s "lived >/tmp/writer-d[o]ne" $p/cmdline; then echo "child running"; fi; done
    for f in rc sig done; do [ -f /tmp/writer-$f ] && echo "$f: $(cat /tmp/writer-$f)"; done; true'
  (sleep 3; kc exec "$1-worker-0" -- sh -c "$s" >"$E2E_DIR/writer.3s" 2>&1
   sleep 9; kc exec "$1-worker-0" -- sh -c "$s" >"$E2E_DIR/writer.12s" 2>&1) &
  E2E_PIDS+=("$!")
}
plain_writer_note() {
  local a b
  a=$(sort -u "$E2E_DIR/writer.3s" 2>/dev/null | tr '\n' ',' | tr ' ' _)
  b=$(sort -u "$E2E_DIR/writer.12s" 2>/dev/null | tr '\n' ',' | tr ' ' _)
  e2e_note "plain-exec: 3s-after=[${a:-nothing}] 12s-after=[${b:-nothing}] ticks-received=$(grep -c '^tick' "$E2E_DIR/writer.out")/20"
}

restart_case() {
  local tr job expect t0 secs
  [ "$KUBE_BACKEND" = k8s ] || e2e_skip "$FAULT needs the real cluster (KUBE_BACKEND=k8s)"
  e2e_begin
  e2e_up --nodes 2
  e2e_op_start a
  for tr in exec ssh; do
    job=r-$tr
    if [ $tr = exec ]; then expect=$EXPECT_EXEC; else expect=$EXPECT_SSH; fi
    TRANSPORT=$tr BACKOFF=0 LAUNCHER_NODE=k8s-node-1 WORKER_NODE=k8s-node-2 \
      PROG='[timeout, "150", mpirun, -np, "2", --bind-to, none, sh, -c, "echo rank-up; sleep 20; echo rank-done"]' \
      e2e_create $job
    e2e_wait_log $job '^rank-up' 2 180
    # the launcher's first run, followed to its end (OnFailure: the kubelet runs it again,
    # and the job's message is the last run's)
    timeout 150 "$KUBESIM" run --dir "$KS" -- kubectl logs -f "$(launcher_pod $job)" >"$E2E_DIR/$job-run1.log" 2>&1 &
    E2E_PIDS+=("$!")
    [ $tr = exec ] && plain_writer_start $job
    t0=$(e2e_now_ms)
    e2e_fault "$FAULT" k8s-node-2
    [ $tr = exec ] && plain_writer_check $job
    e2e_log "$job: $FAULT took $(( ($(e2e_now_ms) - t0) / 1000 )) s"
    e2e_final $job $((BOUND + 60)) || { launcher_log $job | tail -n 15 >&2; e2e_fail "$job: no final state within $((BOUND + 60)) s after $FAULT (HANG)"; }
    secs=$(awk -v a="$T_FINAL" -v b="$t0" 'BEGIN { printf "%.1f", (a - b) / 1000 }')
    e2e_log "$job: $FINAL/$FINAL_REASON ${secs}s after the fault: $FINAL_MSG"
    grep -v -e '^rank-' -e ' INFO ' "$E2E_DIR/$job-run1.log" | tail -n 8 | sed "s/^/$job launcher run 1: /" >&2
    if [ $tr = exec ] && [ -n "${EXPECT_EXEC_LOG:-}" ]; then
      grep -qE "$EXPECT_EXEC_LOG" "$E2E_DIR/$job-run1.log" || e2e_fail "$job: the launcher's first run never logged /$EXPECT_EXEC_LOG/"
    fi
    e2e_note "$tr=$FINAL(${secs}s)"
    [ $tr = exec ] && plain_writer_note
    case $expect in
      Succeeded) [ "$FINAL" = Succeeded ] || e2e_fail "$job ($tr): $FINAL ($FINAL_MSG), expected to survive $FAULT" ;;
      Failed:*) [ "$FINAL" = Failed ] || e2e_fail "$job ($tr): $FINAL, expected Failed"
        [[ $FINAL_MSG =~ ${expect#Failed:} ]] || e2e_fail "$job ($tr): message '$FINAL_MSG' !~ /${expect#Failed:}/" ;;
      record) ;;
    esac
    awk -v s="$secs" -v m="$BOUND" 'BEGIN { exit !(s <= m) }' || e2e_fail "$job: $FINAL ${secs}s after the fault (bound ${BOUND}s)"
    e2e_no_leftovers $job 60
  done
  e2e_pass
}
