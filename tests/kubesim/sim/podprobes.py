"""Container probes on a schedule, as the kubelet's prober runs them: a startup, readiness
and liveness loop per running container (initialDelaySeconds, periodSeconds,
successThreshold, failureThreshold), the container's Started and Ready from their
results, Unhealthy events, and a restart when a liveness or startup probe fails. One
attempt (exec, tcpSocket, httpGet) is sim/probes.py's run_probe."""
import asyncio


class WorkerProbes:
    """PodWorker's probes (a part of sim/kubelet.py's PodWorker; self is the worker)."""

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
