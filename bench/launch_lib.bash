# bench/launch_lib.bash - what the launch benches (agent.sh, agent_scale.sh) share, sourced after
# they set D (their kubesim's directory) and k (kubectl in it):
#   bench_launch_tools   writes $D/tsrun.py (runs a command; prints "ms_to_last_line total_ms
#                        lines rc cpu_s pss_kib streams", its output to $TSRUN_LOG if set; holder
#                        log lines not counted; with TSRUN_PSS_AT=L, once L lines came, the Pss
#                        of the command's transport processes and their count, else "nan 0"),
#                        $D/kubexec.sh (the
#                        seed's rsh agent: kubectl exec) and $D/nsenter.sh (the floor: enter the
#                        pod's namespaces directly, host pids from $D/podpids)
#   bench_podpids JOB    writes $D/podpids: "POD HOSTPID" of JOB's worker pods' pid 1, from
#                        kubesim's sandbox records (every node)

bench_launch_tools() {
cat > "$D/tsrun.py" <<'PY'
# tsrun.py CMD...: runs CMD, prints "ms_to_last_line total_ms lines rc cpu_s pss_kib streams"
# (ms from start; cpu_s: user+system seconds of CMD and every descendant it waited for).
# mpi-rsh-holder's own log lines (-v) go to the log but are neither counted nor timed. With
# TSRUN_PSS_AT=L: when the L-th line came (the ranks still running), the summed Pss (KiB, from
# smaps_rollup) of CMD's descendants that carry the launch (TRANSPORTS: the rsh agents, the
# holder, ssh, kubectl, crictl) and how many there are; else "nan 0".
import os, resource, subprocess, sys, time
TRANSPORTS = {"mpi-rsh", "mpi-rsh-holder", "mpi-rsh-thin", "ssh", "kubectl", "crictl", "nsenter", "kubexec.sh", "crictl.sh", "ssh.sh"}
def pss_of_tree(root):
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            st = open("/proc/%s/stat" % d).read()
        except OSError:
            continue
        comm = st[st.index("(") + 1:st.rindex(")")]
        ppid = int(st[st.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append((int(d), comm))
    total = count = 0
    todo = [root]
    while todo:
        for pid, comm in kids.get(todo.pop(), []):
            todo.append(pid)
            if comm not in TRANSPORTS:
                continue
            try:
                for l in open("/proc/%d/smaps_rollup" % pid):
                    if l.startswith("Pss:"):
                        total += int(l.split()[1]); count += 1
            except OSError:
                pass
    return total, count
pss_at = int(os.environ.get("TSRUN_PSS_AT", "0")); pss = ("nan", 0)
t0 = time.monotonic(); last = t0; n = 0
log = open(os.environ.get("TSRUN_LOG", os.devnull), "wb")
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
for line in p.stdout:
    log.write(line)
    if b" mpi-rsh-holder " not in line:
        last = time.monotonic(); n += 1
        if pss_at and n == pss_at:
            pss = pss_of_tree(p.pid)
rc = p.wait()
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(int((last - t0) * 1000), int((time.monotonic() - t0) * 1000), n, rc, "%.2f" % (ru.ru_utime + ru.ru_stime), *pss)
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
