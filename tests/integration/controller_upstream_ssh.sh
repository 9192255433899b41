#!/usr/bin/env bash
# timeout: 1500
# An MPIJob as upstream MPI Operator v2beta1 users write it (examples/v2beta1/
# pi-upstream-image.yaml, shaped like upstream's examples/v2beta1/pi/pi.yaml) runs
# to Succeeded on an image built to upstream's conventions: the real mpik8s/mpi-pi
# (images/mpi-pi on images/openmpi, built by `make images` = images/build-images.sh,
# run by kubesim's kubelet in its own root filesystem from the local store; user
# mpiuser uid 1000 from the image's /etc/passwd, /home/mpiuser/.sshd_config with
# HostKey /home/mpiuser/.ssh/id_rsa, StrictModes no, Port 2222, the compiled
# /home/mpiuser/pi). The job's image name is the only change to the example. Workers
# run the image's sshd as uid 1000 on the Secret mounted as id_rsa/id_rsa.pub/
# authorized_keys (0644), the launcher's mpirun (under mpi-agent, SSH reachability
# check, mpi-rsh over SSH) as uid 1000. Then the same job as root with sshAuthMountPath
# /root/.ssh (files 0600) and the operator's default worker sshd (the image's mpi-sshd).
# Both print pi.
# Fallback where real images cannot be built (no buildah, mmdebstrap or root; or
# UPSTREAM_IMAGE=standin): kubesim's stand-in tests/kubesim/images/mpi-pi (the image's
# passwd, .sshd_config and pi laid over the host's filesystem), the example unchanged.
set -u
. "$(dirname "$0")/controller_common.bash"
. "$ROOT/tests/integration/kubesim_images.bash"
command -v mpirun >/dev/null || { echo "skip: no mpirun"; exit 77; }
EX=$ROOT/examples/v2beta1/pi-upstream-image.yaml
W=$(mktemp -d /tmp/ks-upstream-ssh.XXXXXX)
HOSTONLY=/var/tmp/kubesim-host-only.$$
trap 'rm -rf "$W" "$HOSTONLY"' EXIT
if [ "${UPSTREAM_IMAGE:-store}" = store ] && why=$(img_tools_missing); then
  MODE_IMG=store
  t0=$(date +%s)
  "$ROOT/images/build-images.sh" mpi-pi || ks_fail "make images IMAGES=mpi-pi (log: build/images/)"
  echo "image mpik8s/mpi-pi:latest (and mpik8s/openmpi) ready in $(( $(date +%s) - t0 )) s"
  printf '%s\n' "mpik8s/mpi-pi store" "mpik8s/* build/stage/usr/local/bin" >"$W/images.conf"
  sed 's|image: mpioperator/mpi-pi:openmpi|image: mpik8s/mpi-pi:latest|' "$EX" >"$W/pi.yaml"
  grep -q 'image: mpik8s/mpi-pi:latest' "$W/pi.yaml" || ks_fail "$EX no longer names mpioperator/mpi-pi:openmpi"
  echo on-host >"$HOSTONLY"
  ctl_cluster --set images_conf="$W/images.conf"
else
  MODE_IMG=standin
  echo "note: real images unavailable (${why:-UPSTREAM_IMAGE=$UPSTREAM_IMAGE}): the stand-in tests/kubesim/images/mpi-pi"
  [ -x "$BINDIR/mpi-pi" ] || ks_fail "missing $BINDIR/mpi-pi (run make)"
  "$ROOT/tests/kubesim/images/mpi-pi/build.sh" "$ROOT/build/kubesim-images/mpi-pi" "$BINDIR/mpi-pi" ||
    ks_fail "building the image stand-in"
  cp "$EX" "$W/pi.yaml"
  ctl_cluster
fi
ks_on_exit "rm -rf '$W' '$HOSTONLY'"
ctl_start a --leader-elect=false
# workers are kept after success (cleanPodPolicy None) so that they can be inspected
sed 's/cleanPodPolicy: Running/cleanPodPolicy: None/' "$W/pi.yaml" | kc create -f - >/dev/null || ks_fail "create pi-upstream"
# root: /root/.ssh, no runAsUser, workers without a command (the operator's sshd)
sed -e 's/^  name: pi-upstream$/  name: pi-upstream-root/' -e 's/cleanPodPolicy: Running/cleanPodPolicy: None/' \
    -e 's|sshAuthMountPath: /home/mpiuser/.ssh|sshAuthMountPath: /root/.ssh|' \
    -e '/securityContext:/d' -e '/runAsUser: 1000/d' -e '/command: \[\/usr\/sbin\/sshd\]/d' -e '/args: \[-De,/d' \
    -e 's|args: \["-n"|args: ["--allow-run-as-root", "-n"|' "$W/pi.yaml" | kc create -f - >/dev/null || ks_fail "create pi-upstream-root"

done_() { [ "$(cond "$1" Succeeded status)" = True ] || [ "$(cond "$1" Failed status)" = True ]; }
for n in pi-upstream pi-upstream-root; do
  ks_wait_for "done_ $n" 300 || true
  if [ "$(cond "$n" Succeeded status)" != True ]; then
    kc get mpijob "$n" -o yaml; kc get pods -o wide
    kc logs -l "mpi_job_name=$n,mpi_role_type=launcher" --tail 40 --all-containers
    for w in 0 1; do kc logs "$n-worker-$w" --tail 20; done
    ks_fail "$n did not succeed"
  fi
  L=$(kc get pods -l "mpi_job_name=$n,mpi_role_type=launcher" -o name | tail -1)
  kc logs "$L" -c mpi-launcher | grep -q 'pi is approximately 3.14' || ks_fail "$n: no pi in the log of $L: $(kc logs "$L" -c mpi-launcher | tail -20)"
done

# non-root: upstream's file names, mode 0644 (Kubernetes' default), sshd and the
# launcher as mpiuser from the image's /etc/passwd
w=pi-upstream-worker-0
out=$(kc exec $w -- sh -c 'id -un; stat -L -c "%n %a" /home/mpiuser/.ssh/id_rsa /home/mpiuser/.ssh/id_rsa.pub /home/mpiuser/.ssh/authorized_keys; test -s /home/mpiuser/sshd.pid && echo pidfile') \
  || ks_fail "exec into $w"
want="mpiuser
/home/mpiuser/.ssh/id_rsa 644
/home/mpiuser/.ssh/id_rsa.pub 644
/home/mpiuser/.ssh/authorized_keys 644
pidfile"
[ "$out" = "$want" ] || ks_fail "worker as mpiuser: got '$out', want '$want'"
[ "$(kc exec $w -- sh -c 'cat /home/mpiuser/.ssh/id_rsa.pub')" = "$(kc get secret pi-upstream-ssh -o jsonpath='{.data.ssh-publickey}' | base64 -d)" ] \
  || ks_fail "id_rsa.pub is not the Secret's public key"
[ "$(kc get job pi-upstream-launcher -o jsonpath='{.spec.template.spec.volumes[?(@.name=="ssh-auth")].secret.defaultMode}')" = 420 ] \
  || ks_fail "defaultMode other than the API default 0644 (420) outside /root/.ssh"
# the launcher ran as uid 1000
lp=$(kc get pods -l mpi_job_name=pi-upstream,mpi_role_type=launcher -o jsonpath='{.items[0].spec.containers[0].securityContext.runAsUser}')
[ "$lp" = 1000 ] || ks_fail "launcher runAsUser '$lp'"

# the init container (root, agent image) checked sshd and the host key, not the login
init_log() { kc logs "$(kc get pods -l "mpi_job_name=$1,mpi_role_type=launcher" -o name | tail -1)" -c mpi-agent-init; }
init_log pi-upstream | grep -q "the launcher runs as uid 1000, whose name only its image knows" || ks_fail "init: $(init_log pi-upstream)"
init_log pi-upstream | grep -q "2/2 workers reachable through ssh" || ks_fail "init: $(init_log pi-upstream)"
init_log pi-upstream-root | grep -q "runs as uid" && ks_fail "root launcher: the init check should log in"
init_log pi-upstream-root | grep -q "2/2 workers reachable through ssh" || ks_fail "init: $(init_log pi-upstream-root)"

# root: 0600 at /root/.ssh, the operator's default sshd as root
w=pi-upstream-root-worker-0
out=$(kc exec $w -- sh -c 'id -un; stat -L -c "%n %a" /root/.ssh/id_rsa /root/.ssh/authorized_keys') || ks_fail "exec into $w"
want="root
/root/.ssh/id_rsa 600
/root/.ssh/authorized_keys 600"
[ "$out" = "$want" ] || ks_fail "worker as root: got '$out', want '$want'"
if [ "$MODE_IMG" = store ]; then
  # the pods ran in the image itself: its imageID, its files, not the host's
  for p in pi-upstream-worker-0 pi-upstream-root-worker-1 \
           "$(kc get pods -l mpi_job_name=pi-upstream,mpi_role_type=launcher -o jsonpath='{.items[0].metadata.name}')"; do
    id=$(kc get pod "$p" -o jsonpath='{.status.containerStatuses[0].imageID}')
    [[ $id == docker.io/mpik8s/mpi-pi@sha256:* ]] || ks_fail "$p: imageID '$id' is not the store's mpik8s/mpi-pi"
  done
  out=$(kc exec pi-upstream-worker-0 -- sh -c "test -e $HOSTONLY && echo host-file-visible; test -x /home/mpiuser/pi && echo pi; cat /home/mpiuser/.sshd_config" 2>&1) ||
    ks_fail "exec into pi-upstream-worker-0: $out"
  grep -qx host-file-visible <<<"$out" && ks_fail "the worker sees the host's $HOSTONLY: not in its image's root"
  for want in pi 'HostKey /home/mpiuser/.ssh/id_rsa' 'StrictModes no' 'Port 2222'; do
    grep -qx "$want" <<<"$out" || ks_fail "the image lacks '$want' (/home/mpiuser/pi, .sshd_config): $out"
  done
  # the root workers' default command found the image's mpi-sshd (its sshd runs on a
  # config in mpi-sshd's private run dir)
  out=$(kc exec pi-upstream-root-worker-0 -- sh -c 'for c in /proc/[0-9]*/cmdline; do tr "\0" " " <"$c"; echo; done' 2>&1)
  grep -q 'sshd -D -e -f /tmp/mpi-sshd\.' <<<"$out" || ks_fail "the root worker's sshd was not started by the image's mpi-sshd: $out"
  echo "the pods ran in the store's mpik8s/mpi-pi (imageID $id)"
fi
kc delete mpijob pi-upstream pi-upstream-root --wait=false >/dev/null || ks_fail "delete"
echo "PASS: upstream-shaped pi ran as uid 1000 and as root (image: $MODE_IMG)"
