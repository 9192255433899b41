#!/usr/bin/env bash
# ssh_kubesim.sh - the SSH transport as a v2 job uses it, on kubesim: a key pair made by
# our kube_sshkey_generate_ed25519 goes into a kubernetes.io/ssh-auth Secret; worker pods
# (hostname/subdomain + headless Service) run images/openmpi/mpi-sshd with that Secret
# mounted (defaultMode 0644, as many Secret mounts are); from a launcher pod with the same
# Secret, bin/mpi-rsh (MPI_JOB_TRANSPORT=ssh, libssh2) reaches them by DNS name: the pod's
# environment and hostname, exit codes, 10 MB stdin with EOF, a foreign pinned key
# refused, and real Open MPI mpirun across 2 worker pods over SSH.
# timeout: 420
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BINDIR=${BINDIR:-$ROOT/bin}
. "$ROOT/tests/lib/kubesim.sh"
ks_skip_unless_root
[ -x /usr/sbin/sshd ] || { echo "skip: OpenSSH sshd not installed"; exit 77; }
[ -x "$BINDIR/mpi-rsh" ] || ks_fail "missing $BINDIR/mpi-rsh (run make)"
LIBKUBE=$ROOT/build/${MODE:-release}/libkube.a
[ -f "$LIBKUBE" ] || ks_fail "missing $LIBKUBE (run make)"

M=$(mktemp -d "$ROOT/build/ssh-kubesim.XXXXXX")   # pods see the host's files, not its /tmp
trap 'rm -rf "$M"' EXIT
ks_up
ks_on_exit 'rm -rf "$M"'
k() { ks_kubectl "$@"; }
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails+1)); }
check() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1: want [$2] got [$3]"; fi; }

# 1. two key pairs from our generator (the controller's code path) -> two Secrets
cat > "$M/keygen.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include "kube/sshkey.h"
static int put(const char *dir, const char *name, const char *text)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    return f && fputs(text, f) >= 0 && fclose(f) == 0 ? 0 : -1;
}
int main(int argc, char **argv)
{
    char *priv, *pub, *err = NULL;
    if (argc != 2 || kube_sshkey_generate_ed25519(&priv, &pub, "job-ssh", &err) != 0) {
        fprintf(stderr, "keygen: %s\n", err ? err : "usage: keygen DIR");
        return 1;
    }
    int rc = put(argv[1], "ssh-privatekey", priv) || put(argv[1], "ssh-publickey", pub) ||
             put(argv[1], "authorized_keys", pub);
    free(priv);
    free(pub);
    return rc;
}
EOF
SAN=; [ "${MODE:-release}" = asan ] && SAN="-fsanitize=address,undefined"
cc -std=gnu11 $SAN -I"$ROOT/include" -o "$M/keygen" "$M/keygen.c" "$LIBKUBE" \
   $(pkg-config --libs libssh2 openssl) || ks_fail "compiling the key generator"
for s in job other; do
  mkdir -p "$M/$s" && "$M/keygen" "$M/$s" || ks_fail "keygen $s"
  k create secret generic "$s-ssh" --type=kubernetes.io/ssh-auth \
    --from-file=ssh-privatekey="$M/$s/ssh-privatekey" --from-file=ssh-publickey="$M/$s/ssh-publickey" \
    --from-file=authorized_keys="$M/$s/authorized_keys" >/dev/null || ks_fail "secret $s-ssh"
done

# 2. headless Service + 2 workers running mpi-sshd + a launcher (sleep) with both Secrets
ENTRY=$ROOT/images/openmpi/mpi-sshd
worker() {
cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: job-worker-$1, labels: {mpi_job_name: job, mpi_role_type: worker}}
spec:
  hostname: job-worker-$1
  subdomain: job-worker
  containers:
  - name: worker
    image: debian
    command: ["$ENTRY"]
    env:
    - {name: MPI_JOB_SSH_DIR, value: /etc/job-ssh}
    - {name: MPI_JOB_SSH_PORT, value: "2222"}
    - {name: WORKER_MARK, value: "set in the pod spec"}
    volumeMounts: [{name: ssh-auth, mountPath: /etc/job-ssh}]
  volumes: [{name: ssh-auth, secret: {secretName: job-ssh, defaultMode: 0644}}]
EOF
}
{
  printf -- '---\napiVersion: v1\nkind: Service\nmetadata: {name: job-worker}\n'
  printf 'spec: {clusterIP: None, selector: {mpi_job_name: job, mpi_role_type: worker}}\n'
  worker 0; worker 1
  cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: job-launcher, labels: {mpi_job_name: job, mpi_role_type: launcher}}
spec:
  # the workers' bare host names (job-worker-1) resolve only through this search entry, as
  # on a real cluster (kubesim's /etc/hosts follows the pod's search list: docs/kubesim.md)
  dnsConfig: {searches: [job-worker.default.svc.cluster.local]}
  containers:
  - name: launcher
    image: debian
    command: [sleep, "3600"]
    env:
    - {name: MPI_JOB_TRANSPORT, value: ssh}
    - {name: MPI_JOB_SSH_DIR, value: /etc/job-ssh}
    - {name: MPI_JOB_SSH_PORT, value: "2222"}
    volumeMounts:
    - {name: ssh-auth, mountPath: /etc/job-ssh}
    - {name: other, mountPath: /etc/other-ssh}
  volumes:
  - {name: ssh-auth, secret: {secretName: job-ssh, defaultMode: 0600}}
  - {name: other, secret: {secretName: other-ssh, defaultMode: 0600}}
EOF
} > "$M/pods.yaml"
k apply -f "$M/pods.yaml" >/dev/null || ks_fail "apply pods"
ks_wait_for '[ "$(k get pods -o jsonpath="{.items[*].status.phase}")" = "Running Running Running" ]' 120 \
  || { k get pods; k logs job-worker-0; ks_fail "pods not running"; }
L() { timeout 180 "$KUBESIM" run --dir "$KS_DIR" -- kubectl exec -i job-launcher -- "$@"; }
W0=job-worker-0.job-worker.default.svc
ks_wait_for "L bash -c 'exec 3<>/dev/tcp/$W0/2222 && exec 3<>/dev/tcp/job-worker-1/2222'" 60 \
  || { k logs job-worker-0; ks_fail "sshd not listening in the workers"; }
RSH=$BINDIR/mpi-rsh

# 3. mpi-rsh over SSH from the launcher pod
got=$(L "$RSH" -n "$W0" 'echo "$WORKER_MARK|$(hostname)"' </dev/null)
check "FQDN, pod env (SetEnv) and hostname" "set in the pod spec|job-worker-0" "$got"
for c in 0 1 3; do L "$RSH" -n job-worker-1 "exit $c" </dev/null; check "short name, exit $c" "$c" "$?"; done
got=$(head -c 10485760 /dev/zero | L "$RSH" "$W0" 'wc -c')
check "10 MB stdin through kubectl exec + SSH, EOF" 10485760 "$got"
out=$(L env MPI_JOB_SSH_DIR=/etc/other-ssh "$RSH" -n "$W0" true 2>&1 </dev/null); rc=$?
check "another job's pinned key: refused" 255 "$rc"
[[ $out == *"host key"*"$W0"* ]] && ok "  $out" || bad "host key message: $out"

# 4. real Open MPI across the 2 worker pods, daemons started through mpi-rsh over SSH
PROG=$BINDIR/mpi-pi
if [ ! -x "$PROG" ] && command -v mpicc >/dev/null; then
  printf '#include <mpi.h>\n#include <stdio.h>\nint main(int c,char**v){int r,n,s=0;MPI_Init(&c,&v);MPI_Comm_rank(MPI_COMM_WORLD,&r);MPI_Comm_size(MPI_COMM_WORLD,&n);MPI_Allreduce(&r,&s,1,MPI_INT,MPI_SUM,MPI_COMM_WORLD);printf("rank %%d/%%d sum %%d\\n",r,n,s);MPI_Finalize();return 0;}\n' > "$M/ar.c"
  mpicc -o "$M/ar" "$M/ar.c" && PROG=$M/ar
fi
if command -v mpirun >/dev/null && [ -x "$PROG" ]; then
  printf '%s slots=1\n' "$W0" job-worker-1.job-worker.default.svc > "$M/hostfile"
  out=$(L env OMPI_MCA_plm_rsh_agent="$RSH" OMPI_MCA_plm_rsh_no_tree_spawn=1 \
        OMPI_MCA_orte_leave_session_attached=1 OMPI_MCA_orte_keep_fqdn_hostnames=1 \
        OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_ALLOW_RUN_AS_ROOT=1 \
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 150 mpirun --hostfile "$M/hostfile" -np 2 \
        "$PROG" </dev/null 2>&1); rc=$?
  if [ $rc = 0 ] && { grep -q 'pi is approximately' <<<"$out" || [ "$(grep -c 'sum 1$' <<<"$out")" = 2 ]; }; then
    ok "Open MPI mpirun over SSH across 2 worker pods"
  else
    bad "mpirun over SSH rc=$rc: $out"
  fi
else
  echo "note: mpirun or an MPI program missing; skipped the mpirun check"
fi

echo "failures: $fails"
[ $fails -eq 0 ]
