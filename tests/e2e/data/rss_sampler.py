#!/usr/bin/env python3
"""rss_sampler.py OUT PERIOD ROOT-PID...: until SIGTERM, scans /proc every PERIOD seconds
for processes descended from one of the ROOT-PIDs (the case's kubesim daemon and
operator: other users' processes on the machine never count) whose command line runs
mpi-operator, mpi-agent or mpi-rsh (directly or through the bundle's ld.so), and records
per program the highest VmHWM (peak RSS, kB) seen and how many distinct processes were
seen; writes JSON to OUT on exit."""
import json
import os
import signal
import sys
import time

out = sys.argv[1]
period = float(sys.argv[2])
roots = set(int(a) for a in sys.argv[3:])
names = ("mpi-operator", "mpi-agent", "mpi-rsh")
peak = {n: 0 for n in names}
seen = {n: set() for n in names}
stop = False


def term(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, term)
signal.signal(signal.SIGINT, term)
me = os.getpid()


def ppid(pid):
    with open("/proc/%s/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def ours(pid):
    p, depth = int(pid), 0
    while p > 1 and depth < 64:
        if p in roots:
            return True
        p = ppid(p)
        depth += 1
    return False


while not stop:
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == me:
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
            prog = None
            for a in argv[:4]:
                base = os.path.basename(a.decode(errors="replace"))
                if base in names:
                    prog = base
                    break
            if prog is None or (argv[0].endswith(b"nsenter") or b"python" in argv[0]):
                continue
            if not ours(pid):
                continue
            with open("/proc/%s/status" % pid) as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        kb = int(line.split()[1])
                        peak[prog] = max(peak[prog], kb)
                        seen[prog].add(pid)
                        break
        except (OSError, ValueError):
            continue
    time.sleep(period)
with open(out, "w") as f:
    json.dump({n: {"peak_kb": peak[n], "processes": len(seen[n])} for n in names}, f)
