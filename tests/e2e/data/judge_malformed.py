#!/usr/bin/env python3
"""judge_malformed.py CASES.TSV MPIJOBS.JSON CREATE.ERR OBJECTS.JSON
Judges the malformed MPIJobs of tests/e2e/cases/20_malformed.sh from one `kubectl get
mpijobs -o json`, the stderr of one `kubectl create -f DIR` and one `kubectl get
pods,jobs,configmaps,services,serviceaccounts,roles,rolebindings,secrets -o json`.
Prints one line per problem and a summary "api=N ctl=M pending=P"; exit 0 if no problem
(pending jobs, still without a Failed condition, count as problems only with --final)."""
import json
import sys

final = "--final" in sys.argv
args = [a for a in sys.argv[1:] if a != "--final"]
cases = [l.rstrip("\n").split("\t") for l in open(args[0]) if l.strip()]
jobs = {j["metadata"]["name"]: j for j in json.load(open(args[1]))["items"]}
err = open(args[2], errors="replace").read().splitlines()
objs = json.load(open(args[3]))["items"]
problems, napi, nctl, pending = [], 0, 0, 0


def owned_by(o, name):
    md = o.get("metadata") or {}
    lab = md.get("labels") or {}
    if lab.get("training.kubeflow.org/job-name") == name or lab.get("mpi_job_name") == name:
        return True
    if any(r.get("kind") == "MPIJob" and r.get("name") == name for r in md.get("ownerReferences") or []):
        return True
    return md.get("name") in (name + "-config", name + "-launcher", name + "-worker", name + "-ssh")


for name, kind, want in cases:
    lines = [l for l in err if '"%s"' % name in l or "/%s.json" % name in l]
    if kind == "api":
        if name in jobs:
            problems.append("%s: accepted by the API, the schema should refuse %s" % (name, want))
        elif not any(want in l for l in lines):
            problems.append("%s: refusal does not name %s: %s" % (name, want, " / ".join(lines)[:200]))
        else:
            napi += 1
        continue
    if name not in jobs:
        problems.append("%s: refused by the API (%s); the controller should judge it"
                        % (name, " / ".join(lines)[:160]))
        continue
    conds = (jobs[name].get("status") or {}).get("conditions") or []
    failed = [c for c in conds if c.get("type") == "Failed" and c.get("status") == "True"]
    if not failed:
        pending += 1
        if final:
            problems.append("%s: no Failed condition (conditions: %s)" % (
                name, [(c.get("type"), c.get("message")) for c in conds]))
        continue
    nctl += 1
    if want not in (failed[0].get("message") or ""):
        problems.append("%s: message %r does not name %s" % (name, failed[0].get("message"), want))
    half = ["%s/%s" % (o.get("kind"), o["metadata"]["name"]) for o in objs if owned_by(o, name)]
    if half:
        problems.append("%s: half-created objects: %s" % (name, " ".join(half)))
for p in problems:
    print(p)
print("api=%d ctl=%d pending=%d problems=%d" % (napi, nctl, pending, len(problems)))
sys.exit(1 if problems or (pending and final) else 0)
