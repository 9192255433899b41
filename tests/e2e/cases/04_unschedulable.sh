#!/usr/bin/env bash
# 04: workers that cannot be scheduled (2 nvidia.com/gpu each, the node has 1). Bounded
# wait (worker-timeout 8 s); Failed within 30 s of the bound, message names the worker
# and Unschedulable / the GPU resource.
# timeout: 330
. "$(dirname "$0")/../lib.sh"
e2e_begin
# the real cluster's node has no nvidia.com/gpu at all: 2 per worker is as unschedulable there
if [ "$KUBE_BACKEND" = k8s ]; then e2e_up; else e2e_up --gpus 1; fi
e2e_op_start a
BACKOFF=0 WORKER_TIMEOUT=8 WORKER_GPUS=2 e2e_create j4
e2e_expect j4 Failed '.+' 'j4-worker-[01].*(Unschedulable|nvidia.com/gpu)' "$((T_CREATE + 8000))" 30
e2e_no_leftovers j4 30
e2e_pass
