#!/usr/bin/env bash
# 23 (real cluster only): etcd compacted under the operator's watches. A job runs; the
# operator is stopped (SIGSTOP: its watches go silent, the API server drops them as too
# slow); while it is stopped the job finishes, COMPACT_CHURN (400) ConfigMaps are created and
# deleted (the API server's watch cache moves past the operator's resourceVersions) and etcd
# is compacted to its newest revision (etcd's v3 HTTP gateway, /v3/kv/compaction, physical),
# and the API server is restarted (tests/k8s/k8s fault restart-apiserver), which drops every
# watch. After COMPACT_PAUSE (90) s the operator continues: its watches resume from resourceVersions
# that are gone, get 410 Gone (Expired), and each informer relists. Expected: the job that
# finished during the pause ends Succeeded within 60 s of the resume, each informer relists
# at most twice, and the operator's resident memory after the relists is at most
# COMPACT_RSS_X (2) times what it was before the pause (nothing kept from the old lists).
# timeout: 600
. "$(dirname "$0")/../lib.sh"
[ "$KUBE_BACKEND" = k8s ] || e2e_skip "etcd compaction needs the real cluster's etcd (KUBE_BACKEND=k8s)"
PAUSE=${COMPACT_PAUSE:-90} CHURN=${COMPACT_CHURN:-400}
e2e_begin
e2e_up
e2e_op_start a -v 1 --leader-elect=false  # stopped for 90 s, it would lose its lease and exit
PROG='[timeout, "150", mpirun, -np, "2", --bind-to, none, sh, -c, "echo rank-up; sleep 25; echo rank-done"]' e2e_create c1
e2e_wait_log c1 '^rank-up' 2 180
pid=$(e2e_op_pid a)
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
rss0=$(rss "$pid")
kill -STOP "$pid" || e2e_fail "SIGSTOP the operator"
T0=$(e2e_now_ms)
e2e_log "operator stopped (VmRSS $rss0 kB); churn $CHURN ConfigMaps, then compact"
for i in $(seq "$CHURN"); do printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: churn-%d}\ndata: {i: "%d"}\n---\n' "$i" "$i"; done >"$E2E_DIR/churn.yaml"
kc create -f "$E2E_DIR/churn.yaml" >/dev/null || e2e_fail "create churn ConfigMaps"
kc delete -f "$E2E_DIR/churn.yaml" --wait=false >/dev/null || e2e_fail "delete churn ConfigMaps"
etcd() { ksrun curl -fsS -X POST "http://127.0.0.1:2379/v3/kv/$1" -d "$2"; }
rev=$(etcd range '{"key":"AA=="}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["header"]["revision"])') ||
  e2e_fail "etcd revision"
etcd compaction "{\"revision\":\"$rev\",\"physical\":true}" >/dev/null || e2e_fail "etcd compaction to $rev"
e2e_log "etcd compacted to revision $rev"
e2e_note "compacted=$rev"
# a stopped client's watches survive on the API server (its buffers absorbed the churn: seen
# on the real cluster, no 410); a restarted API server drops them, and its new watch cache
# starts at etcd's newest revision, so the operator's resume asks for revisions that are gone
e2e_fault restart-apiserver
left=$(( PAUSE - ($(e2e_now_ms) - T0) / 1000 ))
[ "$left" -le 0 ] || sleep "$left"
launcher_log c1 | grep -q '^rank-done' || e2e_fail "c1 did not finish its program during the pause"
n0=$(grep -c 'expired; relisting' "$E2E_DIR/op-a.log")
kill -CONT "$pid" || e2e_fail "SIGCONT the operator"
T1=$(e2e_now_ms)
e2e_expect c1 Succeeded '.*' '.*' "$T1" 60
sleep 5
relists=$(grep 'expired; relisting' "$E2E_DIR/op-a.log" | tail -n +$((n0 + 1)))
nrel=$(printf '%s' "$relists" | grep -c . || true)
e2e_log "relists after the resume: $nrel"; printf '%s\n' "$relists" | sed 's/^/  /' >&2
[ "$nrel" -ge 1 ] || e2e_fail "no informer got 410 Gone: the compaction was not seen (nothing proven)"
worst=$(printf '%s\n' "$relists" | sed -n 's/.*informer \([^:]*\):.*/\1/p' | sort | uniq -c | sort -rn | head -1)
[ "$(awk '{print $1}' <<<"$worst")" -le 2 ] || e2e_fail "an informer relisted more than twice: $worst"
rss1=$(rss "$pid")
e2e_note "relists=$nrel rss_before=${rss0}kB rss_after=${rss1}kB"
awk -v a="$rss1" -v b="$rss0" -v x="${COMPACT_RSS_X:-2}" 'BEGIN { exit !(a <= b * x) }' ||
  e2e_fail "operator VmRSS $rss1 kB after the relists, $rss0 kB before (bound ${COMPACT_RSS_X:-2}x)"
e2e_no_leftovers c1 60
e2e_pass
