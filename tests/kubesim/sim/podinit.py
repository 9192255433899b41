"""podinit: the init process (pid 1) of one kubesim pod.

Run by the kubelet (sim/podruntime.py) as
    /usr/bin/python3 -I -S podinit.py NETNS_PATH HOSTNAME HOSTS_FILE TMP_DIR
with fd 0/1 being the control channel (JSON lines in, JSON lines out).

The outer process joins the pod's network namespace, unshares mount, UTS,
IPC and PID namespaces and forks the inner process, which is pid 1 of the
new PID namespace. Both die with their parent (PR_SET_PDEATHSIG), so a dead
kubesim daemon takes its pods with it; killing pid 1 kills the whole pod.

pid 1 sets the hostname, makes its mounts private, mounts a fresh /proc,
/sys, private tmpfs /tmp and /dev/shm, binds the pod's hosts file on
/etc/hosts, and then serves requests:
  {"op":"start","id":C,"argv":[...],"env":{...},"cwd":D,"uid":U,"gid":G,
   "mounts":[{"src":S,"dst":D,"ro":bool}],"log":FILE}
      -> {"ev":"started","id":C,"pid":P,"t":TIME} | {"ev":"startfail","id":C,"msg":M,"t":TIME}
      container exit -> {"ev":"exited","id":C,"status":EXIT|-SIG,"t":TIME}
  {"op":"signal","id":C,"sig":N[,"main":true]}  signal the container's process
                                     group (or only its main process)
  {"op":"sigall","sig":N}            signal every process of the pod except pid 1
  {"op":"ping"} -> {"ev":"pong"}
It reaps every orphan. Container stdout/stderr go to the container's log
file in CRI format ("TIME stdout F line").
"""
import ctypes
import errno
import json
import os
import selectors
import signal
import sys
import warnings  # noqa: F401  (os.execvpe imports it; after pivot_root the host's stdlib is gone)

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG = 1

POD_TMP = None
libc = ctypes.CDLL(None, use_errno=True)
MAX_LINE = 16 * 1024


def _check(rc, what):
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, "%s: %s" % (what, os.strerror(e)))


def mount(src, dst, fstype, flags, data=None):
    _check(libc.mount(src.encode() if src else None, dst.encode(),
                      fstype.encode() if fstype else None, ctypes.c_ulong(flags),
                      data.encode() if data else None), "mount %s" % dst)


def _load_rfc3339():
    """sim/rfc3339.py's formatter, loaded by path: podinit runs alone (python3 -I -S), and
    putting sim/ on sys.path would let its modules (selectors, exec...) shadow the stdlib's."""
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rfc3339.py")
    spec = importlib.util.spec_from_file_location("kubesim_rfc3339", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.rfc3339


rfc3339 = _load_rfc3339()


def now():
    return rfc3339(digits=9)


def log(msg):
    sys.stderr.write("podinit: %s\n" % msg)
    sys.stderr.flush()


class Container:
    def __init__(self, cid, pid, logf):
        self.id = cid
        self.pid = pid
        self.logf = logf
        self.partial = {}


class Init:
    def __init__(self, ctl_in, ctl_out):
        self.ctl_in = ctl_in
        self.ctl_out = ctl_out
        self.sel = selectors.DefaultSelector()
        self.inbuf = b""
        self.containers = {}   # id -> Container (latest run)
        self.by_pid = {}       # pid -> Container
        self.pipes = {}        # fd -> (Container, stream)

    def send(self, msg):
        data = (json.dumps(msg) + "\n").encode()
        while data:
            try:
                n = os.write(self.ctl_out, data)
            except InterruptedError:
                continue
            except BrokenPipeError:
                os._exit(0)
            data = data[n:]

    # ---- containers ----
    def start(self, req):
        cid = req["id"]
        outr, outw = os.pipe()
        errr, errw = os.pipe()
        rep_r, rep_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rep_r)
            try:
                self.child(req, outw, errw)
            except BaseException as e:  # report and die; never return into the loop
                msg = str(e) if not isinstance(e, OSError) or not e.filename else \
                    "%s: %s" % (e.filename, e.strerror)
                try:
                    os.write(rep_w, msg.encode()[:4000])
                finally:
                    os._exit(128)
        os.close(outw)
        os.close(errw)
        os.close(rep_w)
        err = b""
        while True:
            try:
                chunk = os.read(rep_r, 4096)
            except InterruptedError:
                continue
            if not chunk:
                break
            err += chunk
        os.close(rep_r)
        try:
            logf = open(req["log"], "ab", buffering=0)
        except OSError as e:
            log("cannot open log %s: %s" % (req["log"], e))
            logf = open(os.devnull, "ab", buffering=0)
        c = Container(cid, pid, logf)
        self.by_pid[pid] = c
        for fd, stream in ((outr, "stdout"), (errr, "stderr")):
            os.set_blocking(fd, False)
            self.pipes[fd] = (c, stream)
            self.sel.register(fd, selectors.EVENT_READ, "pipe")
        if err:
            c.failed = True
            self.send({"ev": "startfail", "id": cid, "msg": err.decode(errors="replace"), "t": now()})
        else:
            c.failed = False
            self.containers[cid] = c
            self.send({"ev": "started", "id": cid, "pid": pid, "t": now()})

    def child(self, req, outw, errw):
        for s in (signal.SIGCHLD, signal.SIGPIPE, signal.SIGINT, signal.SIGTERM,
                  signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
            signal.signal(s, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        os.setsid()
        _check(libc.unshare(CLONE_NEWNS), "unshare mount namespace")
        if req.get("rootfs"):
            enter_rootfs(req["rootfs"], req.get("mounts", []))
        else:
            self.host_mounts(req)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(outw, 1)
        os.dup2(errw, 2)
        cwd = req.get("cwd") or "/"
        os.makedirs(cwd, exist_ok=True)
        os.chdir(cwd)
        gid = req.get("gid")
        uid = req.get("uid")
        if gid is not None:
            os.setgroups(req.get("groups") or [gid])
            os.setgid(gid)
        if uid is not None:
            if gid is None:
                os.setgroups([])
            os.setuid(uid)
        argv = req["argv"]
        env = req.get("env", {})
        try:
            os.execvpe(argv[0], argv, env)
        except FileNotFoundError:
            raise RuntimeError('exec: "%s": executable file not found in $PATH' % argv[0])
        except PermissionError:
            raise RuntimeError('exec: "%s": permission denied' % argv[0])

    def host_mounts(self, req):
        """A container without an image root: the host's filesystem with the pod's /tmp and
        the container's mounts."""
        hostfd = None
        if POD_TMP:
            hostfd = os.open("/tmp", os.O_PATH | os.O_DIRECTORY)
            mount(POD_TMP, "/tmp", None, MS_BIND)
        for m in req.get("mounts", []):
            src, dst = m["src"], m["dst"]
            if hostfd is not None and (src == "/tmp" or src.startswith("/tmp/")):
                src = "/proc/self/fd/%d%s" % (hostfd, src[4:])
            if os.path.isdir(src):
                os.makedirs(dst, exist_ok=True)
            elif not os.path.exists(dst):
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                open(dst, "a").close()
            mount(src, dst, None, MS_BIND | MS_REC)
            if m.get("ro"):
                # keep the flags a user namespace may not drop (nosuid, nodev, noexec)
                fl = os.statvfs(dst).f_flag
                keep = (MS_NOSUID if fl & os.ST_NOSUID else 0) | \
                    (MS_NODEV if fl & os.ST_NODEV else 0) | (MS_NOEXEC if fl & os.ST_NOEXEC else 0)
                mount(None, dst, None, MS_BIND | MS_REMOUNT | MS_RDONLY | keep)
        if hostfd is not None:
            os.close(hostfd)

    def read_pipe(self, fd):
        c, stream = self.pipes[fd]
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        buf = c.partial.get(stream, b"") + data
        if not data:
            self.sel.unregister(fd)
            os.close(fd)
            del self.pipes[fd]
            if buf:
                self.write_log(c, stream, buf, "F")
            c.partial.pop(stream, None)
            return False
        lines = buf.split(b"\n")
        rest = lines.pop()
        out = []
        ts = now().encode()
        for ln in lines:
            while len(ln) > MAX_LINE:
                out.append(b"%s %s P %s\n" % (ts, stream.encode(), ln[:MAX_LINE]))
                ln = ln[MAX_LINE:]
            out.append(b"%s %s F %s\n" % (ts, stream.encode(), ln))
        while len(rest) > MAX_LINE:
            out.append(b"%s %s P %s\n" % (ts, stream.encode(), rest[:MAX_LINE]))
            rest = rest[MAX_LINE:]
        c.partial[stream] = rest
        if out:
            try:
                c.logf.write(b"".join(out))
            except OSError:
                pass
        return True

    def write_log(self, c, stream, data, tag):
        try:
            c.logf.write(b"%s %s %s %s\n" % (now().encode(), stream.encode(), tag.encode(), data))
        except OSError:
            pass

    def flush_partials(self, c):
        for stream, rest in list(c.partial.items()):
            if rest:
                self.write_log(c, stream, rest, "P")
            c.partial[stream] = b""

    def reap(self):
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            except InterruptedError:
                continue
            if pid == 0:
                return
            c = self.by_pid.pop(pid, None)
            if c is None or c.failed:
                continue
            # drain what is already in the pipes so the log is complete
            for fd in [f for f, (cc, _) in self.pipes.items() if cc is c]:
                while fd in self.pipes and self.read_pipe(fd):
                    pass
            self.flush_partials(c)
            if os.WIFEXITED(status):
                code = os.WEXITSTATUS(status)
            elif os.WIFSIGNALED(status):
                code = -os.WTERMSIG(status)
            else:
                continue
            self.send({"ev": "exited", "id": c.id, "pid": pid, "status": code, "t": now()})

    def handle(self, req):
        op = req.get("op")
        if op == "start":
            self.start(req)
        elif op == "signal":
            c = self.containers.get(req["id"])
            if c is None:
                return
            targets = [c.pid] if req.get("main") else [-c.pid, c.pid]
            for target in targets:
                if target == c.pid and c.pid not in self.by_pid:
                    continue     # reaped: the pid may belong to someone else now
                try:
                    os.kill(target, req["sig"])
                except (ProcessLookupError, PermissionError):
                    pass
        elif op == "sigall":
            try:
                os.kill(-1, req["sig"])
            except ProcessLookupError:
                pass
        elif op == "ping":
            self.send({"ev": "pong", "t": now()})

    def read_ctl(self):
        try:
            data = os.read(self.ctl_in, 65536)
        except InterruptedError:
            return
        if not data:
            # kubelet went away: end the pod
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os._exit(0)
        self.inbuf += data
        while b"\n" in self.inbuf:
            line, self.inbuf = self.inbuf.split(b"\n", 1)
            if line.strip():
                try:
                    self.handle(json.loads(line))
                except Exception as e:  # a bad request must not end the pod
                    log("request failed: %r: %s" % (line[:200], e))
                    try:
                        req = json.loads(line)
                        if req.get("op") == "start":
                            self.send({"ev": "startfail", "id": req.get("id"), "msg": str(e), "t": now()})
                    except Exception:
                        pass

    def loop(self):
        wr, ww = os.pipe()
        os.set_blocking(wr, False)
        os.set_blocking(ww, False)
        signal.set_wakeup_fd(ww)
        signal.signal(signal.SIGCHLD, lambda s, f: None)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        self.sel.register(wr, selectors.EVENT_READ, "wake")
        self.sel.register(self.ctl_in, selectors.EVENT_READ, "ctl")
        self.send({"ev": "ready", "t": now()})
        while True:
            for key, _ in self.sel.select(5.0):
                if key.data == "wake":
                    try:
                        while os.read(wr, 512):
                            pass
                    except BlockingIOError:
                        pass
                elif key.data == "ctl":
                    self.read_ctl()
                elif key.data == "pipe" and key.fd in self.pipes:
                    self.read_pipe(key.fd)
            self.reap()


def resolve_in(root, path):
    """path inside root, following symlinks as if root were / (never leaving root);
    components that do not exist are appended as they are."""
    parts = [p for p in path.split("/") if p and p != "."]
    cur = []
    hops = 0
    while parts:
        p = parts.pop(0)
        if p == "..":
            if cur:
                cur.pop()
            continue
        full = os.path.join(root, *cur, p)
        if os.path.islink(full):
            hops += 1
            if hops > 40:
                raise OSError(errno.ELOOP, "too many levels of symbolic links", path)
            target = os.readlink(full)
            if target.startswith("/"):
                cur = []
            parts = [x for x in target.split("/") if x and x != "."] + parts
            continue
        cur.append(p)
    return os.path.join(root, *cur)


def _bind(src, dst, ro=False, rec=True):
    if os.path.isdir(src):
        os.makedirs(dst, exist_ok=True)
    elif not os.path.exists(dst):
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        open(dst, "a").close()
    mount(src, dst, None, MS_BIND | (MS_REC if rec else 0))
    if ro:
        # keep the flags a user namespace may not drop (nosuid, nodev, noexec)
        fl = os.statvfs(dst).f_flag
        keep = (MS_NOSUID if fl & os.ST_NOSUID else 0) | \
            (MS_NODEV if fl & os.ST_NODEV else 0) | (MS_NOEXEC if fl & os.ST_NOEXEC else 0)
        mount(None, dst, None, MS_BIND | MS_REMOUNT | MS_RDONLY | keep)


SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "ppc64le": 203, "s390x": 217}


def enter_rootfs(rootfs, mounts):
    """Make the image's root filesystem the container's root (this process has its own
    mount namespace): an overlay of the image's root (read-only lower) and the container's
    writable layer, with /proc, /dev, /sys, /dev/shm (the pod's) and the container's
    mounts (volumes, /etc/hosts, resolv.conf, termination log) inside, then pivot_root."""
    d = rootfs["dir"]
    merged = os.path.join(d, "merged")
    mount("overlay", merged, "overlay", 0, "lowerdir=%s,upperdir=%s,workdir=%s"
          % (rootfs["lower"], os.path.join(d, "upper"), os.path.join(d, "work")))
    proc = resolve_in(merged, "/proc")
    os.makedirs(proc, exist_ok=True)
    mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    dev = resolve_in(merged, "/dev")
    os.makedirs(dev, exist_ok=True)
    mount("tmpfs", dev, "tmpfs", MS_NOSUID, "mode=755,size=65536k")
    for n in ("null", "zero", "full", "random", "urandom", "tty"):
        _bind("/dev/" + n, os.path.join(dev, n), rec=False)
    os.makedirs(os.path.join(dev, "pts"))
    mount("devpts", os.path.join(dev, "pts"), "devpts", MS_NOSUID | MS_NOEXEC,
          "newinstance,ptmxmode=0666,mode=0620")
    os.symlink("pts/ptmx", os.path.join(dev, "ptmx"))
    for i, n in enumerate(("stdin", "stdout", "stderr")):
        os.symlink("/proc/self/fd/%d" % i, os.path.join(dev, n))
    os.symlink("/proc/self/fd", os.path.join(dev, "fd"))
    if os.path.isdir("/dev/shm"):
        _bind("/dev/shm", os.path.join(dev, "shm"), rec=False)
    sysd = resolve_in(merged, "/sys")
    if os.path.isdir("/sys"):
        _bind("/sys", sysd, ro=True)
    for m in mounts:
        _bind(m["src"], resolve_in(merged, m["dst"]), ro=bool(m.get("ro")))
    os.chdir(merged)
    nr = SYS_PIVOT_ROOT.get(os.uname().machine)
    if nr is None:
        raise OSError(errno.ENOSYS, "pivot_root: unknown syscall number on " + os.uname().machine)
    _check(libc.syscall(nr, b".", b"."), "pivot_root")
    _check(libc.umount2(b".", MNT_DETACH), "umount old root")
    os.chdir("/")


def setup_pid1(hostname, hosts_file, tmp_dir):
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    try:
        _check(libc.umount2(b"/sys", MNT_DETACH), "umount /sys")
        mount("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError as e:
        log("sysfs: %s" % e)
    h = hostname.encode()
    _check(libc.sethostname(h, len(h)), "sethostname")
    if hosts_file and os.path.exists("/etc/hosts"):
        mount(hosts_file, "/etc/hosts", None, MS_BIND)
    if os.path.isdir("/dev/shm"):
        mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    # An image's root has Debian's stock shell start-up files, not the host's: the
    # host's ~/.bashrc (sourced by bash for every ssh command) may run slow tools.
    for rc in (".bashrc", ".profile"):
        skel, own = "/etc/skel/" + rc, "/root/" + rc
        if os.path.isfile(skel) and os.path.isfile(own):
            try:
                mount(skel, own, None, MS_BIND)
            except OSError as e:
                log("%s: %s" % (own, e))
    # The pod's private /tmp: a tmpfs mounted (in this namespace only) on the
    # pod's state dir; each container binds it on /tmp in its own mount
    # namespace, after its volumes (whose sources usually live under the
    # host's /tmp, where kubesim's DIR is).
    if tmp_dir:
        mount("tmpfs", tmp_dir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")


def enter_user_namespace():
    """Without root: a user namespace where we are root (uid 0 = our uid), so the pod still
    gets its own mount, UTS, IPC and PID namespaces; it shares the host's network."""
    uid, gid = os.geteuid(), os.getegid()
    _check(libc.unshare(CLONE_NEWUSER), "unshare user namespace")
    for f, text in (("setgroups", "deny"), ("uid_map", "0 %d 1" % uid), ("gid_map", "0 %d 1" % gid)):
        with open("/proc/self/" + f, "w") as fh:
            fh.write(text)


def main():
    netns, hostname, hosts_file, tmp_dir = sys.argv[1:5]
    global POD_TMP
    POD_TMP = tmp_dir
    ppid = os.getppid()
    _check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl")
    if os.getppid() != ppid:
        os._exit(1)
    # control channel away from 0/1, which become /dev/null
    ctl_in = os.dup(0)
    ctl_out = os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    if netns and netns != "-":
        fd = os.open(netns, os.O_RDONLY)
        _check(libc.setns(fd, CLONE_NEWNET), "setns net")
        os.close(fd)
    if os.geteuid() != 0:
        enter_user_namespace()
    _check(libc.unshare(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID), "unshare")
    pid = os.fork()
    if pid == 0:
        _check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl")
        try:

            setup_pid1(hostname, hosts_file, tmp_dir)
        except Exception as e:
            log("setup failed: %s" % e)
            msg = json.dumps({"ev": "fatal", "msg": str(e)}) + "\n"
            os.write(ctl_out, msg.encode())
            os._exit(1)
        Init(ctl_in, ctl_out).loop()
        os._exit(0)
    os.close(ctl_in)
    os.close(ctl_out)
    signal.signal(signal.SIGTERM, lambda s, f: os.kill(pid, signal.SIGKILL))
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


if __name__ == "__main__":
    main()
