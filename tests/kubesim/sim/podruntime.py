"""Pod runtime: one pod sandbox = a network namespace with a veth into the
host namespace's bridge, plus a podinit process (sim/podinit.py) that is pid 1
of the pod's PID namespace and starts the containers.

Everything created on the host is recorded under DIR/state/node so that
cleanup() can undo it after a crash of the daemon:
  sandboxes/<n>.json   {"netns", "pids": [[pid, starttime]], "uid"}
  created.json         host paths created as mount points (removed at down,
                       shared between instances through /run/kubesim-created)
"""
import asyncio
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import signal
import subprocess
import sys

log = logging.getLogger("kubesim.node")

PODINIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "podinit.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
# Mount points kubesim creates on the host may be shared by several instances (root or
# not): each user leaves a marker file here; the last one removes the path.
REGISTRY = "/tmp/.kubesim-created"


def starttime(pid):
    """Start time (clock ticks since boot) of pid, or None if it does not exist."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
    except OSError:
        return None
    return int(s[s.rindex(")") + 2:].split()[19])


def children(pid):
    """Host pids of the children of pid."""
    out = []
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def ns_pid(hostpid):
    """The pid of hostpid inside its innermost PID namespace."""
    try:
        with open("/proc/%d/status" % hostpid) as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
    except OSError:
        pass
    return None


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f)
    os.replace(path + ".tmp", path)


def read_json(path, default=None):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


async def run(*argv, check=True):
    p = await asyncio.create_subprocess_exec(*argv, stdin=subprocess.DEVNULL,
                                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out, _ = await p.communicate()
    if check and p.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(argv), out.decode(errors="replace").strip()))
    return p.returncode, out.decode(errors="replace")


# ---- host paths created as mount points ------------------------------------------
class HostPaths:
    """Creates missing mount points on the host and remembers them for removal."""

    def __init__(self, state_dir, instance):
        self.file = os.path.join(state_dir, "node", "created.json")
        self.instance = instance
        self.paths = read_json(self.file, [])

    def ensure(self, path, is_file):
        """Create path (and missing parents) if absent; record what was created, and
        register as a user of components another kubesim instance created. Under the
        registry lock: instances start pods and go down concurrently."""
        with registry_lock():
            self._ensure(path, is_file)

    def _ensure(self, path, is_file):
        comps = []
        p = path
        while p != "/":
            comps.append(p)
            p = os.path.dirname(p)
        changed = False
        for q in reversed(comps):
            if os.path.lexists(q):
                if q not in self.paths and os.path.isdir(_entry(q)):
                    self._register(q)      # created by another instance: we use it too
                    self.paths.append(q)
                    changed = True
                continue
            self._register(q)
            if q == path and is_file:
                open(q, "a").close()
            else:
                os.mkdir(q, 0o755)
            if q not in self.paths:
                self.paths.append(q)
            changed = True
        if changed:
            write_json(self.file, self.paths)

    def _register(self, p):
        if not os.path.isdir(REGISTRY):
            os.makedirs(REGISTRY, exist_ok=True)
            try:
                os.chmod(REGISTRY, 0o1777)
            except PermissionError:
                pass
        d = _entry(p)
        if not os.path.isdir(d):
            os.makedirs(d, exist_ok=True)
            try:
                os.chmod(d, 0o1777)
            except PermissionError:
                pass
        open(os.path.join(d, self.instance), "a").close()


@contextlib.contextmanager
def registry_lock():
    """Serialises every instance's checks and changes of the shared mount points."""
    path = REGISTRY + ".lock"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _entry(p):
    return os.path.join(REGISTRY, hashlib.sha1(p.encode()).hexdigest())


def remove_created(state_dir, instance):
    """Remove the mount points this instance created unless another instance uses them."""
    with registry_lock():
        _remove_created(state_dir, instance)


def _remove_created(state_dir, instance):
    f = os.path.join(state_dir, "node", "created.json")
    paths = read_json(f, [])
    for p in sorted(paths, key=lambda x: -x.count("/")):
        d = _entry(p)
        try:
            os.unlink(os.path.join(d, instance))
        except OSError:
            pass
        try:
            others = os.listdir(d)
        except OSError:
            others = []
        if others:
            continue
        try:
            os.rmdir(d)
        except OSError:
            pass
        try:
            if os.path.isdir(p) and not os.path.islink(p):
                os.rmdir(p)
            elif os.path.isfile(p) and os.path.getsize(p) == 0:
                os.unlink(p)
        except OSError as e:
            log.warning("cannot remove %s: %s", p, e)
    try:
        os.rmdir(REGISTRY)
    except OSError:
        pass
    try:
        os.unlink(f)
    except OSError:
        pass


# ---- sandbox -----------------------------------------------------------------------
class Sandbox:
    """Network namespace + podinit of one pod."""

    def __init__(self, config, index, uid, hostname, pod_dir, on_event):
        self.config = config
        self.index = index
        self.uid = uid
        self.hostname = hostname
        self.pod_dir = pod_dir
        self.on_event = on_event           # callback(msg dict) for podinit events
        prefix = config.netns[:-1] if config.netns else None   # "ks-XXXXXXXX-"
        self.netns = "%sp%d" % (prefix, index) if prefix else None
        self.veth = "vp%d" % index
        self.ip = "10.250.%d.%d" % (1 + (index - 1) // 254, 1 + (index - 1) % 254) \
            if config.netns else "127.0.0.1"
        self.hosts_file = os.path.join(pod_dir, "hosts")
        self.tmp_dir = os.path.join(pod_dir, "tmp")
        self.proc = None
        self.inner = None                  # host pid of the pod's pid 1
        self.record = os.path.join(config.state_dir, "node", "sandboxes", "%d.json" % index)
        self.ready = asyncio.get_event_loop().create_future()
        self.dead = False
        self._reader = None

    def _save(self):
        pids = []
        for p in (self.proc.pid if self.proc else None, self.inner):
            if p:
                st = starttime(p)
                if st is not None:
                    pids.append([p, st])
        write_json(self.record, {"netns": self.netns, "uid": self.uid, "pids": pids})

    async def create(self):
        os.makedirs(self.tmp_dir, exist_ok=True)
        self._save()
        if self.netns:
            h = self.config.netns
            await run("ip", "netns", "add", self.netns)
            await run("ip", "link", "add", "eth0", "netns", self.netns, "type", "veth",
                      "peer", "name", self.veth, "netns", h)
            await run("ip", "-n", h, "link", "set", self.veth, "master",
                      self.config.bridge, "up")
            p = await asyncio.create_subprocess_exec(
                "ip", "-n", self.netns, "-batch", "-", stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            out, _ = await p.communicate(("addr add %s/16 dev eth0\nlink set eth0 up\n"
                                          "link set lo up\n" % self.ip).encode())
            if p.returncode != 0:
                raise RuntimeError("ip -n %s: %s" % (self.netns, out.decode().strip()))
        netns_path = "/run/netns/" + self.netns if self.netns else "-"
        errlog = open(os.path.join(self.pod_dir, "podinit.log"), "ab")
        try:
            self.proc = await asyncio.create_subprocess_exec(
                PYTHON, "-I", "-S", PODINIT, netns_path, self.hostname, self.hosts_file,
                self.tmp_dir, "kubesim:" + self.config.dir,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog,
                env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}, limit=1 << 20)
        finally:
            errlog.close()
        self._save()
        self._reader = asyncio.ensure_future(self._read())
        msg = await asyncio.wait_for(asyncio.shield(self.ready), 30)
        if msg.get("ev") != "ready":
            raise RuntimeError("pod init failed: %s" % msg.get("msg"))
        for _ in range(100):
            kids = children(self.proc.pid)
            if kids:
                self.inner = kids[0]
                break
            await asyncio.sleep(0.01)
        self._save()

    async def _read(self):
        try:
            while True:
                line = await self.proc.stdout.readline()
                if not line:
                    break
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if msg.get("ev") in ("ready", "fatal") and not self.ready.done():
                    self.ready.set_result(msg)
                    continue
                try:
                    self.on_event(msg)
                except Exception:
                    log.exception("pod event handler failed")
        finally:
            self.dead = True
            if not self.ready.done():
                self.ready.set_result({"ev": "fatal", "msg": "pod init exited"})
            try:
                self.on_event({"ev": "sandbox-exited"})
            except Exception:
                log.exception("pod event handler failed")

    def send(self, msg):
        if self.proc is None or self.dead or self.proc.stdin.is_closing():
            return False
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        return True

    def container_hostpid(self, nspid):
        """Host pid of the pod process whose pid in the pod is nspid (a container's main process)."""
        if not self.inner:
            return None
        for k in children(self.inner):
            if ns_pid(k) == nspid:
                return k
        return None

    def pod_processes(self):
        """Host pids of every process in the pod's PID namespace (except pid 1)."""
        out = []
        if not self.inner:
            return out
        try:
            target = os.readlink("/proc/%d/ns/pid" % self.inner)
        except OSError:
            return out
        for d in os.listdir("/proc"):
            if not d.isdigit() or int(d) == self.inner:
                continue
            try:
                if os.readlink("/proc/%s/ns/pid" % d) == target:
                    out.append(int(d))
            except OSError:
                pass
        return out

    async def destroy(self):
        """Kill every process of the pod and delete its network namespace."""
        if self.proc is not None and self.proc.returncode is None:
            for p in (self.inner, self.proc.pid):
                if p:
                    try:
                        os.kill(p, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except asyncio.TimeoutError:
                log.warning("pod init %d did not exit", self.proc.pid)
        if self._reader:
            try:
                await asyncio.wait_for(self._reader, 5)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                pass
        if self.netns:
            await run("ip", "netns", "del", self.netns, check=False)
        try:
            os.unlink(self.record)
        except OSError:
            pass


def cleanup_sandboxes(config):
    """Crash-safe teardown: kill recorded pod processes, delete this instance's pod netns."""
    d = os.path.join(config.state_dir, "node", "sandboxes")
    try:
        names = os.listdir(d)
    except OSError:
        names = []
    for n in names:
        rec = read_json(os.path.join(d, n), {})
        for pid, st in rec.get("pids", []):
            if starttime(pid) == st:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    if config.netns:
        prefix = config.netns[:-1] + "p"
        r = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL)
        for line in r.stdout.decode().splitlines():
            name = line.split()[0] if line.split() else ""
            if name.startswith(prefix) and name[len(prefix):].isdigit():
                subprocess.run(["ip", "netns", "del", name], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    for n in names:
        try:
            os.unlink(os.path.join(d, n))
        except OSError:
            pass
