# bench/launch_lib.bash - what the launch benches (agent.sh, agent_scale.sh) share, sourced after
# they set D (their kubesim's directory) and k (kubectl in it):
#   bench_launch_tools   writes $D/tsrun.py (runs a command; prints "ms_to_last_line total_ms
#                        lines rc cpu_s", its output to $TSRUN_LOG if set; holder log lines
#                        not counted), $D/kubexec.sh (the
#                        seed's rsh agent: kubectl exec) and $D/nsenter.sh (the floor: enter the
#                        pod's namespaces directly, host pids from $D/podpids)
#   bench_podpids JOB    writes $D/podpids: "POD HOSTPID" of JOB's worker pods' pid 1, from
#                        kubesim's sandbox records (every node)

bench_launch_tools() {
cat > "$D/tsrun.py" <<'PY'
# tsrun.py CMD...: runs CMD, prints "ms_to_last_line total_ms lines rc cpu_s" (ms from start;
# cpu_s: user+system seconds of CMD and every descendant it waited for). mpi-rsh-holder's own
# log lines (-v) go to the log but are neither counted nor timed.
import os, resource, subprocess, sys, time
t0 = time.monotonic(); last = t0; n = 0
log = open(os.environ.get("TSRUN_LOG", os.devnull), "wb")
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
for line in p.stdout:
    log.write(line)
    if b" mpi-rsh-holder " not in line:
        last = time.monotonic(); n += 1
rc = p.wait()
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(int((last - t0) * 1000), int((time.monotonic() - t0) * 1000), n, rc, "%.2f" % (ru.ru_utime + ru.ru_stime))
PY
cat > "$D/kubexec.sh" <<'SH'
#!/bin/sh
# the seed's rsh agent: kubectl exec POD -- /bin/sh -c "$*"
pod=$1; shift
exec kubectl exec "${pod%%.*}" -c worker -- /bin/sh -c "$*"
SH
cat > "$D/nsenter.sh" <<SH
#!/bin/sh
# floor: enter the pod's namespaces directly (host pid of its pid 1 from the map)
pod=\$1; shift
pid=\$(awk -v p="\${pod%%.*}" '\$1 == p {print \$2}' $D/podpids)
exec nsenter -t "\$pid" -n -u -i -m -p -- /bin/sh -c "\$*"
SH
chmod +x "$D/kubexec.sh" "$D/nsenter.sh"
}

bench_podpids() {
k get pods -l mpi_job_name="$1" -o 'jsonpath={range .items[*]}{.metadata.name} {.metadata.uid}{"\n"}{end}' |
  python3 -c '
import glob, json, sys
recs = []
for f in glob.glob(sys.argv[1] + "/state/node*/sandboxes/*.json"):
    try:
        recs.append(json.load(open(f)))
    except (OSError, ValueError):
        pass
by_uid = {r.get("uid"): r for r in recs}
for line in sys.stdin:
    name, uid = line.split()
    r = by_uid.get(uid)
    if r and r.get("pids"):
        print(name, r["pids"][-1][0])
' "$D" > "$D/podpids"
}
