"""The kubesim command line: up, run, down, fault (and the internal `serve`)."""
import argparse
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

from .config import API_PORT, GATEWAY, TLS_MIN_VERSIONS, Config, check_seconds, netns_name

READY_TIMEOUT = 30


def die(msg, code=1):
    sys.stderr.write("kubesim: %s\n" % msg)
    sys.exit(code)


def sh(args, check=True):
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if check and r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(args), r.stdout.decode(errors="replace").strip()))
    return r


def control(d, req, timeout=60):
    path = os.path.join(os.path.abspath(d), "control.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(path)
        s.sendall(json.dumps(req).encode() + b"\n")
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    finally:
        s.close()
    if not buf:
        raise RuntimeError("no reply from the control socket")
    return json.loads(buf)


def _pid(d):
    try:
        with open(os.path.join(d, "kubesim.pid")) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def _is_ours(pid, d):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            cmd = f.read().split(b"\0")
    except OSError:
        return False
    return b"serve" in cmd and os.path.abspath(d).encode() in cmd


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def can_netns():
    if os.geteuid() != 0:
        return False
    return subprocess.run(["ip", "netns", "list"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def make_netns(ns):
    if os.path.exists("/run/netns/" + ns):
        sh(["ip", "netns", "del", ns], check=False)
    sh(["ip", "netns", "add", ns])
    try:
        sh(["ip", "-n", ns, "link", "set", "lo", "up"])
        sh(["ip", "-n", ns, "link", "add", "br0", "type", "bridge"])
        sh(["ip", "-n", ns, "addr", "add", GATEWAY + "/16", "dev", "br0"])
        sh(["ip", "-n", ns, "link", "set", "br0", "up"])
    except Exception:
        sh(["ip", "netns", "del", ns], check=False)
        raise


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def cmd_up(a):
    from . import tls
    d = os.path.abspath(a.dir)
    os.makedirs(d, exist_ok=True)
    pid = _pid(d)
    if pid and _alive(pid) and _is_ours(pid, d):
        die("already running in %s (pid %d); run `kubesim down --dir %s` first" % (d, pid, d))
    if os.path.exists(os.path.join(d, "state", "config.json")):
        # a previous instance in this DIR was not taken down (crash): clean it up first
        sys.stderr.write("kubesim: cleaning up a previous instance in %s\n" % d)
        cmd_down(argparse.Namespace(dir=d))
    os.makedirs(os.path.join(d, "state"), exist_ok=True)
    extra = {}
    for kv in a.set or []:
        k, _, v = kv.partition("=")
        bad = check_seconds(k, v)
        if bad:
            die("up: --set " + bad, 2)
        extra[k] = v
    if can_netns() and not a.no_netns:
        ns = netns_name(d)
        cfg = Config(d, a.nodes, a.gpus, ns, GATEWAY, API_PORT, extra, a.tls_min_version)
        cfg.save()          # recorded before creating anything, so `down` can clean up
        with open(os.path.join(d, "state", "netns"), "w") as f:
            f.write(ns + "\n")
        make_netns(ns)
    else:
        sys.stderr.write("kubesim: not root or no `ip netns`: no network namespace; the API "
                         "server listens on 127.0.0.1 and pods share the host network\n")
        cfg = Config(d, a.nodes, a.gpus, None, "127.0.0.1", free_port(), extra,
                     a.tls_min_version)
        cfg.save()
    write_run_script(cfg)
    tls.make_pki(os.path.join(d, "pki"))
    # kubectl's discovery cache (KUBECACHEDIR, set by `run`) must not outlive an instance
    shutil.rmtree(os.path.join(d, "kube-cache"), ignore_errors=True)
    for f in ("kubeconfig", "control.sock"):
        try:
            os.unlink(os.path.join(d, f))
        except FileNotFoundError:
            pass
    script = os.path.join(cfg.kubesim_dir, "kubesim")
    argv = ["/usr/bin/python3", script, "serve", "--dir", d]
    if cfg.netns:
        argv = ["nsenter", "--net=/run/netns/" + cfg.netns, "--"] + argv
    logf = open(os.path.join(d, "apiserver.log"), "ab")
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=logf,
                         start_new_session=True, close_fds=True, cwd="/")
    logf.close()
    with open(os.path.join(d, "kubesim.pid"), "w") as f:
        f.write("%d\n" % p.pid)
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if p.poll() is not None:
            break
        if os.path.exists(os.path.join(d, "control.sock")):
            try:
                if control(d, {"op": "ping"}, 5).get("ok"):
                    print(os.path.join(d, "kubeconfig"))
                    return 0
            except (OSError, RuntimeError, ValueError):
                pass
        time.sleep(0.02)
    tail = ""
    try:
        with open(os.path.join(d, "apiserver.log"), errors="replace") as f:
            tail = "".join(f.readlines()[-30:])
    except OSError:
        pass
    sys.stderr.write(tail)
    if p.poll() is None:
        die("not ready after %d s (log: %s/apiserver.log); run `kubesim down --dir %s`"
            % (READY_TIMEOUT, d, d))
    die("the server exited with status %s (log: %s/apiserver.log)" % (p.returncode, d))


def run_vars(cfg):
    """What `run` adds to a command's environment."""
    return {"KUBECONFIG": os.path.join(cfg.dir, "kubeconfig"),
            "KUBECACHEDIR": os.path.join(cfg.dir, "kube-cache"),
            "KUBESIM_DIR": cfg.dir}


def run_env(cfg):
    env = dict(os.environ)
    env.update(run_vars(cfg))
    return env


def run_prefix(cfg):
    """The argv that `run` puts before a command (nsenter into the instance's namespace)."""
    return ["nsenter", "--net=/run/netns/" + cfg.netns, "--"] if cfg.netns else []


def write_run_script(cfg):
    """DIR/state/run CMD ARGS...: what `kubesim run --dir DIR -- CMD ARGS...` does, without
    starting Python (about 0.05 s of CPU a call; the tests' polls call it thousands of times)."""
    words = run_prefix(cfg) + ["env"] + ["%s=%s" % kv for kv in sorted(run_vars(cfg).items())]
    p = os.path.join(cfg.dir, "state", "run")
    with open(p + ".tmp", "w") as f:
        f.write("#!/bin/sh\n# written by `kubesim up`: kubesim run, as a shell script\n"
                "exec %s \"$@\"\n" % " ".join(shlex.quote(w) for w in words))
    os.chmod(p + ".tmp", 0o755)
    os.rename(p + ".tmp", p)


def cmd_run(a):
    if not a.cmd:
        die("run: no command given (kubesim run --dir DIR -- CMD ARGS...)", 2)
    cmd = a.cmd[1:] if a.cmd[0] == "--" else a.cmd
    try:
        cfg = Config.load(a.dir)
    except OSError:
        die("no kubesim instance in %s (run `kubesim up --dir %s`)" % (a.dir, a.dir))
    env = run_env(cfg)
    cmd = run_prefix(cfg) + cmd
    try:
        os.execvpe(cmd[0], cmd, env)
    except OSError as e:
        die("run: %s: %s" % (cmd[0], e.strerror), 127)


def cmd_down(a):
    d = os.path.abspath(a.dir)
    cfg = None
    try:
        cfg = Config.load(d)
    except (OSError, ValueError):
        pass
    pid = _pid(d)
    if pid and _alive(pid) and _is_ours(pid, d):
        try:
            control(d, {"op": "shutdown"}, 5)
        except (OSError, RuntimeError, ValueError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 40
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _alive(pid):
            sys.stderr.write("kubesim: server pid %d did not stop; killing it\n" % pid)
            os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)
    rc = 0
    if cfg is not None:
        sys.path.insert(0, cfg.kubesim_dir)
        try:
            import importlib
            mod = importlib.import_module("sim.kubelet")
            if hasattr(mod, "cleanup"):
                mod.cleanup(cfg)
        except ImportError as e:
            if getattr(e, "name", "") != "sim.kubelet":
                sys.stderr.write("kubesim: node cleanup unavailable: %s\n" % e)
                rc = 1
        except Exception as e:
            sys.stderr.write("kubesim: node cleanup failed: %s\n" % e)
            rc = 1
    ns = None
    nsfile = os.path.join(d, "state", "netns")
    if os.path.exists(nsfile):
        with open(nsfile) as f:
            ns = f.read().strip()
    if ns and os.path.exists("/run/netns/" + ns):
        r = sh(["ip", "netns", "pids", ns], check=False)
        for tok in r.stdout.decode().split():
            try:
                os.kill(int(tok), signal.SIGKILL)
            except (ValueError, ProcessLookupError):
                pass
        r = sh(["ip", "netns", "del", ns], check=False)
        if r.returncode != 0:
            sys.stderr.write("kubesim: ip netns del %s: %s\n" % (ns, r.stdout.decode().strip()))
            rc = 1
    shutil.rmtree(os.path.join(d, "kube-cache"), ignore_errors=True)
    done = ("kubesim.pid", "control.sock", "state/netns") + (("state/config.json",) if rc == 0
                                                            else ())
    for f in done:
        try:
            os.unlink(os.path.join(d, f))
        except FileNotFoundError:
            pass
    return rc


def _nsname(s):
    if "/" in s:
        ns, _, name = s.partition("/")
    else:
        ns, name = "default", s
    return ns, name


PART_TABLE = "kubesim_partition"


def _pod_ip(s):
    parts = s.split(".")
    if len(parts) != 4 or parts[:2] != ["10", "250"] or not all(p.isdigit() and int(p) < 256 for p in parts):
        die("fault partition: %r is not a pod IP (10.250.0.0/16)" % s, 2)
    return s


def _nft(ns, script):
    p = subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=script.encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        die("fault: nft in %s: %s" % (ns, p.stdout.decode().strip()))


def cmd_partition(a):
    """partition A B / heal [A B]: packets between two pod IPs dropped both ways on the
    instance's bridge (an nftables bridge-family table in the host namespace: pods talk
    through br0 only; the API server, exec and the node's own traffic are untouched)."""
    nsfile = os.path.join(a.dir, "state", "netns")
    ns = open(nsfile).read().strip() if os.path.exists(nsfile) else ""
    if not ns or not os.path.exists("/run/netns/" + ns):
        die("fault %s: no network namespace in %s (pods share the host's network: no partition possible)"
            % (a.kind, a.dir))
    if a.kind == "partition":
        if len(a.args) != 2 or a.args[0] == a.args[1]:
            die("fault partition: expected two different pod IPs", 2)
        x, y = _pod_ip(a.args[0]), _pod_ip(a.args[1])
        _nft(ns, "add table bridge %s\n"
                 "add chain bridge %s forward { type filter hook forward priority 0; policy accept; }\n"
                 "add rule bridge %s forward ip saddr %s ip daddr %s drop\n"
                 "add rule bridge %s forward ip saddr %s ip daddr %s drop\n"
             % (PART_TABLE, PART_TABLE, PART_TABLE, x, y, PART_TABLE, y, x))
        return 0
    if len(a.args) not in (0, 2):
        die("fault heal: expected no IPs or two", 2)
    have = subprocess.run(["ip", "netns", "exec", ns, "nft", "-a", "list", "table", "bridge", PART_TABLE],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if have.returncode != 0:
        return 0   # nothing partitioned
    if not a.args:
        _nft(ns, "delete table bridge %s\n" % PART_TABLE)
        return 0
    x, y = _pod_ip(a.args[0]), _pod_ip(a.args[1])
    pairs = ("ip saddr %s ip daddr %s " % (x, y), "ip saddr %s ip daddr %s " % (y, x))
    cmds = ["delete rule bridge %s forward handle %s" % (PART_TABLE, line.rsplit(" ", 1)[1])
            for line in have.stdout.decode().splitlines()
            if "# handle " in line and any(line.strip().startswith(p) for p in pairs)]
    if cmds:
        _nft(ns, "\n".join(cmds) + "\n")
    return 0


def cmd_fault(a):
    k = a.kind
    args = a.args
    if k in ("partition", "heal"):
        return cmd_partition(a)
    req = {"op": k}
    need = {"kill-containers": 1, "delete-pod-now": 1, "exec-drop-after": 1, "pause-node": 1,
            "unpause-node": 1, "restart-apiserver": 0, "exec-cut": 0, "set": 1,
            "lose-create-answer": 2}
    if k not in need:
        die("fault: unknown kind %r (one of: %s)" % (k, ", ".join(sorted(list(need) + ["partition", "heal"]))), 2)
    if len(args) != need[k]:
        die("fault %s: expected %d argument(s)" % (k, need[k]), 2)
    if k in ("kill-containers", "delete-pod-now"):
        req["ns"], req["name"] = _nsname(args[0])
    elif k == "exec-drop-after":
        try:
            req["bytes"] = int(args[0])
        except ValueError:
            die("fault exec-drop-after: BYTES must be an integer, got %r" % args[0], 2)
    elif k == "lose-create-answer":
        req["resource"] = args[0]
        try:
            req["count"] = int(args[1])
        except ValueError:
            die("fault lose-create-answer: COUNT must be an integer, got %r" % args[1], 2)
    elif k in ("pause-node", "unpause-node"):
        req["node"] = args[0]
    elif k == "set":
        req["key"], _, req["value"] = args[0].partition("=")
        bad = check_seconds(req["key"], req["value"])
        if bad:
            die("fault set " + bad, 2)
    try:
        rep = control(a.dir, req)
    except (OSError, RuntimeError, ValueError) as e:
        die("fault: cannot reach the simulator in %s: %s" % (a.dir, e))
    if not rep.get("ok"):
        die("fault %s: %s" % (k, rep.get("error")))
    return 0


def cmd_stat(a):
    """exec-streams: prints "OPEN PEAK" (exec streams open now, most at once since the
    last exec-streams-reset); exec-streams-reset: peak := open, then prints the same."""
    if a.what not in ("exec-streams", "exec-streams-reset"):
        die("stat: unknown counter %r (one of: exec-streams, exec-streams-reset)" % a.what, 2)
    try:
        rep = control(a.dir, {"op": a.what})
    except (OSError, RuntimeError, ValueError) as e:
        die("stat: cannot reach the simulator in %s: %s" % (a.dir, e))
    if not rep.get("ok"):
        die("stat %s: %s" % (a.what, rep.get("error")))
    print(rep["result"]["open"], rep["result"]["peak"])
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="kubesim", description="single-node Kubernetes simulator")
    sub = p.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start an instance in the background")
    up.add_argument("--dir", required=True)
    up.add_argument("--nodes", type=int, default=1)
    up.add_argument("--gpus", type=int, default=0)
    up.add_argument("--no-netns", action="store_true", help="no network namespace (as non-root)")
    up.add_argument("--tls-min-version", default="VersionTLS12",
                    help="lowest TLS version served, as kube-apiserver's flag: VersionTLS12 "
                         "(default) or VersionTLS13")
    up.add_argument("--set", action="append", metavar="KEY=VALUE",
                    help="tunables: watch_window, watch_timeout, bookmark_interval, "
                         "job_backoff_seconds, ...")
    r = sub.add_parser("run", help="run a command where the cluster is reachable")
    r.add_argument("--dir", required=True)
    r.add_argument("cmd", nargs=argparse.REMAINDER)
    dn = sub.add_parser("down", help="stop an instance and remove everything it made")
    dn.add_argument("--dir", required=True)
    f = sub.add_parser("fault", help="inject a fault")
    f.add_argument("--dir", required=True)
    f.add_argument("kind")
    f.add_argument("args", nargs="*")
    st = sub.add_parser("stat", help="print a counter: exec-streams (open, peak)")
    st.add_argument("--dir", required=True)
    st.add_argument("what")
    s = sub.add_parser("serve", help=argparse.SUPPRESS)
    s.add_argument("--dir", required=True)
    a = p.parse_args(argv)
    if a.command == "up":
        if a.nodes < 1 or a.gpus < 0:
            die("up: --nodes must be >= 1 and --gpus >= 0", 2)
        if a.tls_min_version not in TLS_MIN_VERSIONS:
            die("up: --tls-min-version: unknown TLS version %r (one of: %s)"
                % (a.tls_min_version, ", ".join(TLS_MIN_VERSIONS)), 2)
        return cmd_up(a)
    if a.command == "run":
        return cmd_run(a)
    if a.command == "down":
        return cmd_down(a)
    if a.command == "fault":
        return cmd_fault(a)
    if a.command == "stat":
        return cmd_stat(a)
    if a.command == "serve":
        from .server import main as serve
        return serve(a.dir)
    return 2
