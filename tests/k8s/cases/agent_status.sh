#!/usr/bin/env bash
# timeout: 420
# `mpi-agent status` from outside the cluster against the real kube-apiserver, with the
# credentials users have: an exec credential plugin (client.authentication.k8s.io/v1) that
# prints a ServiceAccount token, and impersonation (the kubeconfig's `as:` over the admin's
# certificate). Each kubeconfig is first checked with kubectl, the reference. status lists the
# job's workers, execs into each (WebSocket through kube-apiserver -> kubelet -> containerd)
# and prints the hostfile; an account without pods/exec is refused by real RBAC, named.
set -u
export KUBE_BACKEND=k8s
. "$(dirname "$0")/../../integration/controller_common.bash"
ctl_cluster
ctl_start a --leader-elect=false
mpijob_yaml st --ann mpi-k8s.io/transport=exec --slots 1 --image mpik8s/openmpi:latest \
  --command '[sleep, "600"]' --worker-command '[sleep, "600"]' | kc create -f - >/dev/null || ks_fail "create MPIJob"
ks_wait_for "[ \"\$(kc get pods -l mpi_job_name=st,mpi_role_type=worker -o jsonpath='{.items[*].status.phase}')\" = 'Running Running' ]" 120 ||
  ks_fail "workers not Running: $(kc get pods -o wide)"

# an account that may read pods and exec (the built-in edit role), and one that may only read
for u in debugger reader; do kc create serviceaccount "$u" >/dev/null || ks_fail "create sa $u"; done
kc create rolebinding debugger --clusterrole=edit --serviceaccount=default:debugger >/dev/null || ks_fail "rolebinding"
kc create rolebinding reader --clusterrole=view --serviceaccount=default:reader >/dev/null || ks_fail "rolebinding"
kc create token debugger --duration=1h >"$KS_DIR/debugger.token" || ks_fail "create token"

# 1. exec credential plugin
printf '#!/bin/sh\nprintf %s "$(cat %s)"\n' \
  "'{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%s\"}}'" \
  "$KS_DIR/debugger.token" >"$KS_DIR/cred-plugin"
chmod +x "$KS_DIR/cred-plugin"
python3 - "$KS_DIR" <<'PY' || ks_fail "writing kubeconfigs"
import sys, yaml
d = sys.argv[1]
kc = yaml.safe_load(open(d + "/kubeconfig"))
cl = kc["clusters"][0]["name"]
def write(name, user):
    k = dict(kc, users=[{"name": name, "user": user}],
             contexts=[{"name": name, "context": {"cluster": cl, "user": name}}], **{"current-context": name})
    yaml.safe_dump(k, open("%s/%s.kubeconfig" % (d, name), "w"))
admin = kc["users"][0]["user"]
write("plugin", {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": d + "/cred-plugin",
                          "interactiveMode": "Never"}})
write("impersonate", dict(admin, **{"as": "system:serviceaccount:default:debugger"}))
write("impersonate-reader", dict(admin, **{"as": "system:serviceaccount:default:reader"}))
PY
for k in plugin impersonate; do
  [ "$(ks_run kubectl --kubeconfig "$KS_DIR/$k.kubeconfig" auth whoami -o jsonpath='{.status.userInfo.username}')" = \
    system:serviceaccount:default:debugger ] || ks_fail "kubectl with $k.kubeconfig is not the debugger account"
  rc=0; ks_run "$BINDIR/mpi-agent" status -n default st --kubeconfig "$KS_DIR/$k.kubeconfig" >"$KS_DIR/st-$k.out" 2>&1 || rc=$?
  cat "$KS_DIR/st-$k.out"
  [ $rc = 0 ] || ks_fail "mpi-agent status with the $k kubeconfig exited $rc"
  grep -q 'JOB default/st: 2 worker(s), transport exec' "$KS_DIR/st-$k.out" || ks_fail "$k: no JOB line"
  [ "$(grep -cE '^st-worker-[01] +ok +[0-9.]+ ms' "$KS_DIR/st-$k.out")" = 2 ] || ks_fail "$k: not 2 ok round trips"
  grep -q 'st-worker-1.st.default.svc slots=1' "$KS_DIR/st-$k.out" || ks_fail "$k: hostfile line"
  grep -q 'OK: 0 of 2 worker(s) unreachable' "$KS_DIR/st-$k.out" || ks_fail "$k: summary"
done
# impersonating an account without pods/exec: real RBAC refuses the exec, and status says so
rc=0; ks_run "$BINDIR/mpi-agent" status -n default st --kubeconfig "$KS_DIR/impersonate-reader.kubeconfig" >"$KS_DIR/st-reader.out" 2>&1 || rc=$?
cat "$KS_DIR/st-reader.out"
[ $rc != 0 ] || ks_fail "status as the view-only account exited 0"
grep -qi 'forbidden' "$KS_DIR/st-reader.out" || ks_fail "the refusal is not named Forbidden"
echo ok
