"""pods/log: container logs from the CRI-format files podinit writes
(DIR/node/pods/<uid>/logs/<container>/<run>.log), with follow, previous,
tailLines, timestamps, sinceSeconds/sinceTime and limitBytes."""
import asyncio
import calendar
import os
import time
from urllib.parse import parse_qs

from aiohttp import web

from .errors import ApiError
from .exec import pick_container, qbool


def _parse_ts(ts):
    """RFC3339(Nano) -> epoch seconds (float)."""
    try:
        base, frac = (ts.rstrip("Z").split(".") + ["0"])[:2]
        return calendar.timegm(time.strptime(base, "%Y-%m-%dT%H:%M:%S")) + float("0." + frac)
    except (ValueError, TypeError):
        return 0.0


class LogReader:
    """Turns CRI log lines into output lines (joining partial P lines)."""

    def __init__(self, timestamps, since):
        self.timestamps = timestamps
        self.since = since
        self.partial = b""
        self.partial_ts = b""

    def feed_line(self, raw):
        parts = raw.split(b" ", 3)
        if len(parts) < 3:
            return None
        ts, tag = parts[0], parts[2]
        content = parts[3] if len(parts) == 4 else b""
        if tag == b"P":
            if not self.partial:
                self.partial_ts = ts
            self.partial += content
            return None
        if self.partial:
            content, ts = self.partial + content, self.partial_ts
            self.partial = b""
        if self.since and _parse_ts(ts.decode()) < self.since:
            return None
        return (ts + b" " if self.timestamps else b"") + content + b"\n"


def log_run(c, previous, cname, name):
    """The run whose log is asked for, chosen as the kubelet's validateContainerLogStatus
    chooses a container: --previous is the container of lastState.terminated; otherwise
    the running container, else the terminated one (or lastState's when that one never
    got a container), else lastState's (so during CrashLoopBackOff both name the run that
    crashed last), else the container is waiting to start. Runs are found by containerID,
    from the same state the pod's status shows, so a restart between two requests cannot
    make --previous return the current run's log."""
    last = (c.last_state or {}).get("terminated") or {}
    st = c.state or {}
    if previous:
        cid = last.get("containerID")
        if not cid or cid not in c.run_of:
            raise ApiError(400, "BadRequest", 'previous terminated container "%s" in pod "%s" '
                           'not found' % (cname, name))
        return c.run_of[cid]
    if "running" in st:
        cid = c.container_id
    elif "terminated" in st and st["terminated"].get("containerID"):
        cid = st["terminated"]["containerID"]
    elif last.get("containerID"):
        cid = last["containerID"]
    else:
        reason = (st.get("waiting") or {}).get("reason", "ContainerCreating")
        if reason in ("ErrImagePull", "ImagePullBackOff"):
            reason = "trying and failing to pull image"
        raise ApiError(400, "BadRequest", 'container "%s" in pod "%s" is waiting to start: %s'
                       % (cname, name, reason))
    if cid not in c.run_of:
        raise ApiError(400, "BadRequest", 'container "%s" in pod "%s" is waiting to start: '
                       'ContainerCreating' % (cname, name))
    return c.run_of[cid]


async def handle_log(k, request, ns, name):
    q = parse_qs(request.query_string, keep_blank_values=True)
    pod = k.store.get("pods", ns, name)
    spec = pick_container(None, pod, (q.get("container") or [""])[-1], for_logs=True)
    cname = spec["name"]
    follow, previous = qbool(q, "follow"), qbool(q, "previous")
    timestamps = qbool(q, "timestamps")
    tail = int(q["tailLines"][-1]) if q.get("tailLines") else None
    limit = int(q["limitBytes"][-1]) if q.get("limitBytes") else None
    since = 0.0
    if q.get("sinceSeconds"):
        since = time.time() - int(q["sinceSeconds"][-1])
    elif q.get("sinceTime"):
        since = _parse_ts(q["sinceTime"][-1])
    w = k.worker_for(ns, name)
    c = w.container(cname) if w else None
    if c is None or not c.ever_ran:
        reason = "ContainerCreating"
        if c is not None and "waiting" in c.state:
            reason = c.state["waiting"].get("reason", reason)
        if reason in ("ErrImagePull", "ImagePullBackOff"):
            reason = "trying and failing to pull image"
        raise ApiError(400, "BadRequest", 'container "%s" in pod "%s" is waiting to start: %s'
                       % (cname, name, reason))
    run = log_run(c, previous, cname, name)
    if previous:
        follow = False
    path = w.log_path(c, run)
    resp = web.StreamResponse(status=200, headers={"Content-Type": "text/plain"})
    resp.enable_chunked_encoding()
    await resp.prepare(request)
    rd = LogReader(timestamps, since)
    sent = 0
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        data = b""
    cut = data.rfind(b"\n") + 1
    pos = cut
    out = [x for x in (rd.feed_line(l) for l in data[:cut].split(b"\n")[:-1]) if x]
    if tail is not None:
        out = out[-tail:] if tail > 0 else []
    chunk = b"".join(out)
    if limit is not None:
        chunk = chunk[:limit]
    if chunk:
        await resp.write(chunk)
        sent += len(chunk)
    if follow:
        while limit is None or sent < limit:
            finished = w.gone or c.restart_count != run or not c.running
            try:
                with open(path, "rb") as f:
                    f.seek(pos)
                    more = f.read()
            except OSError:
                more = b""
            cut = more.rfind(b"\n") + 1
            if cut:
                pos += cut
                lines = [x for x in (rd.feed_line(l) for l in more[:cut].split(b"\n")[:-1]) if x]
                chunk = b"".join(lines)
                if limit is not None:
                    chunk = chunk[:limit - sent]
                if chunk:
                    await resp.write(chunk)
                    sent += len(chunk)
                continue
            if finished:
                break
            await asyncio.sleep(0.1)
    await resp.write_eof()
    return resp
