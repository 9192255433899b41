"""The kubesim daemon: builds the store, controllers and (if present) the node side,
serves the Kubernetes API over HTTPS, and answers the control socket (faults, shutdown)."""
import asyncio
import base64
import gc
import importlib
import inspect
import json
import logging
import os
import resource
import secrets as pysecrets
import signal
import sys
import time

from aiohttp import web

from . import defaults, discovery, errors, impersonation, podsecurity, rbac, tls
from .api import Api
from .httpreply import jresp, status_resp
from .auth import Authenticator
from .config import Config
from .apps import AppsController
from .crd import CRDController
from .endpoints import EndpointsController
from .errors import ApiError
from .gc import GarbageCollector
from .jobs import JobController
from .rbac import Attrs, authorize
from .store import Store

log = logging.getLogger("kubesim")


async def maybe(x):
    if inspect.isawaitable(x):
        return await x
    return x


def plain_internal_error(request, err):
    """kube-apiserver's responsewriters.InternalError: a plain-text 500, not a Status."""
    text = "Internal Server Error: %s: %s" % (json.dumps(request.path_qs), err)
    for c, ent in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;")):
        text = text.replace(c, ent)     # its HTML sanitizer
    return web.Response(status=500, text=text + "\n", content_type="text/plain",
                        charset="utf-8", headers={"X-Content-Type-Options": "nosniff"})


class Server:
    """One simulator instance."""

    def __init__(self, config):
        self.config = config
        ex = config.extra
        self.watch_timeout = float(ex.get("watch_timeout", 1800))
        self.bookmark_interval = float(ex.get("bookmark_interval", 10))
        self.store = Store(watch_window=int(ex.get("watch_window", 5000)))
        pki = os.path.join(config.dir, "pki")
        with open(os.path.join(pki, "ca.crt")) as f:
            config.ca_pem = f.read()
        tokfile = os.path.join(config.state_dir, "admin-token")
        if os.path.exists(tokfile):
            with open(tokfile) as f:
                self.admin_token = f.read().strip()
        else:
            self.admin_token = "kubesim-admin." + pysecrets.token_hex(24)
            with open(tokfile, "w") as f:
                f.write(self.admin_token)
        self.auth = Authenticator(self.store, self.admin_token, config.ca_pem)
        config.token_for = self.auth.token_for
        defaults.install(self.store)
        podsecurity.install(self.store)
        self.auth.install(self.store)
        self.crds = CRDController(self.store)
        self.gc = GarbageCollector(self.store, config.ca_pem,
                                   event_ttl=float(ex.get("event_ttl", 3600)))
        self.endpoints = EndpointsController(self.store)
        self.apps = AppsController(self.store)
        self.jobs = JobController(self.store, float(ex.get("job_backoff_seconds", 1)))
        self.api = Api(self)
        self.inflight = {}
        self.runner = None
        self.kubelet = None
        self.ssl = tls.server_context(pki, config.tls_min_version)
        self.stopping = asyncio.Event()

    # ---- bootstrap ----------------------------------------------------------
    def bootstrap(self):
        s = self.store
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
            s.create("namespaces", None, {"metadata": {"name": ns}})
        # the GC creates per-namespace defaults asynchronously; do it now for startup
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
            self.gc._namespace_defaults(ns)
        roles, bindings = rbac.bootstrap_roles()
        for r in roles:
            s.create("clusterroles.rbac.authorization.k8s.io", None, r)
        for b in bindings:
            s.create("clusterrolebindings.rbac.authorization.k8s.io", None, b)
        s.create("services", "default", {"metadata": {
            "name": "kubernetes", "labels": {"component": "apiserver",
                                             "provider": "kubernetes"}},
            "spec": {"clusterIP": "10.96.0.1", "ports": [
                {"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]}})
        s.create("endpoints", "default", {"metadata": {
            "name": "kubernetes", "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
            "subsets": [{"addresses": [{"ip": self.config.api_host}],
                         "ports": [{"name": "https", "port": self.config.api_port,
                                    "protocol": "TCP"}]}]})

    async def start_kubelet(self):
        sys.path.insert(0, self.config.kubesim_dir)
        try:
            mod = importlib.import_module("sim.kubelet")
        except ImportError as e:
            if getattr(e, "name", "") in ("sim.kubelet",):
                log.warning("no node side (sim.kubelet missing): pods will stay Pending")
                return
            raise
        self.kubelet = mod.Kubelet(self.store, self.config)
        await maybe(self.kubelet.start())

    # ---- HTTP -----------------------------------------------------------------
    def track(self, resp):
        pass

    def untrack(self, resp):
        pass

    async def handle(self, request):
        t0 = time.monotonic()
        self.inflight[id(request)] = request
        user = None
        code = 0
        try:
            tr = request.transport
            user = self.auth.authenticate(request.headers.get("Authorization"),
                                          tr.get_extra_info("peercert") if tr else None)
            user = impersonation.impersonate(self.store, request.headers, user)
            request["user"] = user
            resp = await self.route(request)
            code = getattr(resp, "status", 0)
            return resp
        except ApiError as e:
            code = e.code
            return status_resp(e)
        except impersonation.HeaderError as e:
            code = 500
            return plain_internal_error(request, e)
        except (asyncio.CancelledError, ConnectionResetError):
            code = -1
            raise
        except Exception as e:
            log.exception("internal error on %s %s", request.method, request.path_qs)
            code = 500
            return status_resp(errors.internal(str(e)))
        finally:
            self.inflight.pop(id(request), None)
            log.info("%s %s %s %.1fms %s", request.method, request.path_qs, code,
                     (time.monotonic() - t0) * 1000, user.name if user else "-")

    async def route(self, request):
        path = request.path
        parts = [p for p in path.split("/") if p]
        user = request["user"]
        if parts and parts[0] in ("api", "apis") and \
                (parts[0] == "api" and len(parts) >= 3 or parts[0] == "apis" and len(parts) >= 4):
            return await self.api.handle(request, parts)
        # non-resource URLs
        if request.method not in ("GET", "HEAD"):
            raise errors.method_not_allowed()
        if not authorize(self.store, user, Attrs("get", path=path)):
            raise ApiError(403, "Forbidden", 'forbidden: User "%s" cannot get path "%s"'
                           % (user.name, path), {})
        reg = self.store.registry
        if path == "/version" or path == "/version/":
            return jresp(discovery.VERSION)
        if parts and parts[0] in ("healthz", "livez", "readyz"):
            return web.Response(text="ok", content_type="text/plain")
        if parts == ["api"]:
            return jresp(discovery.api_versions("%s:%d" % (self.config.api_host,
                                                           self.config.api_port)))
        if parts == ["api", "v1"]:
            return jresp(discovery.resource_list(reg, "", "v1"))
        if parts == ["apis"]:
            return jresp(discovery.api_groups(reg))
        if len(parts) == 2 and parts[0] == "apis":
            g = discovery.api_group(reg, parts[1])
            if g is not None:
                return jresp(g)
        if len(parts) == 3 and parts[0] == "apis":
            rl = discovery.resource_list(reg, parts[1], parts[2])
            if rl is not None:
                return jresp(rl)
        if parts == ["openapi", "v3"]:
            return jresp(discovery.openapi_root(reg))
        if len(parts) >= 3 and parts[:2] == ["openapi", "v3"]:
            rest = parts[2:]
            doc = None
            if rest == ["api", "v1"]:
                doc = discovery.openapi_gv(reg, "", "v1")
            elif len(rest) == 3 and rest[0] == "apis":
                doc = discovery.openapi_gv(reg, rest[1], rest[2])
            if doc is not None:
                return jresp(doc)
        raise ApiError(404, "NotFound", "the server could not find the requested resource")

    async def listen(self):
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app["kubelet"] = self.kubelet
        app["server"] = self
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self.runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self.runner.setup()
        c = self.config
        hosts = [c.api_host] if c.api_host == "127.0.0.1" else [c.api_host, "127.0.0.1"]
        for h in hosts:
            site = web.TCPSite(self.runner, h, c.api_port, ssl_context=self.ssl,
                               shutdown_timeout=0.1, reuse_address=True)
            await site.start()

    async def stop_listening(self):
        for req in list(self.inflight.values()):
            tr = req.transport
            if tr is not None:
                tr.abort()
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None

    async def restart(self):
        await self.stop_listening()
        await asyncio.sleep(0.2)
        await self.listen()

    # ---- control socket -------------------------------------------------------------
    async def control(self, reader, writer):
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            req = json.loads(line or b"{}")
            try:
                res = await self.control_op(req)
                reply = {"ok": True, "result": res}
            except ApiError as e:
                reply = {"ok": False, "error": e.message}
            except Exception as e:
                log.exception("control op %r failed", req)
                reply = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
            writer.write(json.dumps(reply).encode() + b"\n")
            await writer.drain()
        except Exception:
            log.exception("control connection failed")
        finally:
            writer.close()

    def _kubelet_op(self, name, *args):
        fn = getattr(self.kubelet, name, None) if self.kubelet else None
        if fn is None:
            raise ApiError(501, "NotImplemented", "the node side does not implement %s" % name)
        return fn(*args)

    async def control_op(self, req):
        op = req.get("op")
        if op == "ping":
            return "pong"
        if op == "shutdown":
            asyncio.get_event_loop().call_soon(self.stopping.set)
            return "stopping"
        if op == "restart-apiserver":
            await self.restart()
            return "restarted"
        if op == "delete-pod-now":
            self.store.delete("pods", req["ns"], req["name"], grace_seconds=0)
            return "deleted"
        if op == "kill-containers":
            self.store.get("pods", req["ns"], req["name"])
            return await maybe(self._kubelet_op("kill_containers", req["ns"], req["name"]))
        if op == "exec-drop-after":
            return await maybe(self._kubelet_op("set_exec_drop_after", int(req["bytes"])))
        if op == "exec-cut":
            from .exec import cut_all
            return cut_all()
        if op == "exec-streams":
            from .exec import STREAMS
            return dict(STREAMS)
        if op == "exec-streams-reset":
            from .exec import STREAMS
            STREAMS["peak"] = STREAMS["open"]
            return dict(STREAMS)
        if op == "lose-create-answer":
            self.api.lose_create[req["resource"]] = int(req["count"])
            return "ok"
        if op == "pause-node":
            return await maybe(self._kubelet_op("pause_node", req["node"]))
        if op == "unpause-node":
            return await maybe(self._kubelet_op("unpause_node", req["node"]))
        if op == "set":
            self.config.extra[req["key"]] = req["value"]
            if req["key"] == "watch_window":
                self.store.window = max(1, int(req["value"]))
            if req["key"] == "event_ttl":
                self.gc.event_ttl = float(req["value"])
            return "ok"
        raise ApiError(400, "BadRequest", "unknown control op %r" % op)

    def write_kubeconfig(self):
        c = self.config
        ca = base64.b64encode(c.ca_pem.encode()).decode()
        text = ("apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n"
                "    certificate-authority-data: %s\n    server: https://%s:%d\n"
                "  name: kubesim\ncontexts:\n- context:\n    cluster: kubesim\n"
                "    namespace: default\n    user: admin\n  name: kubesim\n"
                "current-context: kubesim\npreferences: {}\nusers:\n- name: admin\n"
                "  user:\n    token: %s\n" % (ca, c.api_host, c.api_port, self.admin_token))
        p = os.path.join(c.dir, "kubeconfig")
        with open(p + ".tmp", "w") as f:
            f.write(text)
        os.chmod(p + ".tmp", 0o600)
        os.replace(p + ".tmp", p)

    async def run(self):
        self.bootstrap()
        self.jobs.start()
        self.gc.start()
        await self.start_kubelet()
        await self.listen()
        self.write_kubeconfig()
        sock = os.path.join(self.config.dir, "control.sock")
        if os.path.exists(sock):
            os.unlink(sock)
        ctl = await asyncio.start_unix_server(self.control, path=sock)
        loop = asyncio.get_event_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stopping.set)
        log.info("kubesim ready: https://%s:%d (pid %d)", self.config.api_host,
                 self.config.api_port, os.getpid())
        await self.stopping.wait()
        log.info("shutting down (peak RSS %d MB)",
                 resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
        ctl.close()
        await self.stop_listening()
        if self.kubelet is not None and hasattr(self.kubelet, "shutdown"):
            try:
                await asyncio.wait_for(maybe(self.kubelet.shutdown()), 30)
            except Exception:
                log.exception("kubelet shutdown failed")
        try:
            os.unlink(sock)
        except OSError:
            pass


def freeze_old_objects(loop):
    """Python's full (generation 2) collection stops the loop while it scans every object:
    with 1,000 MPIJobs' objects stored that was 70-190 ms every ~3 s, then 480 ms, each
    pause stalling every request in flight (a Go API server's collector does not stop the
    world), and the operator's slowest syncs were exactly those. Objects that survive a
    generation-1 collection (tens of ms old: stored objects, connections, watch streams) are
    moved to the permanent generation, so a full collection scans only what is newer. Such
    an object that later becomes part of an unreferenced reference cycle is not freed:
    stored objects hold no cycles and reference counting frees them; peak RSS was 181 vs
    178 MB after the 1,000-job bench, 52 vs 50 MB after controller_lifecycle. Pauses over
    20 ms are logged."""
    started = [0.0]

    def on_gc(phase, info):
        if phase == "start":
            started[0] = time.monotonic()
            return
        ms = (time.monotonic() - started[0]) * 1000
        if ms > 20:
            log.info("garbage collection (generation %d) stopped the loop for %.0f ms",
                     info["generation"], ms)
        if info["generation"] >= 1:
            loop.call_soon(gc.freeze)
    gc.callbacks.append(on_gc)


def main(d):
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s.%(msecs)03d %(name)s %(levelname)s %(message)s",
                        datefmt="%H:%M:%S")
    config = Config.load(d)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    freeze_old_objects(loop)
    server = Server(config)
    prof_path = os.environ.get("KUBESIM_PROFILE")
    if prof_path:
        # KUBESIM_PROFILE=FILE (set for `kubesim up`): cProfile the daemon, pstats to FILE
        # at shutdown (read with `python3 -m pstats FILE`). CPU time, not wall time: on a
        # loaded machine wall time mostly measures waiting for a CPU inside syscalls.
        import cProfile
        prof = cProfile.Profile(time.process_time)
        prof.enable()
    try:
        loop.run_until_complete(server.run())
    finally:
        if prof_path:
            prof.disable()
            prof.dump_stats(prof_path)
    loop.close()
    return 0
