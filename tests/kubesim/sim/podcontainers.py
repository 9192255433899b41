"""A pod's containers, as the kubelet runs them: ContainerRun (one container's runtime
state) and PodWorker's container part: the image pull (imagePullPolicy against the image
map or the local store), podinit's start request (env, command, mounts, user, the image's
root filesystem and a writable layer per run), start and exit, restartPolicy with the
crash-loop back-off, and stopping a container (SIGTERM, grace period, SIGKILL)."""
import asyncio
import hashlib
import logging
import os
import pwd
import shutil
import signal
import subprocess
import time

from . import volumes
from .images import STORE, ImageError, full_ref, layer_mounts, passwd_entry
from .imagestore import Image
from .rfc3339 import rfc3339
from .volumes import ConfigError

log = logging.getLogger("kubesim.kubelet")
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


class WorkerContainers:
    """PodWorker's containers (a part of sim/kubelet.py's PodWorker; self is the worker)."""

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
        uid, gid, groups, base = self.container_user(c, img, imgdir, sc)
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
        mounts += self.volume_mounts(c, spec, env)
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

    def container_user(self, c, img, imgdir, sc):
        """uid, gid, supplementary groups and base environment of c: from its image's
        config and files when it runs in its image's root (with the kubelet's runAsNonRoot
        checks), else from securityContext and the host's or a mapped image's passwd."""
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
        return uid, gid, groups, base

    def volume_mounts(self, c, spec, env):
        """The bind mounts of c's volumeMounts (hostPath, or the pod's volume directory;
        subPath made and resolved)."""
        mounts = []
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
        return mounts

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
