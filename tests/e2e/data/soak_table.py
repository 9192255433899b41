#!/usr/bin/env python3
"""soak_table.py [--tsv] DIR [BUCKET_S]: the soak's record (tests/e2e/soak.sh's mem.csv and
rounds.csv in DIR) as a Markdown table for docs/reliability.md, one row per BUCKET_S seconds
(default 1200): rounds finished in it, how long a round took (median and max, from its create to
its jobs' final states, and to nothing left after the delete), and the median RSS of the operator,
the API server and etcd. --tsv prints the same buckets' memory as tab-separated rows under one
header line (min_lo min_hi rounds bad operator_mib apiserver_mib etcd_mib; "-" where a process
was not sampled), the rows of bench/results/soak.tsv that bench/plot.sh draws."""
import csv
import statistics
import sys


def load(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def main():
    args = sys.argv[1:]
    tsv = bool(args) and args[0] == "--tsv"
    if tsv:
        args = args[1:]
    d = args[0]
    bucket = int(args[1]) if len(args) > 1 else 1200
    mem = [r for r in load(d + "/mem.csv")[1:] if len(r) == 6]
    rounds = [r for r in load(d + "/rounds.csv") if len(r) == 5]
    end = max(int(r[0]) for r in mem)
    if tsv:
        print("min_lo\tmin_hi\trounds\tbad\toperator_mib\tapiserver_mib\tetcd_mib")
    else:
        print("| minutes | rounds (bad) | round to final: median / max s | to nothing left: median / max s "
              "| operator RSS MiB | kube-apiserver RSS MiB | etcd RSS MiB | pods (max) |")
        print("|---|---|---|---|---|---|---|---|")
    for lo in range(0, end + 1, bucket):
        hi = lo + bucket
        m = [r for r in mem if lo <= int(r[0]) < hi]
        rs = [r for r in rounds if lo <= int(r[4]) < hi]
        if not m:
            continue
        # a column sampled as 0 throughout (kubesim has no API server or etcd process of its own)
        sampled = {k: any(int(r[k]) > 0 for r in mem) for k in (1, 2, 3)}
        med = lambda k: "%.1f" % (statistics.median(int(r[k]) for r in m) / 1024) if sampled[k] else "-"
        fin = [int(r[1]) for r in rs]
        gone = [int(r[2]) for r in rs]
        bad = sum(1 for r in rs if r[3] != "1")
        span = lambda v: "%d / %d" % (statistics.median(v), max(v)) if v else "-"
        if tsv:
            print("\t".join(str(x) for x in (lo // 60, min(hi, end) // 60, len(rs), bad, med(1), med(2), med(3))))
            continue
        print("| %d-%d | %d (%d) | %s | %s | %s | %s | %s | %d |" % (
            lo // 60, min(hi, end) // 60, len(rs), bad, span(fin), span(gone), med(1), med(2), med(3),
            max(int(r[4]) for r in m)))


if __name__ == "__main__":
    main()
