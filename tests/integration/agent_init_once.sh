#!/usr/bin/env bash
# agent_init_once: a launch waits once. `mpi-agent init` records what it
# established (DEST/init-ready.json); `mpi-agent run` after it neither waits for
# the workers nor checks their reachability again (no progress line, no exec
# request in the API server's log); run without init, or after a worker was
# replaced since init, waits and checks itself. Real worker pods, exec transport.
# timeout: 240
set -euo pipefail
. "$(dirname "$0")/../lib/agent_jobs.sh"
ks_up
only_workers() { python3 -c 'import sys,yaml; sys.stdout.write(yaml.safe_dump_all([d for d in yaml.safe_load_all(sys.stdin) if d["kind"] == "Pod" and d["metadata"]["name"].find("-worker-") > 0]))'; }
job_yaml once 2 init | only_workers | ks_kubectl create -f - >/dev/null
ks_kubectl wait --for=condition=Ready pod -l mpi_job_name=once --timeout=120s >/dev/null || ks_fail "workers never Ready"
export MPI_JOB_NAME=once MPI_JOB_NAMESPACE=default MPI_JOB_WORKERS=2 MPI_JOB_WORKER_CONTAINER=worker
export MPI_JOB_TRANSPORT=exec MPI_AGENT_TERMINATION_LOG=$KS_DIR/term
mkdir -p "$KS_DIR/kube" "$KS_DIR/alone"
# exec requests (reachability checks) in the API server's log so far
execs() { grep -c '[A-Z]* /api/v1/namespaces/default/pods/once-worker-[0-9]*/exec' "$KS_DIR/apiserver.log" || true; }
# the wait's progress lines ("2/2 workers ready") and the reach check's summary
waits() { grep -cE 'workers ready|workers reachable through' "$1" || true; }

ks_log "1. init waits and checks once, and records it"
e0=$(execs)
ks_run "$AGENT" init --no-deliver --dest "$KS_DIR/kube" --timeout 60s 2>"$KS_DIR/o-init" || ks_fail "init failed"
e1=$(execs)
[ $((e1 - e0)) -eq 2 ] || ks_fail "init made $((e1 - e0)) exec requests, want 2 (one check per worker)"
[ "$(waits "$KS_DIR/o-init")" -ge 2 ] || ks_fail "init did not wait and check"
python3 - "$KS_DIR/kube/init-ready.json" <<'PY' || ks_fail "bad init-ready.json"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["job"] == "once" and r["namespace"] == "default" and r["transport"] == "exec", r
assert [w["pod"] for w in r["workers"]] == ["once-worker-0", "once-worker-1"], r
assert all(w["uid"] for w in r["workers"]) and r["reachChecked"] is True, r
assert r["workersReadyMs"] > 0 and r["workersReachableMs"] >= r["workersReadyMs"], r
PY

ks_log "2. run after init: no second wait, no second check"
ks_run "$AGENT" run --dest "$KS_DIR/kube" --timeout 60s -- sh -c 'echo ran-ok' >"$KS_DIR/o-run" 2>&1 || ks_fail "run failed"
e2=$(execs)
expect_in "$KS_DIR/o-run" "ran-ok" "as mpi-agent init found them" "command exited 0"
[ "$(waits "$KS_DIR/o-run")" -eq 0 ] || ks_fail "run waited or checked again"
[ $((e2 - e1)) -eq 0 ] || ks_fail "run made $((e2 - e1)) exec requests after init"
expect_in "$KS_DIR/term" '"workersReady":"' '"workersReachable":"' '"mpirunStarted":"'

ks_log "3. run without init waits and checks itself"
ks_run "$AGENT" run --dest "$KS_DIR/alone" --timeout 60s -- true >"$KS_DIR/o-alone" 2>&1 || ks_fail "standalone run failed"
e3=$(execs)
[ "$(waits "$KS_DIR/o-alone")" -ge 2 ] || ks_fail "standalone run did not wait and check"
[ $((e3 - e2)) -eq 2 ] || ks_fail "standalone run made $((e3 - e2)) exec requests, want 2"

ks_log "4. a worker replaced since init: the record is not trusted"
ks_kubectl delete pod once-worker-1 --grace-period=0 --force >/dev/null 2>&1
job_yaml once 2 init | only_workers | python3 -c 'import sys,yaml; sys.stdout.write(yaml.safe_dump_all([d for d in yaml.safe_load_all(sys.stdin) if d["metadata"]["name"] == "once-worker-1"]))' | ks_kubectl create -f - >/dev/null
ks_kubectl wait --for=condition=Ready pod/once-worker-1 --timeout=120s >/dev/null || ks_fail "new worker never Ready"
ks_run "$AGENT" run --dest "$KS_DIR/kube" --timeout 60s -- true >"$KS_DIR/o-stale" 2>&1 || ks_fail "run after a replacement failed"
e4=$(execs)
expect_in "$KS_DIR/o-stale" "not using mpi-agent init's record: worker once-worker-1 was replaced"
[ "$(waits "$KS_DIR/o-stale")" -ge 2 ] || ks_fail "run trusted a stale record"
[ $((e4 - e3)) -eq 2 ] || ks_fail "run after a replacement made $((e4 - e3)) exec requests, want 2"
ks_log "PASS"
