"""The node side of kubesim: Node objects, the scheduler, and a kubelet that runs
every bound pod as real processes (sim/podruntime.py, sim/podinit.py).

One PodWorker per pod: sandbox (netns, veth, hostname, /etc/hosts, podinit),
volumes, init containers in order, then the containers with restartPolicy and
back-off, readiness/liveness probes, termination with SIGTERM, grace period,
SIGKILL, and the pod's status and events. The worker's parts live in their own
modules: sim/podsandbox.py (sandbox, volumes, pod files), sim/podcontainers.py
(pull, start, exit, back-off), sim/podprobes.py (probe loops), sim/podlogs.py (log
and termination-message files), sim/podstatus.py (phase, conditions, status writes);
this file keeps the worker's life (run, terminate, kill) and the Kubelet. Exec and
logs are served by sim/exec.py and sim/logs.py from the worker's state.
"""
import asyncio
import hashlib
import logging
import os
import platform
import shutil
import signal
import time

from . import podruntime, volumes
from .images import ImageMap
from .imagestore import ImageStore
from .podcontainers import ContainerRun, SandboxLost, Terminated, WorkerContainers
from .podlogs import WorkerLogs
from .podprobes import WorkerProbes
from .podruntime import HostPaths
from .podsandbox import WorkerSandbox
from .podstatus import WorkerStatus
from .rfc3339 import rfc3339
from .scheduler import Scheduler, pod_ref

log = logging.getLogger("kubesim.kubelet")
COMPONENT = "kubelet"


class PodWorker(WorkerStatus, WorkerSandbox, WorkerContainers, WorkerProbes, WorkerLogs):
    """Runs one pod."""

    def __init__(self, kubelet, pod):
        self.k = kubelet
        self.store = kubelet.store
        self.ns = pod["metadata"]["namespace"]
        self.name = pod["metadata"]["name"]
        self.uid = pod["metadata"]["uid"]
        self.pod = pod
        self.node = pod["spec"]["nodeName"]
        spec = pod["spec"]
        self.hostname = (spec.get("hostname") or self.name)[:63]
        self.subdomain = spec.get("subdomain") or ""
        self.inits = [ContainerRun(c, True) for c in spec.get("initContainers") or []]
        self.mains = [ContainerRun(c, False) for c in spec.get("containers") or []]
        for c in self.mains:
            c.state = {"waiting": {"reason": "PodInitializing" if self.inits else
                                   "ContainerCreating"}}
        for c in self.inits:
            c.state = {"waiting": {"reason": "PodInitializing"}}
        self.dir = os.path.join(kubelet.pods_dir, self.uid)
        self.sandbox = None
        self.ip = None
        self.start_time = None
        self.phase = "Pending"
        self.init_done = not self.inits
        self.init_failed = False
        self.sandbox_ready = False
        self.terminating = False
        self.finished = False
        self.main_task = None
        self.term_task = None
        self.gone = False
        self.paused = False
        self._dirty = False
        self.conds_time = {}
        self.conditions = {}
        for c in pod.get("status", {}).get("conditions") or []:
            if c.get("type") == "PodScheduled":
                self.conditions["PodScheduled"] = c

    # ---- helpers ---------------------------------------------------------------
    def ref(self):
        p = self.store.try_get("pods", self.ns, self.name)
        return pod_ref(p or self.pod)

    def event(self, type_, reason, msg, field=None):
        ref = self.ref()
        if field:
            ref = dict(ref)
            ref["fieldPath"] = field
        try:
            self.store.record_event(self.ns, ref, type_, reason, msg, COMPONENT, self.node)
        except Exception:
            log.exception("event")

    def cur_pod(self):
        p = self.store.try_get("pods", self.ns, self.name)
        if p is not None and p["metadata"]["uid"] == self.uid:
            self.pod = p
        return self.pod

    def field_path(self, c):
        kind = "initContainers" if c.init else "containers"
        return "spec.%s{%s}" % (kind, c.name)

    def all_containers(self):
        return self.inits + self.mains

    def container(self, name):
        for c in self.all_containers():
            if c.name == name:
                return c
        return None

    # ---- lifecycle -------------------------------------------------------------
    def start(self):
        self.main_task = asyncio.ensure_future(self.run())

    async def run(self):
        while True:
            try:
                await self.run_sandbox()
                return
            except SandboxLost:
                if self.terminating or self.gone:
                    return
                await self.recreate_sandbox()
                if self.finished:
                    return
            except (Terminated, asyncio.CancelledError):
                raise
            except Exception as e:
                log.exception("pod %s/%s failed", self.ns, self.name)
                self.event("Warning", "FailedCreatePodSandBox",
                           "Failed to create pod sandbox: %s" % e)
                return

    async def run_sandbox(self):
        """One sandbox's life: setup, init containers in order, then the containers."""
        await self.setup_retrying()
        for c in self.inits:
            if c.done:
                continue
            while True:
                code = await self.run_once(c)
                if self.sandbox is None or self.sandbox.dead:
                    raise SandboxLost()
                if code == 0:
                    c.done = True
                    break
                if self.pod["spec"].get("restartPolicy", "Always") == "Never":
                    self.init_failed = True
                    for m in self.mains:
                        m.state = {"waiting": {"reason": "PodInitializing"}}
                    self.mark()
                    await self.finish()
                    return
                await self.crash_backoff(c)
        self.init_done = True
        for c in self.mains:
            if not c.ever_ran:
                c.state = {"waiting": {"reason": "ContainerCreating"}}
        self.mark()
        tasks = [asyncio.ensure_future(self.container_loop(c)) for c in self.mains
                 if not c.done]
        try:
            await asyncio.gather(*tasks)
        finally:
            for t in tasks:
                t.cancel()
        self.mark()
        await self.finish()

    # ---- termination -----------------------------------------------------------
    def grace(self):
        p = self.cur_pod()
        g = p["metadata"].get("deletionGracePeriodSeconds")
        if g is None:
            g = p["spec"].get("terminationGracePeriodSeconds", 30)
        return max(0, int(g))

    def request_termination(self):
        """The pod got a deletionTimestamp: stop its containers gracefully, then remove it."""
        if self.terminating or self.gone:
            return
        self.terminating = True
        self.term_task = asyncio.ensure_future(self._terminate())

    async def _terminate(self):
        grace = self.grace()
        deadline = time.monotonic() + grace
        running = [c for c in self.all_containers() if c.running]
        for c in running:
            self.event("Normal", "Killing", "Stopping container %s" % c.name, self.field_path(c))
        await asyncio.gather(*[self.stop_container(c, grace) for c in running])
        if self.main_task and not self.main_task.done():
            self.main_task.cancel()
            try:
                await self.main_task
            except (asyncio.CancelledError, Terminated, Exception):
                pass
        del deadline
        for c in self.all_containers():
            c.done = True
            if "waiting" in c.state and c.init is False and c.last_state.get("terminated"):
                c.state = {"terminated": c.last_state["terminated"]}
        self.finished = True
        self.flush()
        await self.teardown()
        self.gone = True
        try:
            self.store.remove("pods", self.ns, self.name)
        except Exception:
            log.exception("remove pod %s/%s", self.ns, self.name)
        self.k.forget(self)

    async def finish(self):
        """All containers are done (pod Succeeded/Failed): stop the sandbox, keep the logs."""
        self.finished = True
        self.flush()
        await self.teardown(keep_logs=True)
        self.flush()

    async def teardown(self, keep_logs=False):
        for c in self.all_containers():
            self.stop_probes(c)
        if self.sandbox is not None:
            sb, self.sandbox_ready = self.sandbox, False
            await sb.destroy()
            self.k.hosts_changed()
        # the containers' writable layers go with the sandbox (their mounts died with it)
        shutil.rmtree(os.path.join(self.dir, "rootfs"), ignore_errors=True)
        if not keep_logs:
            shutil.rmtree(self.dir, ignore_errors=True)

    async def kill_now(self):
        """The pod object is gone (deleted without grace): kill everything at once."""
        if self.gone and self.main_task is None:
            return
        self.gone = True
        for t in (self.main_task, self.term_task):
            if t and not t.done():
                t.cancel()
        for c in self.all_containers():
            self.stop_probes(c)
        if self.sandbox is not None:
            await self.sandbox.destroy()
        shutil.rmtree(self.dir, ignore_errors=True)
        self.k.hosts_changed()
        self.k.forget(self)

    def kill_containers(self):
        for c in self.all_containers():
            if c.running:
                self.sandbox.send({"op": "signal", "id": c.name, "sig": signal.SIGKILL})

    def set_paused(self, paused):
        if self.paused == paused:
            return
        self.paused = paused
        if self.sandbox is not None:
            self.sandbox.send({"op": "sigall", "sig": signal.SIGSTOP if paused
                               else signal.SIGCONT})
        self.mark()


class Kubelet:
    """Node side of the simulator (see INTERFACE.md)."""

    def __init__(self, store, config):
        self.store = store
        self.config = config
        self.images = ImageMap(config.extra.get("images_conf") or
                               os.path.join(config.kubesim_dir, "images.conf"), config.repo_root)
        self.image_store = ImageStore(config.extra.get("image_store"))
        self.pods_dir = os.path.join(config.dir, "node", "pods")
        self.instance = config.netns or hashlib.sha1(config.dir.encode()).hexdigest()[:8]
        self.host_paths = HostPaths(config.state_dir, self.instance)
        self.workers = {}          # uid -> PodWorker
        self.scheduler = Scheduler(store)
        self.node_ip = config.gateway if config.netns else "127.0.0.1"
        self.next_index = 1
        self.exec_drop_after = None
        self.paused_nodes = set()
        self._hosts_pending = False
        self._vol_pending = False
        ncpu = os.cpu_count() or 1
        self.cpu = str(config.extra.get("node_cpu", max(16, ncpu)))
        try:
            with open("/proc/meminfo") as f:
                mem_kb = int(f.readline().split()[1])
        except (OSError, ValueError, IndexError):
            mem_kb = 8 << 20
        self.memory = str(config.extra.get("node_memory", "%dKi" % mem_kb))
        self.allocatable = {"cpu": volumes.quantity(self.cpu),
                            "memory": volumes.quantity(self.memory)}

    # ---- startup / shutdown ----------------------------------------------------
    def start(self):
        cleanup(self.config, quiet=True)     # leftovers of a crashed run in this DIR
        self.host_paths = HostPaths(self.config.state_dir, self.instance)
        os.makedirs(self.pods_dir, exist_ok=True)
        for i in range(int(self.config.nodes or 1)):
            self.create_node("kubesim-node-%d" % i)
        if str(self.config.extra.get("run_pods", "true")).lower() in ("false", "0", "no"):
            log.warning("run_pods=false: pods are never scheduled nor run (API-only benches)")
            return
        self.store.subscribe("pods", self.on_pod)
        self.store.subscribe("services", lambda t, o: self.hosts_changed())
        self.store.subscribe("configmaps", lambda t, o: self.volumes_changed())
        self.store.subscribe("secrets", lambda t, o: self.volumes_changed())
        self.scheduler.start()
        for p in self.store.list("pods"):
            self.on_pod("ADDED", p)

    def node_status(self, name, ready=True):
        cap = {"cpu": self.cpu, "memory": self.memory, "pods": "110",
               "ephemeral-storage": "100Gi", "hugepages-2Mi": "0"}
        if int(self.config.gpus or 0) > 0:
            cap["nvidia.com/gpu"] = str(int(self.config.gpus))
        now = rfc3339()
        try:
            with open("/etc/os-release") as f:
                osimg = dict(l.strip().split("=", 1) for l in f if "=" in l).get(
                    "PRETTY_NAME", "Linux").strip('"')
        except OSError:
            osimg = "Linux"
        def cond(t, ok, reason, msg):
            return {"type": t, "status": ok, "lastHeartbeatTime": now,
                    "lastTransitionTime": now, "reason": reason, "message": msg}
        conds = [cond("MemoryPressure", "False", "KubeletHasSufficientMemory",
                      "kubelet has sufficient memory available"),
                 cond("DiskPressure", "False", "KubeletHasNoDiskPressure",
                      "kubelet has no disk pressure"),
                 cond("PIDPressure", "False", "KubeletHasSufficientPID",
                      "kubelet has sufficient PID available"),
                 cond("Ready", "True", "KubeletReady", "kubelet is posting ready status")
                 if ready else cond("Ready", "Unknown", "NodeStatusUnknown",
                                    "Kubelet stopped posting node status.")]
        return {"capacity": cap, "allocatable": dict(cap), "conditions": conds,
                "addresses": [{"type": "InternalIP", "address": self.node_ip},
                              {"type": "Hostname", "address": name}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "nodeInfo": {"machineID": hashlib.md5(name.encode()).hexdigest(),
                             "systemUUID": hashlib.md5(name.encode()).hexdigest(),
                             "bootID": hashlib.md5(str(time.time()).encode()).hexdigest(),
                             "kernelVersion": platform.release(), "osImage": osimg,
                             "containerRuntimeVersion": "kubesim://0.1",
                             "kubeletVersion": "v1.32.4", "kubeProxyVersion": "",
                             "operatingSystem": "linux", "architecture": "amd64"}}

    def create_node(self, name):
        obj = {"apiVersion": "v1", "kind": "Node",
               "metadata": {"name": name, "labels": {
                   "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                   "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
                   "beta.kubernetes.io/arch": "amd64"},
                   "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
               "spec": {"podCIDR": self.config.pod_cidr, "podCIDRs": [self.config.pod_cidr]}}
        if self.store.try_get("nodes", None, name) is None:
            self.store.create("nodes", None, obj)
        self.store.update_status("nodes", None, name, self.node_status(name))

    async def shutdown(self):
        self.scheduler.stop()
        ws = list(self.workers.values())
        await asyncio.gather(*[w.kill_now() for w in ws], return_exceptions=True)
        cleanup(self.config, quiet=True)

    # ---- pods ------------------------------------------------------------------
    def alloc_index(self):
        i = self.next_index
        self.next_index += 1
        return i

    def is_our_node(self, name):
        return bool(name) and name.startswith("kubesim-node-") and \
            self.store.try_get("nodes", None, name) is not None

    def on_pod(self, etype, pod):
        uid = pod["metadata"].get("uid")
        w = self.workers.get(uid)
        if etype == "DELETED":
            if w is not None:
                asyncio.ensure_future(w.kill_now())
            self.hosts_changed()
            return
        if w is None:
            if not self.is_our_node(pod["spec"].get("nodeName")):
                return
            if pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
                return
            if pod["metadata"].get("deletionTimestamp"):
                self.store.remove("pods", pod["metadata"]["namespace"], pod["metadata"]["name"])
                return
            w = PodWorker(self, pod)
            self.workers[uid] = w
            if pod["spec"]["nodeName"] in self.paused_nodes:
                w.paused = True
            w.start()
            return
        w.pod = pod
        if pod["metadata"].get("deletionTimestamp"):
            if w.finished:
                asyncio.ensure_future(self._remove_finished(w))
            else:
                w.request_termination()

    async def _remove_finished(self, w):
        if w.gone:
            return
        w.gone = True
        await w.teardown()
        try:
            self.store.remove("pods", w.ns, w.name)
        except Exception:
            pass
        self.forget(w)

    def forget(self, w):
        if self.workers.get(w.uid) is w:
            del self.workers[w.uid]

    def worker_for(self, ns, name):
        for w in self.workers.values():
            if w.ns == ns and w.name == name and not w.gone:
                return w
        return None

    # ---- DNS stand-in (/etc/hosts) ---------------------------------------------
    def hosts_entries(self):
        """[(ip, names, (hostname, subdomain, ns))] for pods with hostname+subdomain matching a
        headless service: names are the fully qualified ones; the partial ones (hostname.subdomain,
        the bare hostname) resolve only where a real pod's search list makes them (write_hosts)."""
        out = []
        svcs = {}
        for s in self.store.list("services"):
            if s.get("spec", {}).get("clusterIP") == "None":
                svcs[(s["metadata"]["namespace"], s["metadata"]["name"])] = s
        for w in self.workers.values():
            if w.gone or not w.sandbox_ready or not w.ip or not w.subdomain:
                continue
            s = svcs.get((w.ns, w.subdomain))
            if s is None:
                continue
            sel = s["spec"].get("selector") or {}
            labels = w.pod["metadata"].get("labels") or {}
            if any(labels.get(k) != v for k, v in sel.items()):
                continue
            fq = "%s.%s.%s.svc" % (w.hostname, w.subdomain, w.ns)
            out.append((w.ip, [fq + ".cluster.local", fq], (w.hostname, w.subdomain, w.ns)))
        out.sort()
        return out

    def hosts_changed(self):
        if self._hosts_pending:
            return
        self._hosts_pending = True
        asyncio.get_event_loop().call_later(0.02, self._write_hosts)

    def _write_hosts(self):
        self._hosts_pending = False
        entries = self.hosts_entries()
        for w in list(self.workers.values()):
            if not w.gone and w.sandbox is not None:
                try:
                    w.write_hosts(entries)
                except OSError as e:
                    log.warning("hosts file of %s/%s: %s", w.ns, w.name, e)

    def volumes_changed(self):
        if self._vol_pending:
            return
        self._vol_pending = True
        asyncio.get_event_loop().call_later(0.05, self._refresh_volumes)

    def _refresh_volumes(self):
        self._vol_pending = False
        for w in list(self.workers.values()):
            try:
                w.refresh_volumes()
            except Exception:
                log.exception("volume refresh")

    # ---- exec / logs -----------------------------------------------------------
    async def handle_exec(self, request, ns, name):
        from . import exec as kexec
        return await kexec.handle_exec(self, request, ns, name)

    async def handle_log(self, request, ns, name):
        from . import logs
        return await logs.handle_log(self, request, ns, name)

    # ---- faults ----------------------------------------------------------------
    def kill_containers(self, ns, name):
        w = self.worker_for(ns, name)
        if w is None:
            raise _api_error(400, "BadRequest", 'pod "%s" has no running containers' % name)
        w.kill_containers()
        return "killed"

    async def delete_pod_now(self, ns, name):
        self.store.delete("pods", ns, name, grace_seconds=0)
        return "deleted"

    def set_exec_drop_after(self, nbytes):
        self.exec_drop_after = int(nbytes) if nbytes else None
        return "ok"

    def pause_node(self, node):
        self._set_node_paused(node, True)
        return "paused"

    def unpause_node(self, node):
        self._set_node_paused(node, False)
        return "unpaused"

    def _set_node_paused(self, node, paused):
        if self.store.try_get("nodes", None, node) is None:
            raise _api_error(404, "NotFound", 'nodes "%s" not found' % node)
        if paused:
            self.paused_nodes.add(node)
        else:
            self.paused_nodes.discard(node)

        def f(o):
            o["status"]["conditions"] = self.node_status(node, not paused)["conditions"]
            taints = [t for t in o.setdefault("spec", {}).get("taints") or []
                      if t.get("key") != "node.kubernetes.io/unreachable"]
            if paused:
                taints += [{"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule",
                            "timeAdded": rfc3339()},
                           {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute",
                            "timeAdded": rfc3339()}]
            if taints:
                o["spec"]["taints"] = taints
            else:
                o["spec"].pop("taints", None)
        self.store.mutate("nodes", None, node, f)
        for w in list(self.workers.values()):
            if w.node == node:
                w.set_paused(paused)


def _api_error(code, reason, msg):
    from .errors import ApiError
    return ApiError(code, reason, msg)


def cleanup(config, quiet=False):
    """Idempotent, crash-safe teardown of everything the node side created for config.dir."""
    podruntime.cleanup_sandboxes(config)
    instance = config.netns or hashlib.sha1(config.dir.encode()).hexdigest()[:8]
    podruntime.remove_created(config.state_dir, instance)
    shutil.rmtree(os.path.join(config.dir, "node", "pods"), ignore_errors=True)
