#!/usr/bin/env bash
# agent_init_once: a launch waits once. `mpi-agent init` records what it
# established (DEST/init-ready.json); `mpi-agent run` after it neither waits for
# the workers nor checks their reachability again (no progress line, no exec
# request in the API server's log); run without init, or after a worker was
# replaced since init, waits and checks itself. Real worker pods, exec transport.
# timeout: 240
. "$(dirname "$0")/agent_lib.bash"
ks_up
only_workers() { python3 -c 'import sys,yaml; sys.stdout.write(yaml.safe_dump_all([d for d in yaml.safe_load_all(sys.stdin) if d["kind"] == "Pod" and d["metadata"]["name"].find("-worker-") > 0]))'; }
job_yaml once 2 init | only_workers | k create -f - >/dev/null
k wait --for=condition=Ready pod -l mpi_job_name=once --timeout=120s >/dev/null || fail "workers never Ready"
export MPI_JOB_NAME=once MPI_JOB_NAMESPACE=default MPI_JOB_WORKERS=2 MPI_JOB_WORKER_CONTAINER=worker
export MPI_JOB_TRANSPORT=exec MPI_AGENT_TERMINATION_LOG=$D/term
mkdir -p "$D/kube" "$D/alone"
# exec requests (reachability checks) in the API server's log so far
execs() { grep -c '[A-Z]* /api/v1/namespaces/default/pods/once-worker-[0-9]*/exec' "$D/apiserver.log" || true; }
# the wait's progress lines ("2/2 workers ready") and the reach check's summary
waits() { grep -cE 'workers ready|workers reachable through' "$1" || true; }

log "1. init waits and checks once, and records it"
e0=$(execs)
ksrun "$AGENT" init --no-deliver --dest "$D/kube" --timeout 60s 2>"$D/o-init" || fail "init failed"
e1=$(execs)
[ $((e1 - e0)) -eq 2 ] || fail "init made $((e1 - e0)) exec requests, want 2 (one check per worker)"
[ "$(waits "$D/o-init")" -ge 2 ] || fail "init did not wait and check"
python3 - "$D/kube/init-ready.json" <<'PY' || fail "bad init-ready.json"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["job"] == "once" and r["namespace"] == "default" and r["transport"] == "exec", r
assert [w["pod"] for w in r["workers"]] == ["once-worker-0", "once-worker-1"], r
assert all(w["uid"] for w in r["workers"]) and r["reachChecked"] is True, r
assert r["workersReadyMs"] > 0 and r["workersReachableMs"] >= r["workersReadyMs"], r
PY

log "2. run after init: no second wait, no second check"
ksrun "$AGENT" run --dest "$D/kube" --timeout 60s -- sh -c 'echo ran-ok' >"$D/o-run" 2>&1 || fail "run failed"
e2=$(execs)
expect_in "$D/o-run" "ran-ok" "as mpi-agent init found them" "command exited 0"
[ "$(waits "$D/o-run")" -eq 0 ] || fail "run waited or checked again"
[ $((e2 - e1)) -eq 0 ] || fail "run made $((e2 - e1)) exec requests after init"
expect_in "$D/term" '"workersReady":"' '"workersReachable":"' '"mpirunStarted":"'

log "3. run without init waits and checks itself"
ksrun "$AGENT" run --dest "$D/alone" --timeout 60s -- true >"$D/o-alone" 2>&1 || fail "standalone run failed"
e3=$(execs)
[ "$(waits "$D/o-alone")" -ge 2 ] || fail "standalone run did not wait and check"
[ $((e3 - e2)) -eq 2 ] || fail "standalone run made $((e3 - e2)) exec requests, want 2"

log "4. a worker replaced since init: the record is not trusted"
k delete pod once-worker-1 --grace-period=0 --force >/dev/null 2>&1
job_yaml once 2 init | only_workers | python3 -c 'import sys,yaml; sys.stdout.write(yaml.safe_dump_all([d for d in yaml.safe_load_all(sys.stdin) if d["metadata"]["name"] == "once-worker-1"]))' | k create -f - >/dev/null
k wait --for=condition=Ready pod/once-worker-1 --timeout=120s >/dev/null || fail "new worker never Ready"
ksrun "$AGENT" run --dest "$D/kube" --timeout 60s -- true >"$D/o-stale" 2>&1 || fail "run after a replacement failed"
e4=$(execs)
expect_in "$D/o-stale" "not using mpi-agent init's record: worker once-worker-1 was replaced"
[ "$(waits "$D/o-stale")" -ge 2 ] || fail "run trusted a stale record"
[ $((e4 - e3)) -eq 2 ] || fail "run after a replacement made $((e4 - e3)) exec requests, want 2"
log "PASS"
