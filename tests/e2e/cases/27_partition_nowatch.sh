#!/usr/bin/env bash
# 27: case 24's partition with the agent's pod-network watch off (annotation
# mpi-k8s.io/network-timeout "0"): what mpirun does alone. The ranks' sleep ends 60 s after
# rank-up, yet 90 s after the partition the MPIJob is still Running and the launcher pod too:
# mpirun waits on worker-1's daemon, whose messages the partition drops (TCP retransmits for
# ~15 min). Then heal and delete: nothing left. The cluster and the job:
# tests/e2e/partition_lib.sh. Not exclusive: it asserts a hang, which load does not shorten.
# timeout: 420
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../partition_lib.sh"
[ "$KUBE_BACKEND" = k8s ] ||
  e2e_skip "kubesim: on a fresh instance mpirun exits instead of hanging (docs/kubesim.md, the differential table)"
e2e_begin
partition_up

partition_start j24b 0
t0=$(e2e_now_ms)
partition_cut
sleep 90
t_check=$(e2e_now_ms)
fin=$(kc get mpijob j24b -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type} {end}')
phase=$(kc get pod "$(launcher_pod j24b)" -o jsonpath='{.status.phase}')
since_up=$(( (t_check - T_UP) / 1000 ))
e2e_log "j24b: $(( (t_check - t0) / 1000 )) s after the partition (${since_up} s after rank-up, the ranks' sleep 60 long over): conditions True: $fin; launcher $phase"
case " $fin " in *" Succeeded "*|*" Failed "*)
  launcher_log j24b | tail -n 15 | sed 's/^/j24b launcher: /' >&2
  e2e_fail "j24b: ended ($fin) without the watch: the case no longer shows the hang" ;;
esac
[ "$phase" = Running ] || e2e_fail "j24b: launcher pod $phase, want Running (hung)"
# worker-1's rank is gone, its daemon waits on mpirun (exec still works)
left=$(kc exec j24b-worker-1 -c worker -- sh -c 'for p in /proc/[0-9]*; do tr "\0" " " <$p/cmdline; echo; done' 2>/dev/null |
  grep -cE "(^|/)(orted|prted) " || true)
e2e_note "no-watch=Running-after-90s orted-on-worker-1=$left"
partition_heal
kc delete mpijob j24b --wait=false >/dev/null || e2e_fail "delete mpijob j24b"
e2e_wait_for "[ -z \"\$(kc get pods -l mpi_job_name=j24b -o name)\" ]" 90 ||
  e2e_fail "j24b: pods left after delete: $(kc get pods -l mpi_job_name=j24b --no-headers | tr '\n' ';')"
e2e_note "leftovers-j24b=0"
e2e_pass
