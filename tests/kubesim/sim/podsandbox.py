"""A pod's sandbox, as the kubelet sets it up: the volumes (retried until they can be
made), podinit's sandbox (sim/podruntime.py: network namespace, veth, pid 1; retried with
back-off, re-created when podinit dies), the pod's own /etc/hosts, /etc/hostname and
/etc/resolv.conf, configMap/secret volumes re-projected when their sources change, and
podinit's events handed to the containers waiting for them."""
import asyncio
import logging
import os

from . import volumes
from .podcontainers import Terminated
from .podruntime import Sandbox
from .rfc3339 import rfc3339
from .volumes import ConfigError, VolumeError

log = logging.getLogger("kubesim.kubelet")


class WorkerSandbox:
    """PodWorker's sandbox (a part of sim/kubelet.py's PodWorker; self is the worker)."""

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
        # as a real pod's resolver: "<host>.<subdomain>" through the default search list's
        # "<ns>.svc.cluster.local" (same namespace only), the bare host name only through a
        # dnsConfig search "<subdomain>.<ns>.svc.cluster.local" (docs/kubesim.md)
        searches = (self.pod["spec"].get("dnsConfig") or {}).get("searches") or []
        for ip, names, (host, sub, ns) in entries:
            if ip != self.ip:
                names = list(names) + (["%s.%s" % (host, sub)] if ns == self.ns else []) + \
                    ([host] if "%s.%s.svc.cluster.local" % (sub, ns) in searches else [])
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
