"""A pod's status as the kubelet reports it: the phase from its containers' states, the
conditions (PodReadyToStartContainers, Initialized, Ready, ContainersReady, PodScheduled
kept from the scheduler) with their transition times, the container statuses, pod and
host IPs; written with Store.update_status at most once per loop turn (mark, then flush)."""
import asyncio
import logging

from .rfc3339 import rfc3339

log = logging.getLogger("kubesim.kubelet")


class WorkerStatus:
    """PodWorker's status (a part of sim/kubelet.py's PodWorker; self is the worker)."""

    def mark(self):
        if self._dirty or self.gone:
            return
        self._dirty = True
        asyncio.get_event_loop().call_soon(self.flush)

    def _cond(self, type_, ok, reason=None, message=None):
        prev = self.conditions.get(type_)
        status = "True" if ok else "False"
        if prev and prev.get("status") == status and prev.get("reason") == reason and \
                prev.get("message") == message:
            return prev
        c = {"type": type_, "status": status, "lastProbeTime": None,
             "lastTransitionTime": prev["lastTransitionTime"] if prev and
             prev.get("status") == status else rfc3339()}
        if reason:
            c["reason"] = reason
        if message:
            c["message"] = message
        self.conditions[type_] = c
        return c

    def compute_phase(self):
        if self.init_failed:
            return "Failed"
        if not self.init_done:
            return "Pending"
        waiting = running = stopped = succeeded = 0
        for c in self.mains:
            if "running" in c.state:
                running += 1
            elif "terminated" in c.state:
                stopped += 1
                if c.state["terminated"].get("exitCode") == 0:
                    succeeded += 1
            elif c.last_state.get("terminated"):
                stopped += 1
                if c.last_state["terminated"].get("exitCode") == 0:
                    succeeded += 1
            else:
                waiting += 1
        policy = self.pod["spec"].get("restartPolicy", "Always")
        if waiting > 0:
            return "Pending"
        if running > 0:
            return "Running"
        if stopped > 0:
            if all(c.done for c in self.mains):
                return "Succeeded" if stopped == succeeded else "Failed"
            if policy == "Always":
                return "Running"
            if stopped == succeeded and policy != "Always":
                return "Succeeded" if all(c.done for c in self.mains) else "Running"
            return "Running"
        return "Pending"

    def container_status(self, c):
        image = c.spec.get("image", "")
        st = {"name": c.name, "image": image, "imageID": c.image_id,
              "ready": bool(c.ready), "restartCount": c.restart_count,
              "state": c.state, "lastState": c.last_state,
              "started": bool(c.started) if not c.init else bool(c.running)}
        if c.container_id:
            st["containerID"] = c.container_id
        return st

    def build_status(self):
        pod = self.cur_pod()
        terminal = self.phase in ("Succeeded", "Failed")
        self._cond("PodReadyToStartContainers", self.sandbox_ready and not terminal)
        if self.init_done:
            self._cond("Initialized", True)
        else:
            pend = [c.name for c in self.inits if "terminated" not in c.state or
                    c.state["terminated"].get("exitCode") != 0]
            self._cond("Initialized", False, "ContainersNotInitialized",
                       "containers with incomplete status: [%s]" % " ".join(pend))
        unready = [c.name for c in self.mains if not c.ready]
        if terminal:
            self._cond("ContainersReady", False, "PodCompleted")
            self._cond("Ready", False, "PodCompleted")
        elif self.paused:
            self._cond("ContainersReady", False, "NodeNotReady" if False else "ContainersNotReady",
                       "containers with unready status: [%s]" % " ".join(
                           c.name for c in self.mains))
            self._cond("Ready", False, "NodeNotReady", None)
        elif unready:
            self._cond("ContainersReady", False, "ContainersNotReady",
                       "containers with unready status: [%s]" % " ".join(unready))
            self._cond("Ready", False, "ContainersNotReady",
                       "containers with unready status: [%s]" % " ".join(unready))
        else:
            self._cond("ContainersReady", True)
            self._cond("Ready", True)
        for c in (pod.get("status") or {}).get("conditions") or []:
            if c.get("type") == "PodScheduled":
                self.conditions["PodScheduled"] = c
        order = ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                 "PodScheduled"]
        conds = [self.conditions[t] for t in order if t in self.conditions]
        st = {"phase": self.phase, "conditions": conds,
              "hostIP": self.k.node_ip, "hostIPs": [{"ip": self.k.node_ip}],
              "qosClass": (pod.get("status") or {}).get("qosClass", "BestEffort")}
        if self.ip:
            st["podIP"] = self.ip
            st["podIPs"] = [{"ip": self.ip}]
        if self.start_time:
            st["startTime"] = self.start_time
        if self.inits:
            st["initContainerStatuses"] = [self.container_status(c) for c in self.inits]
        st["containerStatuses"] = [self.container_status(c) for c in self.mains]
        return st

    def flush(self):
        self._dirty = False
        if self.gone:
            return
        new_phase = self.compute_phase()
        if self.terminating and new_phase not in ("Succeeded", "Failed") and self.finished:
            new_phase = "Failed" if any(
                c.state.get("terminated", {}).get("exitCode", 0) != 0 for c in self.mains) \
                else "Succeeded"
        changed, old_phase = new_phase != self.phase, self.phase
        self.phase = new_phase
        try:
            new = self.store.update_status("pods", self.ns, self.name, self.build_status())
            if changed:
                log.info("pod %s/%s: %s -> %s (resourceVersion %s)", self.ns, self.name, old_phase,
                         new_phase, (new or {}).get("metadata", {}).get("resourceVersion"))
        except Exception as e:
            if getattr(e, "code", None) != 404:
                log.exception("status update for %s/%s", self.ns, self.name)
