"""batch/v1 Job controller (NonIndexed, completions/parallelism, backoffLimit with pod
failure counting through the job-tracking finalizer, activeDeadlineSeconds, suspend,
podReplacementPolicy, ttlSecondsAfterFinished, conditions as Kubernetes 1.32 sets them)."""
import asyncio
import calendar
import logging
import time

from .errors import ApiError
from .jsoncopy import deepcopy
from .store import now

log = logging.getLogger("kubesim.jobs")
TRACKING = "batch.kubernetes.io/job-tracking"
JOBS = "jobs.batch"
COMPONENT = "job-controller"


def ts(s):
    if not s:
        return None
    return calendar.timegm(time.strptime(s[:19], "%Y-%m-%dT%H:%M:%S"))


def cond(st, typ):
    for c in st.get("conditions") or []:
        if c.get("type") == typ:
            return c
    return None


def is_true(st, typ):
    c = cond(st, typ)
    return c is not None and c.get("status") == "True"


def set_cond(st, typ, status, reason, message):
    conds = st.setdefault("conditions", [])
    t = now()
    for c in conds:
        if c["type"] == typ:
            if c.get("status") != status:
                c["lastTransitionTime"] = t
            c.update({"status": status, "reason": reason, "message": message,
                      "lastProbeTime": t})
            return
    conds.append({"type": typ, "status": status, "lastProbeTime": t, "lastTransitionTime": t,
                  "reason": reason, "message": message})


class JobController:
    """Level-triggered per Job: a Job is synced when it or one of its pods changes; every
    `resync` seconds the Jobs that wait on time (deadline, back-off, ttl: kept in a set as
    their events arrive, not found by a scan) are synced, and every `full_resync` seconds
    all of them (a safety net, as informers resync), spread over ticks of at most
    `resync_batch` Jobs so that no tick stalls the API server."""

    def __init__(self, store, backoff_base=1.0, resync=0.5, full_resync=300.0, resync_batch=100):
        self.store = store
        self.backoff_base = backoff_base
        self.resync = resync
        self.full_resync = full_resync
        self.resync_batch = resync_batch
        self.timed = set()     # (ns, name) of Jobs whose next step depends on the clock
        self.backlog = []      # (ns, name) of the full resync still to do
        self.counted = {}      # job uid -> {pod uid}
        self.ignored = set()   # pod uids deleted because of suspend / success
        self.last_fail = {}    # job uid -> monotonic time of the latest counted failure
        self.dirty = set()
        self.scheduled = False
        store.subscribe(JOBS, self._on_job, readonly=True)
        store.subscribe("pods", self._on_pod, readonly=True)

    def start(self):
        self.task = asyncio.ensure_future(self._loop())

    def stop(self):
        if getattr(self, "task", None) is not None:
            self.task.cancel()

    async def _loop(self):
        last_full = time.monotonic()
        while True:
            await asyncio.sleep(self.resync)
            if time.monotonic() - last_full >= self.full_resync and not self.backlog:
                last_full = time.monotonic()
                self.backlog = [(j["metadata"]["namespace"], j["metadata"]["name"])
                                for j in self.store.list(JOBS, copy=False)]
            self.dirty.update(self.backlog[:self.resync_batch])
            del self.backlog[:self.resync_batch]
            self.dirty.update(self.timed)
            self._run()

    def _waits_on_time(self, job):
        """True if the Job's next step depends on the clock (activeDeadlineSeconds, the
        re-creation back-off, ttlSecondsAfterFinished) rather than on a change."""
        spec = job.get("spec") or {}
        st = job.get("status") or {}
        if is_true(st, "Complete") or is_true(st, "Failed"):
            return spec.get("ttlSecondsAfterFinished") is not None
        return spec.get("activeDeadlineSeconds") is not None or \
            job["metadata"]["uid"] in self.last_fail

    def _kick(self, ns, name):
        self.dirty.add((ns, name))
        if not self.scheduled:
            self.scheduled = True
            asyncio.get_event_loop().call_soon(self._run)

    def _on_job(self, etype, job):
        md = job["metadata"]
        key = (md["namespace"], md["name"])
        if etype == "DELETED":
            self.counted.pop(md["uid"], None)
            self.last_fail.pop(md["uid"], None)
            self.timed.discard(key)
            return
        if self._waits_on_time(job):
            self.timed.add(key)
        else:
            self.timed.discard(key)
        self._kick(md["namespace"], md["name"])

    def _on_pod(self, etype, pod):
        owned = False
        for ref in pod["metadata"].get("ownerReferences") or []:
            if ref.get("kind") == "Job" and ref.get("controller"):
                job = self.store.stored(JOBS, pod["metadata"]["namespace"], ref["name"])
                owned = job is not None and job["metadata"]["uid"] == ref.get("uid")
                self._kick(pod["metadata"]["namespace"], ref["name"])
        if etype != "DELETED" and not owned and \
                TRACKING in (pod["metadata"].get("finalizers") or []):
            # orphaned pod (its Job is gone or released it): drop the tracking finalizer
            asyncio.get_event_loop().call_soon(self._drop_tracking, pod)

    def _run(self):
        self.scheduled = False
        todo, self.dirty = self.dirty, set()
        for ns, name in sorted(todo):
            job = self.store.stored(JOBS, ns, name)
            if job is None:
                continue
            try:
                self.sync(job)
            except ApiError as e:
                if e.code not in (404, 409):
                    log.warning("job %s/%s: %s", ns, name, e.message)
                self.dirty.add((ns, name))
            except Exception:
                log.exception("job %s/%s sync failed", ns, name)

    # ------------------------------------------------------------------------
    def _pods(self, job):
        """The Job's pods (stored objects, read only), from the store's owner index."""
        uid = job["metadata"]["uid"]
        out = []
        for res, ns, name in self.store.dependents(uid):
            p = self.store.stored(res, ns, name) if res == "pods" else None
            if p is None or ns != job["metadata"]["namespace"]:
                continue
            for ref in p["metadata"].get("ownerReferences") or []:
                if ref.get("uid") == uid and ref.get("controller"):
                    out.append(p)
        return out

    def _drop_tracking(self, p):
        if TRACKING not in (p["metadata"].get("finalizers") or []):
            return
        cur = self.store.try_get("pods", p["metadata"]["namespace"], p["metadata"]["name"])
        if cur is None or cur["metadata"]["uid"] != p["metadata"]["uid"]:
            return

        def f(o):
            o["metadata"]["finalizers"] = [x for x in o["metadata"].get("finalizers") or []
                                           if x != TRACKING]
            if not o["metadata"]["finalizers"]:
                del o["metadata"]["finalizers"]
        try:
            self.store.mutate("pods", p["metadata"]["namespace"], p["metadata"]["name"], f)
        except ApiError:
            pass

    def _delete_pod(self, job, p, ignore=False):
        if p["metadata"].get("deletionTimestamp"):
            return
        if ignore:
            self.ignored.add(p["metadata"]["uid"])
        try:
            self.store.delete("pods", p["metadata"]["namespace"], p["metadata"]["name"])
            self.store.record_event(None, job, "Normal", "SuccessfulDelete",
                                    "Deleted pod: %s" % p["metadata"]["name"], COMPONENT)
        except ApiError:
            pass

    def _failed(self, job, p):
        phase = (p.get("status") or {}).get("phase")
        if phase == "Failed":
            return True
        spec = job.get("spec") or {}
        if spec.get("podReplacementPolicy") == "Failed" or spec.get("podFailurePolicy"):
            return False
        return bool(p["metadata"].get("deletionTimestamp")) and phase != "Succeeded"

    def sync(self, job):
        s = self.store
        md = job["metadata"]
        ns, name, uid = md["namespace"], md["name"], md["uid"]
        spec = job.get("spec") or {}
        st = deepcopy(job.get("status") or {})
        before = deepcopy(st)
        counted = self.counted.setdefault(uid, set())
        pods = self._pods(job)
        finished = is_true(st, "Complete") or is_true(st, "Failed")
        self._count_terminated(job, pods, st, counted)
        if not finished:
            # removing the finalizer only after the count is stored (below)
            pass
        active = [p for p in pods if not p["metadata"].get("deletionTimestamp") and
                  (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        terminating = [p for p in pods if p["metadata"].get("deletionTimestamp") and
                       (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        completions = spec.get("completions", 1) or 1
        parallelism = spec.get("parallelism", 1)
        backoff_limit = spec.get("backoffLimit", 6)
        suspended = bool(spec.get("suspend"))
        t_now = time.time()
        if md.get("deletionTimestamp"):
            finished = True
        if not finished:
            # As pkg/controller/job pastBackoffLimitOnFailure: with OnFailure, the
            # restarts of init and main containers of Pending/Running pods count.
            restarts = 0
            on_failure = (spec.get("template", {}).get("spec") or {}).get("restartPolicy") == "OnFailure"
            if on_failure:
                for p in active:
                    pst = p.get("status") or {}
                    for cs in (pst.get("initContainerStatuses") or []) + \
                            (pst.get("containerStatuses") or []):
                        restarts += cs.get("restartCount", 0)
            past_restarts = on_failure and (restarts > 0 if backoff_limit == 0
                                            else restarts >= backoff_limit)
            if is_true(st, "FailureTarget") or is_true(st, "SuccessCriteriaMet"):
                pass
            elif st.get("failed", 0) > backoff_limit or past_restarts:
                set_cond(st, "FailureTarget", "True", "BackoffLimitExceeded",
                         "Job has reached the specified backoff limit")
            elif spec.get("activeDeadlineSeconds") is not None and st.get("startTime") and \
                    not suspended and \
                    t_now - ts(st["startTime"]) >= spec["activeDeadlineSeconds"]:
                set_cond(st, "FailureTarget", "True", "DeadlineExceeded",
                         "Job was active longer than specified deadline")
            elif st.get("succeeded", 0) >= completions:
                set_cond(st, "SuccessCriteriaMet", "True", "CompletionsReached",
                         "Reached expected number of succeeded pods")
            if is_true(st, "FailureTarget") or is_true(st, "SuccessCriteriaMet"):
                for p in active:
                    self._delete_pod(job, p, ignore=is_true(st, "SuccessCriteriaMet"))
                active = []
                if not terminating:
                    if is_true(st, "FailureTarget"):
                        c = cond(st, "FailureTarget")
                        set_cond(st, "Failed", "True", c["reason"], c["message"])
                        s.record_event(None, job, "Warning", c["reason"], c["message"],
                                       COMPONENT)
                    else:
                        set_cond(st, "Complete", "True", "CompletionsReached",
                                 "Reached expected number of succeeded pods")
                        st["completionTime"] = now()
                        s.record_event(None, job, "Normal", "Completed", "Job completed",
                                       COMPONENT)
                    finished = True
            elif suspended:
                for p in active:
                    self._delete_pod(job, p, ignore=True)
                active = []
                if not is_true(st, "Suspended"):
                    set_cond(st, "Suspended", "True", "JobSuspended", "Job suspended")
                    s.record_event(None, job, "Normal", "Suspended", "Job suspended", COMPONENT)
                st.pop("startTime", None)
            else:
                if is_true(st, "Suspended"):
                    set_cond(st, "Suspended", "False", "JobResumed", "Job resumed")
                    s.record_event(None, job, "Normal", "Resumed", "Job resumed", COMPONENT)
                if not st.get("startTime"):
                    st["startTime"] = now()
                want = min(parallelism, completions - st.get("succeeded", 0))
                if spec.get("podReplacementPolicy") == "Failed":
                    have = len(active) + len(terminating)
                else:
                    have = len(active)
                lf = self.last_fail.get(uid)
                nfail = st.get("failed", 0)
                delay = 0 if nfail == 0 else min(self.backoff_base * (2 ** (nfail - 1)), 360)
                if lf is not None and time.monotonic() - lf < delay:
                    want = have
                for _ in range(max(0, want - have)):
                    p = self._create_pod(job)
                    if p is not None:
                        active.append(p)
        st["active"] = len(active) if not finished or not is_true(st, "Failed") else 0
        if finished:
            st["active"] = 0
        st["terminating"] = len(terminating)
        st["ready"] = sum(1 for p in active if any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in (p.get("status") or {}).get("conditions") or []))
        st.setdefault("uncountedTerminatedPods", {})
        if st["uncountedTerminatedPods"] == {}:
            del st["uncountedTerminatedPods"]
        for k in ("active", "succeeded", "failed"):
            if st.get(k) == 0:
                del st[k]
        if st != before:
            s.update_status(JOBS, ns, name, st)
        for p in pods:
            if p["metadata"]["uid"] in counted:
                self._drop_tracking(p)
        if finished:
            for p in pods:
                if p["metadata"]["uid"] not in counted and \
                        ((p.get("status") or {}).get("phase") in ("Succeeded", "Failed") or
                         p["metadata"].get("deletionTimestamp")):
                    self._drop_tracking(p)
            self._ttl(job, st)

    def _count_terminated(self, job, pods, st, counted):
        """Accounts terminated pods in st (succeeded, failed) and counted: the
        job-tracking finalizer keeps them until counted."""
        md = job["metadata"]
        ns, name, uid = md["namespace"], md["name"], md["uid"]
        for p in pods:
            puid = p["metadata"]["uid"]
            phase = (p.get("status") or {}).get("phase")
            if puid in counted:
                self._drop_tracking(p)
                continue
            if puid in self.ignored:
                if phase in ("Succeeded", "Failed") or p["metadata"].get("deletionTimestamp"):
                    self._drop_tracking(p)
                continue
            if phase == "Succeeded":
                st["succeeded"] = st.get("succeeded", 0) + 1
                counted.add(puid)
            elif self._failed(job, p) and (phase == "Failed" or
                                           p["metadata"].get("deletionTimestamp")):
                st["failed"] = st.get("failed", 0) + 1
                counted.add(puid)
                self.last_fail[uid] = time.monotonic()
                self.timed.add((ns, name))

    def _ttl(self, job, st):
        ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
        if ttl is None or job["metadata"].get("deletionTimestamp"):
            return
        c = cond(st, "Complete") or cond(st, "Failed")
        if not c or c.get("status") != "True":
            return
        if time.time() - ts(c["lastTransitionTime"]) >= ttl:
            md = job["metadata"]
            try:
                self.store.delete(JOBS, md["namespace"], md["name"], None, "Foreground")
            except ApiError:
                pass

    def _create_pod(self, job):
        md = job["metadata"]
        tmpl = deepcopy((job.get("spec") or {}).get("template") or {})
        pmd = tmpl.get("metadata") or {}
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "generateName": md["name"] + "-", "namespace": md["namespace"],
            "labels": dict(pmd.get("labels") or {}),
            "annotations": dict(pmd.get("annotations") or {}),
            "finalizers": [TRACKING],
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": md["name"],
                                 "uid": md["uid"], "controller": True,
                                 "blockOwnerDeletion": True}]},
            "spec": tmpl.get("spec") or {}}
        if not pod["metadata"]["annotations"]:
            del pod["metadata"]["annotations"]
        try:
            p = self.store.create("pods", md["namespace"], pod)
        except ApiError as e:
            self.store.record_event(None, job, "Warning", "FailedCreate",
                                    "Error creating: %s" % e.message, COMPONENT)
            return None
        self.store.record_event(None, job, "Normal", "SuccessfulCreate",
                                "Created pod: %s" % p["metadata"]["name"], COMPONENT)
        return p
