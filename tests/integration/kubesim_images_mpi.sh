#!/usr/bin/env bash
# timeout: 900
# mpi-rsh delivered into a launcher image that has nothing of ours: an MPIJob (exec
# transport) whose launcher and workers run in a bare Debian image with only Open MPI
# (kubesim-test/openmpi-bare:1, built here with buildah, run in its own root filesystem by
# kubesim's kubelet). The operator (bin/mpi-operator, a process) adds the mpi-agent init
# container (mpik8s/mpi-agent, mapped to build/stage) that copies the self-contained
# mpi-rsh/mpi-agent bundle into /opt/kube; mpirun in the image starts orted in the worker
# images through /opt/kube/mpi-rsh (pods/exec), the agent wraps mpirun; the job must end
# Succeeded with every rank's hostname in the launcher log. Skips (77) without root,
# kubectl, buildah or a way to make the Debian base.
set -u
. "$(dirname "$0")/controller_common.bash"
. "$ROOT/tests/integration/kubesim_images.bash"
img_skip_unless_tools
[ -d "$ROOT/build/stage/usr/local/lib/mpi-k8s/bundle" ] || ks_fail "no build/stage bundle (run make stage)"
W=$(mktemp -d /tmp/ks-images-mpi.XXXXXX)
trap 'rm -rf "$W"' EXIT
img_base
mkdir -p "$W/ompi"
cat >"$W/ompi/Dockerfile" <<'DF'
FROM debian:12.11-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openmpi-bin \
 && rm -rf /var/lib/apt/lists/*
DF
t0=$(date +%s)
img_build openmpi-bare "$W/ompi"
echo "image kubesim-test/openmpi-bare:1 built in $(( $(date +%s) - t0 )) s"
img_conf "$W/images.conf" "mpik8s/* build/stage/usr/local/bin"

ctl_cluster --set images_conf="$W/images.conf"
ks_on_exit "rm -rf '$W'"
ctl_start op
mpijob_yaml bare --ann mpi-k8s.io/transport=exec --slots 1 --run-policy '{cleanPodPolicy: Running}' \
  --image kubesim-test/openmpi-bare:1 \
  --command "[sh, -c, 'test ! -e /usr/local/bin/mpi-rsh && ! command -v kubectl && ! test -e /usr/lib/x86_64-linux-gnu/libcurl.so.4 && echo nothing-of-ours; mpirun --allow-run-as-root -np 2 hostname']" |
  kc create -f - >/dev/null || ks_fail "create the MPIJob"
ks_wait_for "[ \"\$(cond bare Succeeded status)\" = True ] || [ \"\$(cond bare Failed status)\" = True ]" 240
st=$(cond bare Succeeded status)
L=$(kc get pods -l mpi_job_name=bare,mpi_role_type=launcher -o name | head -1)
log=$(kc logs "$L" 2>&1)
echo "$log" | tail -n 8
if [ "$st" != True ]; then
  kc get pods -o wide >&2; kc get mpijob bare -o yaml >&2
  ks_fail "MPIJob bare did not succeed (Succeeded=$st, Failed=$(cond bare Failed status): $(cond bare Failed message))"
fi
img=$(kc get "$L" -o jsonpath='{.status.containerStatuses[0].imageID}')
[[ $img == docker.io/kubesim-test/openmpi-bare@sha256:* ]] || ks_fail "launcher imageID $img is not the store's image"
grep -qx nothing-of-ours <<<"$log" || ks_fail "the launcher image holds something of ours (or mpi-rsh outside /opt/kube)"
for i in 0 1; do
  grep -qx "bare-worker-$i" <<<"$log" || ks_fail "launcher log lacks rank output from bare-worker-$i"
done
echo "PASS: MPIJob in a bare Debian + Open MPI image succeeded through the delivered mpi-rsh"
