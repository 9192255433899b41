#!/usr/bin/env bash
# timeout: 600
# `kubectl mpijob` on the real cluster (kube-apiserver, kubelet, containerd, the real kubectl):
# tests/integration/kubectl_mpijob.sh with KUBE_BACKEND=k8s: a Succeeded job, a rank-failed job
# (rank 1 exits 3), a job blocked on an unpullable image and a job suspended for a Kueue queue,
# each compared with tests/golden/kubectl_mpijob/ (the same files as on kubesim); then a Workload,
# logs, -o, exit codes, --context, exec and hostfile. Kueue's own admission of a waiting job is checked in kueue.sh (the real
# Kueue takes minutes to build and start; this case stays without it). The cluster is removed
# on exit, pass or fail (the EXIT trap of tests/lib/kubesim.sh).
set -u
export KUBE_BACKEND=k8s
exec "$(dirname "$0")/../../integration/kubectl_mpijob.sh"
