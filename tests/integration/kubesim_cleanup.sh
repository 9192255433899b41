#!/usr/bin/env bash
# timeout: 240
# `kubesim down` leaves `ip netns`, the mount table and the process table as they were:
# (1) after a normal up / pods / exec / down, (2) after `kill -9` of the kubesim daemon
# followed by `down`, (3) after `kill -9` followed by a new `up` in the same DIR (which
# must clear the leftovers itself) and `down`. Other kubesim instances may run at the same
# time, so the comparison is restricted to what this instance owns: netns named
# ks-<sha1(DIR)>-*, mounts naming DIR or those netns, processes whose command line names
# DIR or that lived in one of the instance's pod PID/network namespaces (recorded with their
# start times while it ran: namespace ids are recycled), and the mount points it created.
set -u
: "${ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$ROOT/tests/lib/kubesim.sh"
ks_skip_unless_root
command -v kubectl >/dev/null || { echo "skip: kubectl not installed"; exit 77; }

D=$(mktemp -d /tmp/kubesim-cleanup.XXXXXX) || ks_fail mktemp
HASH=$(printf '%s' "$D" | sha1sum | cut -c1-8)
NSRE="^ks-$HASH-"
MP=/opt/kubesim-cleanup-$HASH/deep/dir
trap 'timeout 60 "$KUBESIM" down --dir "$D" >/dev/null 2>&1; rm -rf "$D" "$D.nsids" "$D.procs"' EXIT
k() { timeout 60 "$KUBESIM" run --dir "$D" -- kubectl "$@"; }
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

snapshot() {   # what this instance may leave behind, one item per line
  ip netns list | awk '{print "netns " $1}' | grep -E "^netns ks-$HASH-" || true
  grep -E "$D|ks-$HASH-" /proc/self/mountinfo | sed 's/^/mount /' || true
  /usr/bin/python3 - "$D" "$D.procs" $$ <<'PY'
import os, sys
d, procfile, me = sys.argv[1], sys.argv[2], sys.argv[3]
def start(pid):
    try:
        s = open("/proc/%s/stat" % pid).read()
        return s[s.rindex(")") + 2:].split()[19]
    except (OSError, ValueError):
        return None
try:
    recorded = [l.split() for l in open(procfile) if l.strip()]
except OSError:
    recorded = []
def zombie(pid):
    try:
        s = open("/proc/%s/stat" % pid).read()
        return s[s.rindex(")") + 2:].split()[0] == "Z"
    except (OSError, ValueError):
        return False
for pid, st in recorded:            # processes that lived in the instance's namespaces
    # a zombie is dead and holds nothing; once its pod's init is gone it waits for the
    # host's init (not kubesim) to collect its exit status
    if start(pid) == st and not zombie(pid):
        try:
            cmd = open("/proc/%s/cmdline" % pid, "rb").read().replace(b"\0", b" ").decode()
        except OSError:
            continue
        print("proc %s (was in a pod namespace): %s" % (pid, cmd))
for pid in os.listdir("/proc"):     # anything naming the instance's DIR
    if not pid.isdigit() or pid == me or int(pid) == os.getpid():
        continue
    try:
        cmd = open("/proc/%s/cmdline" % pid, "rb").read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        continue
    if d in cmd and not cmd.startswith("/usr/bin/python3 -"):
        print("proc %s %s" % (pid, cmd))
PY
  [ -e "/opt/kubesim-cleanup-$HASH" ] && echo "path /opt/kubesim-cleanup-$HASH"
  true
}

start_pods() {
  timeout 60 "$KUBESIM" up --dir "$D" >/dev/null || ks_fail "kubesim up"
  k apply -f - >/dev/null <<YAML || ks_fail "apply"
apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  containers:
  - name: main
    image: debian:bookworm
    command: [sh, -c, "sleep 3600 & sleep 3600"]
    volumeMounts: [{name: e, mountPath: $MP}]
  volumes: [{name: e, emptyDir: {}}]
---
apiVersion: v1
kind: Pod
metadata: {name: b}
spec:
  containers:
  - {name: main, image: debian:bookworm, command: [sleep, "3600"]}
YAML
  k wait --for=condition=Ready pod/a pod/b --timeout=60s >/dev/null || ks_fail "pods not Ready"
  # a background exec that outlives its kubectl, and a long exec stream still open
  k exec a -- sh -c 'setsid sleep 3000 >/dev/null 2>&1 < /dev/null &' || ks_fail "exec"
  (k exec b -- sleep 3000 >/dev/null 2>&1 &)
  sleep 1
  [ -d "$MP" ] || ks_fail "mount point $MP not created"
  readlink "/proc/$(cat "$D/kubesim.pid")/ns/net" > "$D.nsids"
  for f in "$D"/state/node/sandboxes/*.json; do
    for pid in $(python3 -c 'import json,sys; print(" ".join(str(p) for p, _ in json.load(open(sys.argv[1]))["pids"]))' "$f"); do
      readlink "/proc/$pid/ns/net" >> "$D.nsids"
      for c in /proc/$pid/task/*/children; do
        for cp in $(cat "$c"); do readlink "/proc/$cp/ns/pid" >> "$D.nsids"; done
      done
    done
  done
  sort -u -o "$D.nsids" "$D.nsids"
  # every process now in those namespaces (pid + start time: namespace ids are recycled)
  /usr/bin/python3 - "$D.nsids" > "$D.procs" <<'PY'
import os, sys
ids = set(open(sys.argv[1]).read().split())
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        ns = {os.readlink("/proc/%s/ns/pid" % pid), os.readlink("/proc/%s/ns/net" % pid)}
        s = open("/proc/%s/stat" % pid).read()
    except OSError:
        continue
    if ns & ids:
        print(pid, s[s.rindex(")") + 2:].split()[19])
PY
  [ "$(ip netns list | grep -cE "$NSRE")" -ge 3 ] || ks_fail "expected host + 2 pod netns"
  [ "$(snapshot | grep -c '^proc')" -ge 4 ] || ks_fail "snapshot does not see the pods' processes"
}

compare() {   # compare LABEL: nothing of this instance may remain
  local left tries=0
  left=$(snapshot)
  # a SIGKILLed process may still be exiting (empty cmdline) for a few ms after `down`
  # returns: leftovers must persist for 5 s to count
  while [ -n "$left" ] && [ $tries -lt 10 ]; do
    sleep 0.5; tries=$((tries + 1)); left=$(snapshot)
  done
  if [ -n "$left" ]; then
    bad "$1: left behind:"
    sed 's/^/    /' <<<"$left"
  else
    echo "ok: $1: nothing left"
  fi
}

before=$(snapshot)
[ -z "$before" ] || ks_fail "instance leftovers before the test: $before"
mounts_before=$(wc -l < /proc/self/mountinfo)

# 1. normal down
start_pods
timeout 60 "$KUBESIM" down --dir "$D" >/dev/null || bad "down failed"
compare "up/down"

# 2. kill -9 of the daemon, then down
start_pods
kill -9 "$(cat "$D/kubesim.pid")"
sleep 1
timeout 60 "$KUBESIM" down --dir "$D" >/dev/null || bad "down after kill -9 failed"
compare "kill -9 + down"

# 3. kill -9, then up in the same DIR clears the leftovers; then down
start_pods
kill -9 "$(cat "$D/kubesim.pid")"
sleep 1
timeout 60 "$KUBESIM" up --dir "$D" >/dev/null || bad "up after kill -9 failed"
n=$(ip netns list | grep -cE "^ks-$HASH-p")
[ "$n" -eq 0 ] || bad "up after a crash kept $n old pod netns"
timeout 60 "$KUBESIM" down --dir "$D" >/dev/null || bad "down failed"
compare "kill -9 + up + down"

mounts_after=$(wc -l < /proc/self/mountinfo)
echo "mount table: $mounts_before lines before, $mounts_after after (other instances may differ)"
rm -f "$D.nsids" "$D.procs"
[ $fail -eq 0 ] && echo "PASS: kubesim_cleanup"
[ $fail -eq 0 ]
