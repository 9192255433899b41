#!/usr/bin/env bash
# bench/agent_scale.sh - the launch path at N = 64, 128, 256 workers (issue 18): one kubesim
# with several nodes, N one-slot worker pods Ready, then for each N and each transport
# (nsenter floor, mpi-rsh = the exec API, kubexec.sh = `kubectl exec` as the seed's agent):
#   launch   mpirun -np N hostname: ms until every rank has printed (all ranks started) and
#            until mpirun exits (the job's end), and the launcher's CPU seconds (mpirun and
#            its transport processes, from the rusage of everything it waited for)
#   streams  mpirun -np N sleep HOLD: once kubesim counts N open exec streams (`kubesim stat
#            exec-streams`), the summed Pss of every mpi-rsh / mpi-rsh-holder / kubectl process
#            (from /proc/PID/smaps_rollup), per stream, and the streams the API server holds
#   (mpi-rsh-thin: the libc-only client mpi-rsh becomes under the holder)
# Usage: bench/agent_scale.sh [N...]   (default 64 128 256; BENCH_NODES=4, BENCH_HOLD=60 (s the ranks sleep: all N streams must be live at once),
# BENCH_PATHS="nsenter mpi-rsh holder kubexec": holder = mpi-rsh under mpi-rsh-holder, as
# mpi-agent runs it). Needs root (netns). One run per N (it is long).
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
BINDIR=${BINDIR:-$ROOT/bin}
KS=$ROOT/tests/kubesim/kubesim
NS_LIST=${*:-64 128 256}
NODES=${BENCH_NODES:-4}
HOLD=${BENCH_HOLD:-60}
PATHS=${BENCH_PATHS:-nsenter mpi-rsh holder kubexec}
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,tcp OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ "$(id -u)" -eq 0 ] || { echo "bench/agent_scale.sh: needs root (kubesim network namespaces)"; exit 0; }
ulimit -n 65536 2>/dev/null || ulimit -n 4096
D=$(mktemp -d /tmp/agent-scale-XXXXXX)
# mpirun's output of every launch is kept in build/bench-logs/agent_scale/ (the last run's)
cleanup() {
  mkdir -p "$ROOT/build/bench-logs/agent_scale" && cp "$D"/out-* "$ROOT/build/bench-logs/agent_scale/" 2>/dev/null
  timeout 120 "$KS" down --dir "$D" >/dev/null 2>&1 || true; rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
timeout 120 "$KS" up --dir "$D" --nodes "$NODES" >/dev/null
ksrun() { timeout -k 5 "${KT:-600}" "$KS" run --dir "$D" -- "$@"; }
k() { ksrun kubectl "$@"; }

. "$ROOT/bench/launch_lib.bash"
bench_launch_tools
cat > "$D/pss.py" <<'PY'
# pss.py TAG NAME...: "KB COUNT": summed Pss of the processes whose comm is one of NAME and
# whose environment has BENCH_TAG=TAG (this bench's, not another user's on the machine)
import os, sys
tag = ("BENCH_TAG=" + sys.argv[1]).encode(); names = set(sys.argv[2:]); kb = n = 0
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        if open("/proc/%s/comm" % pid).read().strip() not in names:
            continue
        if tag not in open("/proc/%s/environ" % pid, "rb").read().split(b"\0"):
            continue
        for line in open("/proc/%s/smaps_rollup" % pid):
            if line.startswith("Pss:"):
                kb += int(line.split()[1]); n += 1
    except OSError:
        pass
print(kb, n)
PY

maxn=0; for n in $NS_LIST; do [ "$n" -gt $maxn ] && maxn=$n; done
echo "== $maxn worker pods on $NODES kubesim nodes"
t0=$SECONDS
for ((i = 0; i < maxn; i++)); do cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: sc-worker-$i, labels: {mpi_job_name: sc, mpi_role_type: worker}}
spec:
  terminationGracePeriodSeconds: 1
  containers: [{name: worker, image: mpik8s/openmpi, command: [sleep, "36000"]}]
---
YAML
done > "$D/pods.yaml"
k create -f "$D/pods.yaml" >/dev/null
if ! k wait --for=condition=Ready pod -l mpi_job_name=sc --timeout=900s >/dev/null; then
  echo "   not all $maxn pods became Ready within 900 s"
fi
echo "   created and Ready in $((SECONDS - t0)) s; per node: $(k get pods -l mpi_job_name=sc -o 'jsonpath={range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort | uniq -c | awk '{printf "%s=%s ", $2, $1}')"
bench_podpids sc
echo "   $(wc -l < "$D/podpids") pods mapped to host pids (nsenter floor)"

agent_of() { case $1 in nsenter) echo "$D/nsenter.sh" ;; mpi-rsh|holder) echo "$BINDIR/mpi-rsh" ;; kubexec) echo "$D/kubexec.sh" ;; esac; }
# holder: mpirun runs under mpi-rsh-holder, as `mpi-agent run` starts it; mpi-rsh: without it
wrap_of() { case $1 in holder) echo "$BINDIR/mpi-rsh-holder -v --" ;; mpi-rsh) echo "env MPI_AGENT_STREAM_HOLDER=0" ;; *) echo env ;; esac; }
export BENCH_TAG=$D
# mpirun ARGS for N ranks with AGENT: no tree spawn (the agents live outside the pods; "AGENT :
# false" keeps orted from trying them), every daemon launched at once
mpirun_args() { # -> MA
  MA=(--hostfile "$D/hf$1" -np "$1" --map-by node --bind-to none -mca plm_rsh_agent "$2 : false"
    -mca plm_rsh_no_tree_spawn 1 -mca orte_leave_session_attached 1 -mca plm_rsh_num_concurrent "$1"
    -mca oob_tcp_listen_mode listen_thread)
}
streams() { timeout 60 "$KS" stat --dir "$D" exec-streams 2>/dev/null || echo "0 0"; } # never fails: a slow answer reads as 0
declare -A RES MEM
for n in $NS_LIST; do
  for ((i = 0; i < n; i++)); do echo "sc-worker-$i slots=1"; done > "$D/hf$n"
  for path in $PATHS; do
    agent=$(agent_of "$path")
    mpirun_args "$n" "$agent"
    # launch
    RES[$path,$n]=$(TSRUN_LOG=$D/out-$path-$n MPI_JOB_NAMESPACE=default MPI_JOB_WORKER_CONTAINER=worker ksrun \
      python3 "$D/tsrun.py" timeout 600 $(wrap_of "$path") mpirun "${MA[@]}" hostname 2>/dev/null || echo "nan nan 0 1 nan")
    echo "   N=$n $path launch: $(echo "${RES[$path,$n]}" | awk '{printf "last rank %s ms, exit %s ms, %s lines, rc %s, cpu %s s", $1, $2, $3, $4, $5}')"
    [ "$path" = holder ] && echo "   N=$n holder: $(sed -n 's/.*exited; \(.*streams served.*\)/\1/p' "$D/out-$path-$n" | tail -1)"
    set -- ${RES[$path,$n]}
    [ "$4" = 0 ] && [ "$3" -ge "$n" ] || { echo "   N=$n $path: mpirun failed; its last lines:"; tail -n 15 "$D/out-$path-$n" | sed 's/^/     | /'; continue; }
    [ "$path" = nsenter ] && continue
    # streams held: sample once the API server counts n open streams
    timeout 60 "$KS" stat --dir "$D" exec-streams-reset >/dev/null || true
    MPI_JOB_NAMESPACE=default MPI_JOB_WORKER_CONTAINER=worker ksrun timeout 600 $(wrap_of "$path") mpirun "${MA[@]}" \
      sleep "$HOLD" >/dev/null 2>&1 & mp=$!
    # sample whenever more streams are open than at the last sample; done at n or when mpirun ends
    best=0 kb=0 procs=0 open2=0; t1=$SECONDS
    while [ $((SECONDS - t1)) -lt 300 ] && kill -0 $mp 2>/dev/null; do
      read -r open _ < <(streams) || open=0
      if [ "$open" -gt "$best" ]; then
        best=$open
        read -r kb procs < <(python3 "$D/pss.py" "$D" mpi-rsh mpi-rsh-holder mpi-rsh-thin kubectl) || true
        read -r open2 _ < <(streams) || open2=0
      fi
      [ "$best" -ge "$n" ] && break
      sleep 0.5
    done
    read -r _ peak < <(streams) || peak=0
    wait $mp || true
    MEM[$path,$n]="$kb $procs $open2 $peak"
    echo "   N=$n $path streams: $open2 open (peak $peak) when sampled; $procs transport processes, Pss $kb KB" \
         "= $(( kb / (open2 > 0 ? open2 : 1) )) KB per stream"
  done
done
echo
echo "== summary (launch: ms to the last rank's line / to mpirun's exit; overhead over the nsenter floor)"
printf '   %-4s %-8s %10s %10s %8s %8s %10s %10s %8s\n' N path last-rank exit x-floor cpu-s Pss-KB KB/stream streams
for n in $NS_LIST; do
  for path in $PATHS; do
    set -- ${RES[$path,$n]:-nan nan 0 1 nan}
    f=$(echo "${RES[nsenter,$n]:-nan}" | awk '{print $1}')
    x=$(awk -v a="$1" -v b="$f" 'BEGIN { if (b + 0 > 0 && a + 0 > 0) printf "%.2f", a / b; else print "-" }')
    m=(${MEM[$path,$n]:-- - 0 -})
    per=$(awk -v a="${m[0]}" -v b="${m[2]}" 'BEGIN { if (b + 0 > 0) printf "%d", a / b; else print "-" }')
    printf '   %-4s %-8s %10s %10s %8s %8s %10s %10s %8s\n' "$n" "$path" "$1" "$2" "$x" "$5" "${m[0]}" "$per" "${m[2]}"
  done
done
