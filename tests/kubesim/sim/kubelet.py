"""The node side of kubesim: Node objects, the scheduler, and a kubelet that runs
every bound pod as real processes (sim/podruntime.py, sim/podinit.py).

One PodWorker per pod: sandbox (netns, veth, hostname, /etc/hosts, podinit),
volumes, init containers in order, then the containers with restartPolicy and
back-off, readiness/liveness probes, termination with SIGTERM, grace period,
SIGKILL, and the pod's status and events. Exec and logs are served by
sim/exec.py and sim/logs.py from the worker's state.
"""
import asyncio
import hashlib
import logging
import os
import platform
import pwd
import shutil
import signal
import subprocess
import time

from . import podruntime, volumes
from .images import STORE, ImageError, ImageMap, full_ref, layer_mounts, passwd_entry
from .imagestore import Image, ImageStore
from .podruntime import HostPaths, Sandbox
from .rfc3339 import rfc3339
from .scheduler import Scheduler, pod_ref
from .volumes import ConfigError, VolumeError

log = logging.getLogger("kubesim.kubelet")
COMPONENT = "kubelet"
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
MAX_BACKOFF = 300.0
PRIVATE_PREFIXES = ("/tmp", "/dev/shm")


def _under(path, prefixes):
    return any(path == p or path.startswith(p + "/") for p in prefixes)


class Terminated(Exception):
    """The pod is being terminated; container loops stop."""


class SandboxLost(Exception):
    """The pod's sandbox (podinit) died; the pod worker recreates it."""


class ContainerRun:
    """Runtime state of one container of a pod."""

    def __init__(self, spec, init):
        self.spec = spec
        self.name = spec["name"]
        self.init = init
        self.restart_count = 0
        self.state = {"waiting": {"reason": "PodInitializing" if not init else "PodInitializing"}}
        self.last_state = {}
        self.ready = False
        self.started = False
        self.running = False
        self.done = False          # terminated and will not be restarted
        self.nspid = None
        self._hostpid = None
        self.container_id = None
        self.image_id = ""
        self.env = {}
        self.cwd = "/"
        self.uid = None
        self.gid = None
        self.start_future = None
        self.exit_future = None
        self.started_mono = 0.0
        self.backoff = 0.0
        self.probe_tasks = []
        self.log_file = None
        self.term_file = None
        self.ever_ran = False
        self.rootfs = None         # per-run dir of the writable layer (image from the store)
        self.run_of = {}           # containerID -> run number (its log is <run>.log)


class PodWorker:
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

    def hostpid(self, c):
        """Host pid of container c's main process (enters its namespaces for exec)."""
        if not c.running or self.sandbox is None:
            return None
        if c._hostpid is None or podruntime.starttime(c._hostpid) is None:
            c._hostpid = self.sandbox.container_hostpid(c.nspid)
        return c._hostpid

    # ---- status ----------------------------------------------------------------
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

    # ---- lifecycle -------------------------------------------------------------
    def start(self):
        self.main_task = asyncio.ensure_future(self.run())

    async def setup_retrying(self):
        """setup(), retried with back-off when the sandbox cannot be created."""
        delay = 1.0
        while True:
            try:
                await self.setup()
                return
            except (Terminated, asyncio.CancelledError):
                raise
            except Exception as e:
                log.exception("sandbox of %s/%s", self.ns, self.name)
                self.event("Warning", "FailedCreatePodSandBox",
                           "Failed to create pod sandbox: %s" % e)
                sb, self.sandbox = self.sandbox, None
                self.sandbox_ready = False
                if sb is not None:
                    await sb.destroy()
                await asyncio.sleep(delay)
                delay = min(delay * 2, 30)

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

    async def recreate_sandbox(self):
        """podinit died under us (killed from outside): like a kubelet whose sandbox
        vanished, kill what is left, then start a new sandbox and re-run the init
        containers, unless restartPolicy is Never (the pod fails)."""
        self.event("Normal", "SandboxChanged",
                   "Pod sandbox changed, it will be killed and re-created.")
        sb, self.sandbox = self.sandbox, None
        self.sandbox_ready = False
        for c in self.all_containers():
            self.stop_probes(c)
            c.running = False
            c.ready = False
        if sb is not None:
            await sb.destroy()
        self.k.hosts_changed()
        if self.pod["spec"].get("restartPolicy", "Always") == "Never":
            for c in self.mains:
                c.done = True
            self.mark()
            await self.finish()
            return
        for c in self.inits:
            c.done = False
        self.init_done = not self.inits
        await asyncio.sleep(0.5)

    async def setup(self):
        """Volumes (retried until they can be set up), then the sandbox."""
        os.makedirs(self.dir, exist_ok=True)
        delay = 1.0
        while True:
            try:
                self.setup_volumes()
                break
            except VolumeError as e:
                self.event("Warning", "FailedMount",
                           'MountVolume.SetUp failed for volume "%s" : %s' % e.args)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 30)
        index = self.k.alloc_index()
        self.sandbox = Sandbox(self.k.config, index, self.uid, self.hostname, self.dir,
                               self.on_sandbox_event)
        self.ip = self.sandbox.ip
        self.write_hosts(self.k.hosts_entries())
        self.write_pod_files()
        await self.sandbox.create()
        self.sandbox_ready = True
        self.start_time = rfc3339()
        self.mark()
        self.k.hosts_changed()

    def setup_volumes(self):
        pod = self.cur_pod()
        for v in pod["spec"].get("volumes") or []:
            d = os.path.join(self.dir, "volumes", v["name"])
            try:
                files = volumes.volume_files(self.store, self.k.config, pod, v)
            except VolumeError as e:
                raise VolumeError(v["name"], str(e))
            if files is not None:
                volumes.write_atomic(d, files)
            elif "emptyDir" in v:
                os.makedirs(d, mode=0o777, exist_ok=True)
                os.chmod(d, 0o777)
            elif "hostPath" in v:
                hp = v["hostPath"]
                t = hp.get("type", "")
                if t == "DirectoryOrCreate":
                    os.makedirs(hp["path"], exist_ok=True)
                elif t == "FileOrCreate" and not os.path.exists(hp["path"]):
                    open(hp["path"], "a").close()
                elif t in ("Directory", "File") and not os.path.exists(hp["path"]):
                    raise VolumeError(v["name"], "hostPath type check failed: %s is not a %s"
                                      % (hp["path"], t.lower()))
            else:
                raise VolumeError(v["name"], "kubesim does not support volume source %s" %
                                  ",".join(k for k in v if k != "name"))

    def refresh_volumes(self):
        """Re-project configMap/secret/downwardAPI volumes after their sources changed."""
        if self.gone or not self.sandbox_ready:
            return
        pod = self.cur_pod()
        for v in pod["spec"].get("volumes") or []:
            try:
                files = volumes.volume_files(self.store, self.k.config, pod, v)
            except (VolumeError, ConfigError):
                continue
            if files is not None:
                volumes.write_atomic(os.path.join(self.dir, "volumes", v["name"]), files)

    def write_pod_files(self):
        """/etc/hostname and /etc/resolv.conf of containers that run in their image's root
        (containers on the host's filesystem keep the host's). There is no cluster DNS:
        resolv.conf names the API server's address, where nothing answers DNS, so a name
        that /etc/hosts lacks fails at once, as with an unreachable cluster DNS."""
        with open(os.path.join(self.dir, "hostname"), "w") as f:
            f.write(self.hostname + "\n")
        with open(os.path.join(self.dir, "resolv.conf"), "w") as f:
            f.write("search %s.svc.cluster.local svc.cluster.local cluster.local\n"
                    "nameserver %s\noptions ndots:5\n" % (self.ns, self.k.config.api_host))

    def write_hosts(self, entries):
        own = "%s\t%s" % (self.ip or "127.0.1.1", self.hostname)
        if self.subdomain:
            own = "%s\t%s.%s.%s.svc.cluster.local\t%s" % (self.ip or "127.0.1.1", self.hostname,
                                                          self.subdomain, self.ns, self.hostname)
        lines = ["# Kubernetes-managed hosts file (kubesim).",
                 "127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback",
                 "fe00::0\tip6-localnet", "fe00::0\tip6-mcastprefix", "fe00::1\tip6-allnodes",
                 "fe00::2\tip6-allrouters", own, "", "# kubesim DNS stand-in",
                 "%s\tkubernetes.default.svc.cluster.local kubernetes.default.svc "
                 "kubernetes.default kubernetes" % self.k.config.api_host]
        for ip, names in entries:
            if ip != self.ip:
                lines.append("%s\t%s" % (ip, " ".join(names)))
        text = "\n".join(lines) + "\n"
        p = os.path.join(self.dir, "hosts")
        try:
            with open(p, "r") as f:
                if f.read() == text:
                    return
        except OSError:
            pass
        fd = os.open(p, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            os.ftruncate(fd, 0)
            os.write(fd, text.encode())
        finally:
            os.close(fd)

    async def container_loop(self, c):
        policy = self.pod["spec"].get("restartPolicy", "Always")
        while True:
            code = await self.run_once(c)
            if self.sandbox is None or self.sandbox.dead:
                raise SandboxLost()
            if code is None:
                continue        # image/config problem, already backed off
            if policy == "Always" or (policy == "OnFailure" and code != 0):
                await self.crash_backoff(c)
                continue
            c.done = True
            self.mark()
            return

    async def crash_backoff(self, c):
        """Wait the crash-loop back-off before restarting c (CrashLoopBackOff)."""
        if self.terminating:
            raise Terminated()
        base = float(self.k.config.extra.get("crash_backoff", 10))
        ran = time.monotonic() - c.started_mono
        if ran > 2 * MAX_BACKOFF:
            c.backoff = 0.0
        delay = c.backoff
        c.backoff = base if c.backoff == 0 else min(c.backoff * 2, MAX_BACKOFF)
        wait = c.started_mono + delay - time.monotonic()
        if wait > 0:
            msg = "back-off %s restarting failed container=%s pod=%s_%s(%s)" % (
                _dur(delay), c.name, self.name, self.ns, self.uid)
            c.last_state = {"terminated": c.state.get("terminated")} \
                if "terminated" in c.state else c.last_state
            c.state = {"waiting": {"reason": "CrashLoopBackOff", "message": msg}}
            self.mark()
            self.event("Warning", "BackOff", "Back-off restarting failed container %s in pod "
                       "%s_%s(%s)" % (c.name, self.name, self.ns, self.uid), self.field_path(c))
            await asyncio.sleep(wait)
        if self.terminating:
            raise Terminated()

    def pull(self, c):
        """Resolve c's image; returns the PATH prefix dir (None = host), or the Image from
        the local store, or raises ImageError."""
        image = c.spec.get("image", "")
        d, c.image_root = self.k.images.resolve_full(image)
        c.image_entrypoint = self.k.images.entrypoint(image)
        if d == STORE:
            img = self.k.image_store.lookup(image)
            if img is None:
                ref = full_ref(image)
                if c.spec.get("imagePullPolicy") == "Never":
                    e = ImageError('Container image "%s" is not present with pull policy of '
                                   'Never' % image)
                    e.reason = "ErrImageNeverPull"
                    raise e
                raise ImageError('rpc error: code = NotFound desc = failed to pull and unpack '
                                 'image "%s": failed to resolve reference "%s": kubesim has '
                                 'no registry and %s has no such image (build it: make images, '
                                 'buildah bud)' % (ref, ref, self.k.image_store.root))
            c.image_id = img.image_id()
            return img
        c.image_id = full_ref(image).rsplit(":", 1)[0] + "@sha256:" + \
            hashlib.sha256(image.encode()).hexdigest()
        return d

    async def run_once(self, c):
        """Pull, create and start c, wait for it to exit. Returns the exit code, or None if
        it could not start (image/config error, after back-off)."""
        if self.terminating:
            raise Terminated()
        image = c.spec.get("image", "")
        try:
            imgdir = self.pull(c)
        except ImageError as e:
            if e.reason == "ErrImageNeverPull":
                c.state = {"waiting": {"reason": e.reason, "message": str(e)}}
                self.mark()
                self.event("Warning", "ErrImageNeverPull", str(e), self.field_path(c))
                self.event("Warning", "Failed", "Error: ErrImageNeverPull", self.field_path(c))
                base = float(self.k.config.extra.get("image_backoff", 10))
                c.backoff = base if c.backoff == 0 else min(c.backoff * 2, MAX_BACKOFF)
                await asyncio.sleep(c.backoff)
                return None
            self.event("Normal", "Pulling", 'Pulling image "%s"' % image, self.field_path(c))
            self.event("Warning", "Failed", 'Failed to pull image "%s": %s' % (image, e),
                       self.field_path(c))
            self.event("Warning", "Failed", "Error: ErrImagePull", self.field_path(c))
            c.state = {"waiting": {"reason": "ErrImagePull", "message": str(e)}}
            self.mark()
            await asyncio.sleep(1.0)
            base = float(self.k.config.extra.get("image_backoff", 10))
            c.backoff = base if c.backoff == 0 else min(c.backoff * 2, MAX_BACKOFF)
            c.state = {"waiting": {"reason": "ImagePullBackOff",
                                   "message": 'Back-off pulling image "%s"' % image}}
            self.mark()
            self.event("Normal", "BackOff", 'Back-off pulling image "%s"' % image,
                       self.field_path(c))
            self.event("Warning", "Failed", "Error: ImagePullBackOff", self.field_path(c))
            await asyncio.sleep(c.backoff)
            return None
        pol = c.spec.get("imagePullPolicy", "IfNotPresent")
        if pol == "Always":
            t0 = time.monotonic()
            self.event("Normal", "Pulling", 'Pulling image "%s"' % image, self.field_path(c))
            ms = max(1, int((time.monotonic() - t0) * 1000))
            size = 0
            if isinstance(imgdir, Image):
                size = imgdir.size()
            self.event("Normal", "Pulled", 'Successfully pulled image "%s" in %dms (%dms '
                       'including waiting). Image size: %d bytes.' % (image, ms, ms, size),
                       self.field_path(c))
        else:
            self.event("Normal", "Pulled", 'Container image "%s" already present on machine'
                       % image, self.field_path(c))
        try:
            req = self.container_request(c, imgdir)
        except (ConfigError, OSError) as e:
            # OSError: e.g. a host path that cannot be made a mount point; kubelet reports, retries
            reason = "CreateContainerConfigError" if isinstance(e, ConfigError) \
                else "CreateContainerError"
            c.state = {"waiting": {"reason": reason, "message": str(e)}}
            self.mark()
            self.event("Warning", "Failed", "Error: %s" % e, self.field_path(c))
            await asyncio.sleep(2.0)
            return None
        loop = asyncio.get_event_loop()
        c.start_future = loop.create_future()
        c.exit_future = loop.create_future()
        c.container_id = "containerd://" + hashlib.sha256(
            ("%s/%s/%d/%f" % (self.uid, c.name, c.restart_count, time.time())).encode()).hexdigest()
        if c.ever_ran:
            c.restart_count += 1
            req["log"] = self.log_path(c, c.restart_count)
        c.run_of[c.container_id] = c.restart_count
        self.event("Normal", "Created", "Created container %s" % c.name, self.field_path(c))
        if self.sandbox is None or not self.sandbox.send(req):
            raise Terminated() if self.terminating else SandboxLost()
        c.started_mono = time.monotonic()
        c.ever_ran = True
        if "terminated" in c.state:
            c.last_state = {"terminated": c.state["terminated"]}
        msg = await c.start_future
        if msg["ev"] == "startfail":
            c.running = False
            err = msg.get("msg", "")
            text = ("failed to create containerd task: failed to create shim task: OCI runtime "
                    "create failed: runc create failed: unable to start container process: "
                    "error during container init: %s: unknown" % err)
            self._set_terminated(c, 128, "StartError", text, msg.get("t"), msg.get("t"))
            self.event("Warning", "Failed", "Error: %s" % text, self.field_path(c))
            self.mark()
            return 128
        c.nspid = msg["pid"]
        c._hostpid = None
        c.running = True
        started_at = _ts(msg.get("t"))
        c.state = {"running": {"startedAt": started_at}}
        c.ready = False
        c.started = not c.spec.get("startupProbe")
        self.event("Normal", "Started", "Started container %s" % c.name, self.field_path(c))
        self.start_probes(c)
        self.mark()
        ex = await c.exit_future
        self.stop_probes(c)
        c.running = False
        c.ready = False
        status = ex.get("status", 0)
        code = status if status >= 0 else 128 - status
        # the container's other processes go with it (a runtime kills its pid namespace)
        self.sandbox.send({"op": "signal", "id": c.name, "sig": signal.SIGKILL})
        reason = "Completed" if code == 0 else "Error"
        msg_text = self.termination_message(c, code)
        self._set_terminated(c, code, reason, msg_text, started_at, _ts(ex.get("t")))
        self.mark()
        return code

    def _set_terminated(self, c, code, reason, message, started, finished):
        t = {"exitCode": code, "reason": reason, "startedAt": _ts(started),
             "finishedAt": _ts(finished), "containerID": c.container_id}
        if message:
            t["message"] = message
        if c.state.get("terminated"):
            c.last_state = {"terminated": c.state["terminated"]}
        c.state = {"terminated": t}

    def termination_message(self, c, code):
        text = ""
        try:
            with open(c.term_file, "rb") as f:
                text = f.read(4096).decode(errors="replace")
        except (OSError, TypeError):
            pass
        if not text and code != 0 and \
                c.spec.get("terminationMessagePolicy") == "FallbackToLogsOnError":
            lines = []
            try:
                with open(c.log_file, "rb") as f:
                    for ln in f.read().splitlines()[-80:]:
                        parts = ln.split(b" ", 3)
                        if len(parts) == 4:
                            lines.append(parts[3].decode(errors="replace"))
            except (OSError, TypeError):
                pass
            text = "\n".join(lines)[-2048:]
        return text

    def log_path(self, c, n):
        return os.path.join(self.dir, "logs", c.name, "%d.log" % n)

    def image_layer(self, c, root):
        """A fresh private copy of the image's files for this container run (its
        writable layer, ownership kept) and the bind mounts laying it over the host."""
        copy = os.path.join(self.dir, "rootfs", c.name)
        if os.path.lexists(copy):
            shutil.rmtree(copy)
        os.makedirs(os.path.dirname(copy), exist_ok=True)
        r = subprocess.run(["cp", "-a", root, copy], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        if r.returncode != 0:
            raise OSError("copying the image files %s: %s" % (root, r.stdout.decode(errors="replace")))
        return [{"src": s, "dst": d, "ro": False} for s, d in layer_mounts(root, copy)]

    def container_request(self, c, imgdir):
        pod = self.cur_pod()
        spec = pod["spec"]
        sc = dict(spec.get("securityContext") or {})
        sc.update(c.spec.get("securityContext") or {})
        img = imgdir if isinstance(imgdir, Image) else None
        groups = None
        if img is not None:
            if os.geteuid() != 0:
                raise ConfigError("kubesim runs containers in their image's filesystem only "
                                  "as root (image %s)" % c.spec.get("image"))
            try:
                uid, gid, home, groups = img.user(sc.get("runAsUser"), sc.get("runAsGroup"))
            except ImageError as e:
                raise ConfigError(str(e))
            if sc.get("runAsNonRoot") and sc.get("runAsUser") is None:
                # the kubelet's verifyRunAsNonRoot, on the image's USER
                iu = (img.config.get("User") or "").partition(":")[0]
                ref = '(pod: "%s_%s(%s)", container: %s)' % (self.name, self.ns, self.uid, c.name)
                if iu and not iu.isdigit():
                    raise ConfigError("container has runAsNonRoot and image has non-numeric user "
                                      "(%s), cannot verify user is non-root %s" % (iu, ref))
                if uid == 0:
                    raise ConfigError("container has runAsNonRoot and image will run as root %s"
                                      % ref)
            elif sc.get("runAsNonRoot") and uid == 0:
                raise ConfigError("container's runAsUser breaks non-root policy "
                                  '(pod: "%s_%s(%s)", container: %s)'
                                  % (self.name, self.ns, self.uid, c.name))
            base = {"PATH": DEFAULT_PATH}
            base.update(img.env())
            base["HOSTNAME"] = self.hostname
            base.setdefault("HOME", home)
        else:
            uid = sc.get("runAsUser")
            gid = sc.get("runAsGroup")
            img_root = getattr(c, "image_root", None)
            img_user = passwd_entry(img_root, uid if uid is not None else 0) if img_root else None
            if uid is not None and gid is None:
                try:
                    gid = img_user[1] if img_user else pwd.getpwuid(uid).pw_gid
                except KeyError:
                    gid = uid
            try:
                home = img_user[2] if img_user else pwd.getpwuid(uid if uid is not None else 0).pw_dir
            except KeyError:
                home = "/"
            base = {"PATH": (imgdir + ":" if imgdir else "") + DEFAULT_PATH,
                    "HOSTNAME": self.hostname, "HOME": home}
        port = self.k.config.api_port
        host = self.k.config.api_host
        base.update({
                "KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": str(port),
                "KUBERNETES_SERVICE_PORT_HTTPS": str(port),
                "KUBERNETES_PORT": "tcp://%s:%d" % (host, port),
                "KUBERNETES_PORT_%d_TCP" % port: "tcp://%s:%d" % (host, port),
                "KUBERNETES_PORT_%d_TCP_PROTO" % port: "tcp",
                "KUBERNETES_PORT_%d_TCP_PORT" % port: str(port),
                "KUBERNETES_PORT_%d_TCP_ADDR" % port: host})
        env = volumes.container_env(self.store, pod, c.spec, base, self.k.allocatable)
        command = [volumes.expand(a, env) for a in c.spec.get("command") or []]
        args = [volumes.expand(a, env) for a in c.spec.get("args") or []]
        if img is not None:
            argv = img.argv(command, args)
            if not argv:
                raise ConfigError("no command specified: image %s has neither Entrypoint nor "
                                  "Cmd, and the container sets no command"
                                  % c.spec.get("image"))
        else:
            # a mapped image's Entrypoint (images.conf entrypoint=), if any, as Kubernetes
            # runs a real image's: command replaces it, args alone follow it
            ep = getattr(c, "image_entrypoint", None)
            argv = command + args if command or not ep else ep + args
            if not argv:
                raise ConfigError("no command specified: kubesim images have no entrypoint; "
                                  "set command")
        img_root = getattr(c, "image_root", None) if img is None else None
        mounts = self.image_layer(c, img_root) if img_root else []
        vols = {v["name"]: v for v in spec.get("volumes") or []}
        for vm in c.spec.get("volumeMounts") or []:
            v = vols.get(vm.get("name"))
            if v is None:
                raise ConfigError('cannot find volume "%s" to mount into container "%s"'
                                  % (vm.get("name"), c.name))
            if "hostPath" in v:
                src = v["hostPath"]["path"]
            else:
                src = os.path.join(self.dir, "volumes", v["name"])
            if vm.get("subPath"):
                src = os.path.join(src, volumes.expand(vm["subPath"], env))
                if not os.path.lexists(src) and "hostPath" not in v:
                    os.makedirs(src, exist_ok=True)
                src = os.path.realpath(src)
            mounts.append({"src": src, "dst": vm["mountPath"], "ro": bool(vm.get("readOnly"))})
        n = c.restart_count + (1 if c.ever_ran else 0)
        c.log_file = self.log_path(c, n)
        os.makedirs(os.path.dirname(c.log_file), exist_ok=True)
        tdir = os.path.join(self.dir, "term")
        os.makedirs(tdir, exist_ok=True)
        c.term_file = os.path.join(tdir, "%s-%d" % (c.name, n))
        with open(c.term_file, "wb"):
            pass
        os.chmod(c.term_file, 0o666)
        tpath = c.spec.get("terminationMessagePath") or "/dev/termination-log"
        mounts.append({"src": c.term_file, "dst": tpath, "ro": False})
        if img is not None:
            return self.image_request(c, img, n, argv, env, mounts, uid, gid, groups)
        # Images resolve into the repository (images.conf), which stays on the host's
        # filesystem; a checkout under /tmp would be hidden by the pod's private /tmp.
        root = self.k.config.repo_root
        if _under(root, PRIVATE_PREFIXES):
            mounts.append({"src": root, "dst": root, "ro": False})
        mounts.sort(key=lambda m: m["dst"].rstrip("/").count("/"))
        kept = []
        for m in mounts:
            if not _under(m["dst"], PRIVATE_PREFIXES):
                try:
                    self.k.host_paths.ensure(m["dst"], os.path.isfile(m["src"]))
                except PermissionError:
                    if os.geteuid() == 0:
                        raise
                    # without root the host path cannot be created: say so, go on
                    self.event("Warning", "FailedMount", "kubesim (not root): cannot create "
                               "mount point %s on the host; not mounted" % m["dst"],
                               self.field_path(c))
                    continue
            kept.append(m)
        mounts = kept
        cwd = c.spec.get("workingDir") or "/"
        if not _under(cwd, PRIVATE_PREFIXES) and not os.path.exists(cwd):
            self.k.host_paths.ensure(cwd, False)
        if os.geteuid() != 0 and uid not in (None, 0):
            self.event("Warning", "Failed", "kubesim (not root): runAsUser %s ignored" % uid,
                       self.field_path(c))
            uid = gid = None
        c.env, c.cwd, c.uid, c.gid, c.rootfs = env, cwd, uid, gid, None
        return {"op": "start", "id": c.name, "argv": argv, "env": env, "cwd": cwd,
                "uid": uid, "gid": gid, "mounts": mounts, "log": c.log_file}

    def image_request(self, c, img, n, argv, env, mounts, uid, gid, groups):
        """Start request of a container that runs in its image's root filesystem: an
        overlay (podinit) of the image's root and a writable layer of its own for this run
        (DIR/node/pods/<uid>/rootfs/<container>-<run>; the previous run's is kept, older
        ones removed), with /etc/hosts, /etc/hostname, /etc/resolv.conf and the mounts
        bound inside it. Mount points are made in the writable layer, never on the host."""
        rdir = os.path.join(self.dir, "rootfs")
        for old in os.listdir(rdir) if os.path.isdir(rdir) else []:
            name, _, run = old.rpartition("-")
            if name == c.name and run.isdigit() and int(run) < n - 1:
                shutil.rmtree(os.path.join(rdir, old), ignore_errors=True)
        d = os.path.join(rdir, "%s-%d" % (c.name, n))
        shutil.rmtree(d, ignore_errors=True)
        for sub in ("upper", "work", "merged"):
            os.makedirs(os.path.join(d, sub))
        etc = [{"src": self.sandbox.hosts_file if self.sandbox else
                os.path.join(self.dir, "hosts"), "dst": "/etc/hosts", "ro": False},
               {"src": os.path.join(self.dir, "hostname"), "dst": "/etc/hostname", "ro": False},
               {"src": os.path.join(self.dir, "resolv.conf"), "dst": "/etc/resolv.conf",
                "ro": False}]
        mounts = sorted(etc + mounts, key=lambda m: m["dst"].rstrip("/").count("/"))
        cwd = c.spec.get("workingDir") or img.config.get("WorkingDir") or "/"
        c.env, c.cwd, c.uid, c.gid, c.rootfs = env, cwd, uid, gid, d
        return {"op": "start", "id": c.name, "argv": argv, "env": env, "cwd": cwd,
                "uid": uid, "gid": gid, "groups": groups, "mounts": mounts, "log": c.log_file,
                "rootfs": {"lower": img.rootfs, "dir": d}}

    def on_sandbox_event(self, msg):
        ev = msg.get("ev")
        c = self.container(msg.get("id") or "")
        if ev in ("started", "startfail") and c and c.start_future and not c.start_future.done():
            c.start_future.set_result(msg)
        elif ev == "exited" and c and c.exit_future and not c.exit_future.done():
            c.exit_future.set_result(msg)
        elif ev == "sandbox-exited":
            for c in self.all_containers():
                for f in (c.start_future, c.exit_future):
                    if f and not f.done():
                        f.set_result({"ev": "exited", "status": -9, "t": None}
                                     if f is c.exit_future else
                                     {"ev": "startfail", "msg": "pod sandbox exited"})

    # ---- probes ----------------------------------------------------------------
    def start_probes(self, c):
        for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
            pr = c.spec.get(kind)
            if pr:
                c.probe_tasks.append(asyncio.ensure_future(self.probe_loop(c, kind, pr)))
        if not c.spec.get("readinessProbe") and not c.spec.get("startupProbe"):
            c.ready = True
        elif not c.spec.get("readinessProbe"):
            c.ready = False

    def stop_probes(self, c):
        for t in c.probe_tasks:
            t.cancel()
        c.probe_tasks = []

    async def probe_loop(self, c, kind, pr):
        from . import probes
        await asyncio.sleep(float(pr.get("initialDelaySeconds", 0)))
        period = float(pr.get("periodSeconds", 10))
        ok_n = fail_n = 0
        succ = int(pr.get("successThreshold", 1))
        fail = int(pr.get("failureThreshold", 3))
        while c.running:
            if kind != "startupProbe" and not c.started:
                await asyncio.sleep(0.2)
                continue
            if self.paused:
                await asyncio.sleep(0.5)
                continue
            ok, out = await probes.run_probe(self, c, pr)
            if ok:
                ok_n, fail_n = ok_n + 1, 0
            else:
                ok_n, fail_n = 0, fail_n + 1
                what = {"readinessProbe": "Readiness", "livenessProbe": "Liveness",
                        "startupProbe": "Startup"}[kind]
                self.event("Warning", "Unhealthy", "%s probe failed: %s" % (what, out.strip()),
                           self.field_path(c))
            if kind == "readinessProbe":
                if ok and ok_n >= succ and not c.ready:
                    c.ready = True
                    self.mark()
                elif not ok and fail_n >= fail and c.ready:
                    c.ready = False
                    self.mark()
            elif kind == "startupProbe":
                if ok:
                    c.started = True
                    if not c.spec.get("readinessProbe"):
                        c.ready = True
                    self.mark()
                    return
                if fail_n >= fail:
                    await self.restart_unhealthy(c, "startup")
                    return
            elif kind == "livenessProbe" and not ok and fail_n >= fail:
                await self.restart_unhealthy(c, "liveness")
                return
            await asyncio.sleep(period)

    async def restart_unhealthy(self, c, what):
        self.event("Normal", "Killing", "Container %s failed %s probe, will be restarted"
                   % (c.name, what), self.field_path(c))
        await self.stop_container(c, self.grace())

    # ---- termination -----------------------------------------------------------
    def grace(self):
        p = self.cur_pod()
        g = p["metadata"].get("deletionGracePeriodSeconds")
        if g is None:
            g = p["spec"].get("terminationGracePeriodSeconds", 30)
        return max(0, int(g))

    async def stop_container(self, c, grace):
        if not c.running:
            return
        self.sandbox.send({"op": "signal", "id": c.name, "sig": signal.SIGTERM, "main": True})
        try:
            await asyncio.wait_for(asyncio.shield(c.exit_future), max(grace, 0.001))
        except asyncio.TimeoutError:
            self.sandbox.send({"op": "signal", "id": c.name, "sig": signal.SIGKILL})
            try:
                await asyncio.wait_for(asyncio.shield(c.exit_future), 10)
            except asyncio.TimeoutError:
                log.warning("container %s of %s/%s did not die", c.name, self.ns, self.name)

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


def _dur(s):
    s = int(s)
    if s >= 60:
        return "%dm%ds" % (s // 60, s % 60) if s % 60 else "%dm0s" % (s // 60)
    return "%ds" % s


def _ts(t):
    """podinit's nanosecond timestamp -> RFC3339 seconds (what the API shows)."""
    if not t:
        return rfc3339()
    return t[:19] + "Z"


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
        """[(ip, names)] for pods with hostname+subdomain matching a headless service."""
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
            out.append((w.ip, [fq + ".cluster.local", fq, "%s.%s" % (w.hostname, w.subdomain),
                               w.hostname]))
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
