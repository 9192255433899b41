"""pods/exec over WebSocket, as the API server + kubelet speak it (see
shared/reference/exec-protocol.md).

Subprotocols: v5.channel.k8s.io (stdin EOF via [255,0]), v4.channel.k8s.io,
v4.base64.channel.k8s.io, channel.k8s.io, base64.channel.k8s.io; the first one
the client offers wins; none supported -> 403. The server first sends an empty
message on the lowest writable channel, then stdout (1) / stderr (2) messages of
at most 32 KiB, then the status on channel 3 and a close frame 1000. The command
runs in all of the container's namespaces (nsenter) with the container's
environment, working directory and user; killed by signal N -> exit 128+N.
"""
import asyncio
import base64
import json
import logging
import os
import signal
import subprocess
from urllib.parse import parse_qs

from aiohttp import WSMsgType, web

from . import podruntime
from .errors import ApiError

log = logging.getLogger("kubesim.exec")
PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io", "v4.base64.channel.k8s.io",
             "channel.k8s.io", "base64.channel.k8s.io")
CHUNK = 32 * 1024 - 1
DRAIN_AFTER_EXIT = 10.0
READY_DELAY = 0.05  # default of the exec_ready_delay tunable: see ExecSession.ready
# exec streams upgraded and not yet ended (`kubesim stat --dir D exec-streams`), and the most
# open at once since the last `exec-streams-reset`: how many streams clients hold on the server
STREAMS = {"open": 0, "peak": 0}
SESSIONS = set()  # the open exec sessions (fault exec-cut)


def exec_ready_delay(config):
    """Seconds from the upgrade to the readiness message: the exec_ready_delay tunable
    (`--set`/`fault set`, checked there by config.check_seconds, read per exec session),
    READY_DELAY by default."""
    return float(config.extra.get("exec_ready_delay", READY_DELAY))


def qbool(q, name):
    """apimachinery's bool conversion: absent -> False, "0"/"false" -> False, else True."""
    if name not in q:
        return False
    v = q[name][-1]
    return v.lower() not in ("0", "false")


def pick_container(w_or_pod, pod, cname, for_logs=False):
    """The container spec named cname (or the only one), with Kubernetes' 400 wording."""
    spec = pod["spec"]
    name = pod["metadata"]["name"]
    conts = spec.get("containers") or []
    inits = spec.get("initContainers") or []
    if not cname:
        if len(conts) == 1:
            return conts[0]
        msg = "a container name must be specified for pod %s, choose one of: [%s]" % (
            name, " ".join(c["name"] for c in conts))
        if for_logs and inits:
            msg += " or one of the init containers: [%s]" % " ".join(c["name"] for c in inits)
        raise ApiError(400, "BadRequest", msg)
    for c in conts + inits:
        if c["name"] == cname:
            return c
    raise ApiError(400, "BadRequest", "container %s is not valid for pod %s" % (cname, name))


def resolve_exe(root, path_env, cwd, arg0):
    """True if arg0 resolves to an executable inside the container (root = /proc/PID/root)."""
    if "/" in arg0:
        p = arg0 if arg0.startswith("/") else os.path.join(cwd, arg0)
        return os.access(root + p, os.X_OK) and not os.path.isdir(root + p)
    for d in (path_env or "").split(":"):
        if not d:
            continue
        p = os.path.join(d, arg0)
        full = root + (p if p.startswith("/") else os.path.join(cwd, p))
        if os.access(full, os.X_OK) and not os.path.isdir(full):
            return True
    return False


def container_hostpid(w, c):
    """Host pid of container c's main process in pod worker w (exec enters its namespaces)."""
    if not c.running or w.sandbox is None:
        return None
    if c._hostpid is None or podruntime.starttime(c._hostpid) is None:
        c._hostpid = w.sandbox.container_hostpid(c.nspid)
    return c._hostpid


def nsenter_argv(w, c, hostpid, argv):
    """nsenter command line that runs argv in container c's namespaces and working dir."""
    a = ["/usr/bin/nsenter", "-t", str(w.sandbox.inner)] + \
        (["-n"] if os.geteuid() == 0 else ["-U", "--preserve-credentials"]) + ["-u", "-i", "-p",
         "--mount=/proc/%d/ns/mnt" % hostpid,
         "--wd=/proc/%d/root%s" % (hostpid, c.cwd or "/")]
    if getattr(c, "rootfs", None):
        a.append("--root=/proc/%d/root" % hostpid)    # the image's root (pivot_root)
    if c.uid is not None and os.geteuid() == 0:
        a += ["-S", str(c.uid), "-G", str(c.gid if c.gid is not None else c.uid)]
    return a + ["--"] + list(argv)


def running_target(k, ns, name, cname):
    """(worker, container run, host pid) for a running container, or an ApiError."""
    pod = k.store.get("pods", ns, name)
    phase = pod.get("status", {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        raise ApiError(400, "BadRequest", "cannot exec into a container in a completed pod; "
                       "current phase is %s" % phase)
    spec = pick_container(None, pod, cname)
    w = k.worker_for(ns, name)
    c = w.container(spec["name"]) if w else None
    hp = container_hostpid(w, c) if c else None
    if hp is None:
        raise ApiError(400, "BadRequest", 'unable to upgrade connection: container not found '
                       '("%s")' % spec["name"])
    return w, c, hp


def status_success():
    return {"metadata": {}, "status": "Success"}


def status_exit(argv, code):
    return {"metadata": {}, "status": "Failure",
            "message": "command terminated with non-zero exit code: error executing command "
                       "[%s], exit code %d" % (" ".join(argv), code),
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}


def status_internal(msg):
    full = "error executing command in container: %s" % msg
    return {"metadata": {}, "status": "Failure",
            "message": "Internal error occurred: " + full, "reason": "InternalError",
            "details": {"causes": [{"message": full}]}, "code": 500}


async def run_in_container(w, c, argv, timeout):
    """Run argv in container c (probes); returns (exit code or None on timeout, output)."""
    hp = container_hostpid(w, c)
    if hp is None:
        return None, "container not running"
    if not resolve_exe("/proc/%d/root" % hp, c.env.get("PATH"), c.cwd or "/", argv[0]):
        return 126, 'exec: "%s": executable file not found in $PATH' % argv[0]
    p = await asyncio.create_subprocess_exec(
        *nsenter_argv(w, c, hp, argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, env=c.env, start_new_session=True)
    try:
        out, _ = await asyncio.wait_for(p.communicate(), timeout)
    except asyncio.TimeoutError:
        _killpg(p.pid)
        await p.wait()
        return None, "command timed out"
    rc = p.returncode
    return (rc if rc >= 0 else 128 - rc), out.decode(errors="replace")


def _killpg(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def handle_exec(k, request, ns, name):
    q = parse_qs(request.query_string, keep_blank_values=True)
    argv = q.get("command", [])
    cname = (q.get("container") or [""])[-1]
    if not argv:
        raise ApiError(400, "BadRequest", "you must specify at least one command for the "
                       "container")
    w, c, hp = running_target(k, ns, name, cname)
    if request.method == "POST" or request.headers.get("Upgrade", "").lower() != "websocket":
        if "upgrade" not in request.headers.get("Connection", "").lower():
            raise ApiError(400, "BadRequest", "Upgrade request required")
        raise ApiError(403, "Forbidden", "kubesim serves pods/exec over WebSocket "
                       "(v5.channel.k8s.io) only, not %s" % request.headers.get("Upgrade", "?"))
    if w.paused:
        await asyncio.sleep(2)
        raise ApiError(500, "InternalError", "error dialing backend: dial tcp %s:10250: i/o "
                       "timeout" % k.node_ip)
    offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",")
               if p.strip()]
    proto = next((p for p in offered if p in PROTOCOLS), None)
    if offered and proto is None:
        return web.Response(status=403, text="unable to upgrade: unable to negotiate protocol: "
                            "client supports %s, server supports %s\n" % (offered, list(PROTOCOLS)))
    stdin, stdout = qbool(q, "stdin"), qbool(q, "stdout")
    stderr, tty = qbool(q, "stderr"), qbool(q, "tty")
    ws = web.WebSocketResponse(protocols=[proto] if proto else (), autoping=True,
                               max_msg_size=64 << 20, compress=False)
    await ws.prepare(request)
    sess = ExecSession(k, w, c, hp, ws, request, proto or "channel.k8s.io", argv,
                       stdin, stdout, stderr, tty)
    STREAMS["open"] += 1
    STREAMS["peak"] = max(STREAMS["peak"], STREAMS["open"])
    SESSIONS.add(sess)
    try:
        await sess.run()
    finally:
        SESSIONS.discard(sess)
        STREAMS["open"] -= 1
        sess.kill()


def cut_all():
    """Fault exec-cut, what a real kubelet restart does to exec: every open stream's
    connection is cut without a status or close frame, and the commands run on (Kubernetes
    does not stop an exec'd process when its stream ends; their later output is lost)."""
    n = 0
    for sess in list(SESSIONS):
        if not sess.dropped:
            sess.cut()
            n += 1
    return n
    return ws


class ExecSession:
    """One exec stream."""

    def __init__(self, k, w, c, hp, ws, request, proto, argv, stdin, stdout, stderr, tty):
        self.k, self.w, self.c, self.hp, self.ws = k, w, c, hp, ws
        self.request = request
        self.proto = proto
        self.b64 = "base64" in proto
        self.v5 = proto.startswith("v5")
        self.json_status = proto.startswith("v4") or proto.startswith("v5")
        self.argv = argv
        self.want_in, self.want_out, self.want_err, self.tty = stdin, stdout, stderr, tty
        self.proc = None
        self.drop_after = k.exec_drop_after
        self.sent = 0
        self.dropped = False
        self.detached = False  # cut by fault exec-cut: the command runs on
        self.master = None
        self.ready_sent = False
        self.t0 = 0.0
        # the same for every client (benchmarks compare clients on kubesim)
        self.ready_delay = exec_ready_delay(k.config)

    async def send(self, ch, data):
        if self.dropped:
            return
        if self.drop_after is not None and ch in (1, 2):
            room = self.drop_after - self.sent
            if len(data) >= room:
                if room > 0:
                    await self._send_raw(ch, data[:room])
                self.sent += max(room, 0)
                self.drop()
                return
        self.sent += len(data) if ch in (1, 2) else 0
        await self._send_raw(ch, data)

    async def _send_raw(self, ch, data):
        try:
            if self.b64:
                await self.ws.send_str(chr(0x30 + ch) + base64.b64encode(data).decode())
            else:
                await self.ws.send_bytes(bytes([ch]) + data)
        except ConnectionResetError:
            # the client went away (an exec'd daemon's launcher exiting): not a server error;
            # stop sending, and the session ends as for a client that closed (command killed)
            self.dropped = True
            log.debug("exec %s: client gone while sending channel %d", self.argv[:1], ch)

    def drop(self):
        """Fault: cut the TCP connection without a status or close frame."""
        self.dropped = True
        tr = self.request.transport
        if tr is not None:
            tr.abort()
        self.kill()

    def cut(self):
        """Fault exec-cut: the connection cut without a status; the command runs on."""
        self.dropped = self.detached = True
        tr = self.request.transport
        if tr is not None:
            tr.abort()

    def kill(self):
        if self.detached and self.proc is not None and self.proc.returncode is None:
            return  # runs on: reaped by the waiter in run()
        if self.proc is not None and self.proc.returncode is None:
            _killpg(self.proc.pid)
        if self.master is not None:
            try:
                os.close(self.master)
            except OSError:
                pass
            self.master = None

    async def ready(self):
        """The empty readiness message on the lowest writable channel, sent no sooner than
        ready_delay after the upgrade to every client alike: it stands for a real API
        server's dial to the kubelet and the runtime's exec, which is what hides client-go's
        race there (client-go starts its demux loop before it registers its streams, so an
        immediate first message is discarded with an "Unknown stream id" error on kubectl's
        stderr: measured here 1 in 180 execs under load). Output and the status follow it,
        so no client sees its command's first byte sooner than ready_delay."""
        if self.ready_sent:
            return
        self.ready_sent = True
        wait = self.t0 + self.ready_delay - asyncio.get_event_loop().time()
        if wait > 0:
            await asyncio.sleep(wait)
        await self._send_raw(1 if self.want_out else 2 if self.want_err else 3, b"")

    async def run(self):
        self.t0 = asyncio.get_event_loop().time()
        c = self.c
        root = "/proc/%d/root" % self.hp
        if not resolve_exe(root, c.env.get("PATH"), c.cwd or "/", self.argv[0]):
            cid = (c.container_id or "").split("//")[-1]
            await self.finish(status_internal(
                'failed to exec in container: failed to start exec "%s": OCI runtime exec '
                'failed: exec failed: unable to start container process: exec: "%s": '
                'executable file not found in $PATH: unknown' % (cid[:64], self.argv[0])))
            return
        cmd = nsenter_argv(self.w, c, self.hp, self.argv)
        if self.tty:
            import pty
            self.master, slave = pty.openpty()
            out = err = slave
            sin = slave if self.want_in else subprocess.DEVNULL
        else:
            slave = None
            sin = subprocess.PIPE if self.want_in else subprocess.DEVNULL
            out = subprocess.PIPE if self.want_out else subprocess.DEVNULL
            err = subprocess.PIPE if self.want_err else subprocess.DEVNULL
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *cmd, stdin=sin, stdout=out, stderr=err, env=dict(c.env),
                start_new_session=True)
        except OSError as e:
            await self.finish(status_internal("failed to exec in container: %s" % e))
            return
        finally:
            if slave is not None:
                os.close(slave)
        await self.ready()
        pumps = []
        if self.tty:
            pumps.append(asyncio.ensure_future(self.pump_tty()))
        else:
            if self.want_out:
                pumps.append(asyncio.ensure_future(self.pump(self.proc.stdout, 1)))
            if self.want_err:
                pumps.append(asyncio.ensure_future(self.pump(self.proc.stderr, 2)))
        reader = self.reader = asyncio.ensure_future(self.read_client())
        waiter = asyncio.ensure_future(self.proc.wait())
        try:
            done, _ = await asyncio.wait([waiter, reader], return_when=asyncio.FIRST_COMPLETED)
            if waiter not in done:
                # client went away (or fault dropped the stream): kill the command, unless
                # the fault exec-cut detached it (it runs on; its output is read and lost)
                self.kill()
                await waiter
                return
            if pumps:
                done, pend = await asyncio.wait(pumps, timeout=DRAIN_AFTER_EXIT)
                for p in pend:
                    p.cancel()
            if self.dropped or self.ws.closed:
                return
            rc = self.proc.returncode
            code = rc if rc >= 0 else 128 - rc
            reader.cancel()
            try:
                await reader
            except (asyncio.CancelledError, Exception):
                pass
            await self.finish(status_success() if code == 0 else status_exit(self.argv, code))
        finally:
            for p in pumps:
                p.cancel()
            reader.cancel()

    async def pump(self, stream, ch):
        while True:
            data = await stream.read(CHUNK)
            if not data or self.dropped:
                return
            await self.send(ch, data)

    async def pump_tty(self):
        loop = asyncio.get_event_loop()
        fd = self.master
        q = asyncio.Queue()
        loop.add_reader(fd, lambda: q.put_nowait(_read_fd(fd)))
        try:
            while True:
                data = await q.get()
                if not data:
                    return
                await self.send(1, data)
        finally:
            loop.remove_reader(fd)

    async def read_client(self):
        async for msg in self.ws:
            if msg.type == WSMsgType.BINARY:
                data = msg.data
            elif msg.type == WSMsgType.TEXT and self.b64 and msg.data:
                try:
                    data = bytes([ord(msg.data[0]) - 0x30]) + base64.b64decode(msg.data[1:])
                except (ValueError, TypeError):
                    continue
            else:
                continue
            if not data:
                continue
            ch, payload = data[0], data[1:]
            if ch == 0 and self.want_in:
                await self.write_stdin(payload)
            elif ch == 255 and self.v5 and payload[:1] == b"\x00":
                self.close_stdin()
            elif ch == 4 and self.tty and self.master is not None:
                self.resize(payload)
        # connection closed by the client

    async def write_stdin(self, payload):
        if self.tty:
            if self.master is not None:
                try:
                    os.write(self.master, payload)
                except OSError:
                    pass
            return
        p = self.proc.stdin if self.proc else None
        if p is None or p.is_closing():
            return
        try:
            p.write(payload)
            await p.drain()
        except (ConnectionResetError, BrokenPipeError):
            pass

    def close_stdin(self):
        if self.tty:
            if self.master is not None:
                try:
                    os.write(self.master, b"\x04")
                except OSError:
                    pass
            return
        if self.proc and self.proc.stdin and not self.proc.stdin.is_closing():
            self.proc.stdin.close()

    def resize(self, payload):
        import fcntl
        import struct
        import termios
        try:
            sz = json.loads(payload)
            fcntl.ioctl(self.master, termios.TIOCSWINSZ,
                        struct.pack("HHHH", int(sz.get("Height", 24)), int(sz.get("Width", 80)),
                                    0, 0))
        except (ValueError, OSError, AttributeError):
            pass

    async def finish(self, status):
        if self.ws.closed:
            return
        await self.ready()
        if self.json_status:
            await self._send_raw(3, json.dumps(status).encode())
        elif status.get("status") != "Success":
            await self._send_raw(3, status.get("message", "").encode())
        if not self.dropped:
            try:
                await self.ws.close(code=1000)
            except ConnectionResetError:
                pass


def _read_fd(fd):
    try:
        return os.read(fd, CHUNK)
    except OSError:
        return b""
