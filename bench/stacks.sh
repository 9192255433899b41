#!/usr/bin/env bash
# bench/stacks.sh - which MPI stack launches over which transport in which IP family, measured on
# the real cluster (issues #36 and #39: docs/controller.md "Today's stacks, measured" and
# docs/k8s.md "IPv6 and dual stack" quote its table).
#
# For each family given (ipv4, ipv6, dual; default all three): a fresh real cluster
# (`tests/k8s/k8s up --ip-family F`, through tests/lib/kubesim.sh with KUBE_BACKEND=k8s) with our
# operator, then for each stack image, one after the other, two MPIJobs of upstream's pi shape side
# by side (2 workers, 1 slot, uid 1000, backoffLimit 0):
#   exec  annotation mpi-k8s.io/transport: exec, the workers sleep (our exec transport);
#   ssh   the image's sshd in the workers as upstream's pi.yaml runs it (sshAuthMountPath
#         /home/mpiuser/.ssh, port 2222; mpi-rsh hands over to mpi-rsh-ssh).
# Stacks (images/build-images.sh names them; a missing image is built once):
#   openmpi4  mpik8s/mpi-pi:latest                  Debian 12, Open MPI 4.1.4 (ORTE)
#   mpich4.0  mpik8s/mpi-pi:mpich4.0-bookworm       Debian 12, MPICH 4.0.2 (Hydra)
#   openmpi5  mpik8s/mpi-pi:openmpi5-trixie         Debian 13, Open MPI 5.0.7 (PRRTE 3.0)
#   mpich4.2  mpik8s/mpi-pi:mpich4.2-trixie         Debian 13, MPICH 4.2.1 (Hydra)
# A cell is "ok" when the job Succeeded with pi in the launcher's log and rank 0 and rank 1 each on
# its own worker pod (the program prints its host), else the final condition's reason and the
# first 110 characters of its message (or "no verdict in 180 s"), and the seconds from create to
# the final condition. Prints a markdown table and writes bench/results/stacks.tsv (family, stack,
# transport, result, seconds, detail; bench/results_lib.bash: BENCH_RESULTS=DIR writes it
# elsewhere). BENCH_STACKS and BENCH_TRANSPORTS narrow it.
# AGENT_IMAGE: a launcher init image other than the default (a branch's own mpi-agent build).
# Needs root, the real cluster's components (tests/k8s/build.sh) and the images (make
# docker-images). Each cluster is torn down on exit, even after a failure.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export ROOT KUBE_BACKEND=k8s BINDIR=${BINDIR:-$ROOT/bin}
FAMILIES=${*:-ipv4 ipv6 dual}
STACKS=${BENCH_STACKS:-openmpi4 mpich4.0 openmpi5 mpich4.2}
TRANSPORTS=${BENCH_TRANSPORTS:-exec ssh}
. "$ROOT/bench/results_lib.bash"
[ "$(id -u)" -eq 0 ] || { echo "bench/stacks.sh: needs root (the real cluster's namespaces)"; exit 1; }

image_of() {
  case $1 in
    openmpi4) echo mpik8s/mpi-pi:latest ;; mpich4.0) echo mpik8s/mpi-pi:mpich4.0-bookworm ;;
    openmpi5) echo mpik8s/mpi-pi:openmpi5-trixie ;; mpich4.2) echo mpik8s/mpi-pi:mpich4.2-trixie ;;
    *) echo "bench/stacks.sh: unknown stack $1" >&2; return 1 ;;
  esac
}
for s in $STACKS; do
  img=$(image_of "$s") || exit 1
  docker image inspect "$img" >/dev/null 2>&1 && continue
  echo "bench/stacks.sh: building $img" >&2
  (cd "$ROOT" && ENGINE=docker images/build-images.sh "${img#mpik8s/}" >/dev/null) || { echo "bench/stacks.sh: cannot build $img" >&2; exit 1; }
done

# job NAME STACK TRANSPORT: the MPIJob, on stdout
job() {
  local name=$1 stack=$2 tr=$3 img impl= launch=mpirun wcmd
  img=$(image_of "$stack") || return 1
  case $stack in mpich*) impl='mpiImplementation: MPICH'; launch=mpiexec ;; esac
  wcmd='[sleep, "600"]'
  [ "$tr" = exec ] || wcmd='[/usr/sbin/sshd, -De, -f, /home/mpiuser/.sshd_config]'
  cat <<YAML
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: $name
  annotations: {mpi-k8s.io/transport: $tr, mpi-k8s.io/worker-timeout: "90"}
spec:
  slotsPerWorker: 1
  $impl
  sshAuthMountPath: /home/mpiuser/.ssh
  runPolicy: {cleanPodPolicy: None, backoffLimit: 0, activeDeadlineSeconds: 170}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: mpi-launcher
            image: $img
            securityContext: {runAsUser: 1000}
            command: [$launch, -n, "2", /home/mpiuser/pi]
            resources: {limits: {cpu: 200m, memory: 512Mi}}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: mpi-worker
            image: $img
            securityContext: {runAsUser: 1000}
            command: $wcmd
            resources: {limits: {cpu: 200m, memory: 512Mi}}
YAML
}

# verdict NAME SECONDS: one TSV tail (result, seconds, detail) for a job that ended or ran out
verdict() {
  local n=$1 secs=$2 log ranks
  if [ "$(cond "$n" Succeeded status)" = True ]; then
    log=$(kc logs -l "mpi_job_name=$n,mpi_role_type=launcher" -c mpi-launcher --tail -1 2>&1)
    ranks=$(echo "$log" | sed -n "s/^Rank \\([01]\\) of 2 running on \\($n-worker-[01]\\).*/\\1 \\2/p" | sort | tr '\n' ,)
    if ! echo "$log" | grep -q 'pi is approximately 3.14'; then printf 'no pi\t%s\tSucceeded without pi in the log\n' "$secs"
    elif [ "$ranks" != "0 $n-worker-0,1 $n-worker-1," ]; then printf 'misplaced\t%s\tranks: %s\n' "$secs" "$(echo "$log" | grep '^Rank' | tr '\n' ' ')"
    else printf 'ok\t%s\t\n' "$secs"; fi
  elif [ "$(cond "$n" Failed status)" = True ]; then
    # whether the ranks had computed pi before it failed (a hang in MPI_Finalize, say)
    log=$(kc logs -l "mpi_job_name=$n,mpi_role_type=launcher" -c mpi-launcher --tail -1 2>&1)
    ranks=; ! echo "$log" | grep -q 'pi is approximately 3.14' || ranks='pi printed; '
    printf 'Failed\t%s\t%s%s: %.110s\n' "$secs" "$ranks" "$(cond "$n" Failed reason)" "$(cond "$n" Failed message | tr "\t\n" "  " | sed "s/^.*launcher pod [^ :]*: //")"
  else
    printf 'hang\t%s\tno verdict in 180 s\n' "$secs"
  fi
}

# family F: one cluster, every stack in turn; prints each cell as a TSV row and appends it to the TSV
family() {
  local f=$1 s tr n t0 secs
  (
    . "$ROOT/tests/integration/controller_common.bash"
    ctl_cluster --ip-family "$f"
    ctl_start a --leader-elect=false --monitoring-port 18192 ${AGENT_IMAGE:+--agent-image "$AGENT_IMAGE"}
    for s in $STACKS; do
      t0=$SECONDS
      for tr in $TRANSPORTS; do
        n=$(echo "st-$s-$tr" | tr . -)
        job "$n" "$s" "$tr" | kc create -f - >/dev/null || ks_fail "create $n"
      done
      declare -A end=()
      while [ $((SECONDS - t0)) -lt 180 ]; do
        for tr in $TRANSPORTS; do
          n=$(echo "st-$s-$tr" | tr . -)
          [ -z "${end[$n]:-}" ] || continue
          { [ "$(cond "$n" Succeeded status)" = True ] || [ "$(cond "$n" Failed status)" = True ]; } && end[$n]=$((SECONDS - t0))
        done
        [ "${#end[@]}" -lt "$(echo $TRANSPORTS | wc -w)" ] || break
        sleep 2
      done
      for tr in $TRANSPORTS; do
        n=$(echo "st-$s-$tr" | tr . -)
        secs=${end[$n]:-$((SECONDS - t0))}
        row=$(printf '%s\t%s\t%s\t%s' "$f" "$s" "$tr" "$(verdict "$n" "$secs")")
        echo "$row" && bench_tsv_row "$row" # the verdict's tabs stay column separators
        kc delete mpijob "$n" --wait=false >/dev/null 2>&1
      done
      unset end
      ks_wait_for '[ -z "$(kc get pods -o name 2>/dev/null)" ]' 120 || true
    done
  )
}

bench_tsv_begin stacks "which MPI stack launches over which transport in which IP family (real cluster)" \
  "bench/stacks.sh $FAMILIES (BENCH_STACKS='$STACKS' BENCH_TRANSPORTS='$TRANSPORTS')" family stack transport result seconds detail
rows=$(mktemp) || exit 1
for f in $FAMILIES; do
  family "$f" | tee -a "$rows" || echo "bench/stacks.sh: the $f cluster failed" >&2
done
bench_tsv_end
echo
echo "| family | stack | exec | ssh |"
echo "|---|---|---|---|"
awk -F'\t' '$1 ~ /^(ipv4|ipv6|dual)$/ && NF >= 5 { k = $1 " | " $2; if (!(k in seen)) { seen[k] = 1; order[++n] = k }
  cell[k, $3] = ($4 == "ok" ? "ok" : $4 ": " $6) " (" $5 " s)" }
  END { for (i = 1; i <= n; i++) printf "| %s | %s | %s |\n", order[i], cell[order[i], "exec"], cell[order[i], "ssh"] }' "$rows"
rm -f "$rows"
