#!/usr/bin/env bash
# timeout: 420
# Issue #36 on the real cluster: the seed's journey (tests/integration/controller_journey.sh: our
# deploy/v1alpha2 install, the seed's v1alpha2 pi over the exec transport, status, logs and
# metrics) on Debian 13's Open MPI 5.0.7 (PRRTE), upstream's current stack: the example's image
# replaced by mpik8s/mpi-pi:openmpi5-trixie (built by tests/k8s/run.sh). PRRTE must start its
# daemons through mpi-rsh (PRTE_MCA_plm_ssh_agent) and the job succeed as on Open MPI 4.
set -u
IMG=mpik8s/mpi-pi:openmpi5-trixie
docker image inspect "$IMG" >/dev/null 2>&1 ||
  { echo "FAIL: no $IMG in the Docker Engine (ENGINE=docker images/build-images.sh mpi-pi:openmpi5-trixie)"; exit 1; }
KUBE_BACKEND=k8s JOURNEY_IMAGE=$IMG exec bash "$(dirname "$0")/../../integration/controller_journey.sh"
