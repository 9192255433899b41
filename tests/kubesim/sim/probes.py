"""Container probes (exec, tcpSocket, httpGet, grpc unsupported) as the kubelet runs them."""
import asyncio

from .exec import run_in_container


def _port(c, p):
    if isinstance(p, int) or (isinstance(p, str) and p.isdigit()):
        return int(p)
    for cp in c.spec.get("ports") or []:
        if cp.get("name") == p:
            return int(cp["containerPort"])
    return None


async def run_probe(w, c, pr):
    """Returns (ok, output) for one probe attempt."""
    timeout = float(pr.get("timeoutSeconds", 1))
    if "exec" in pr:
        argv = pr["exec"].get("command") or []
        if not argv:
            return False, "no command"
        code, out = await run_in_container(w, c, argv, timeout)
        if code is None:
            return False, "command %r timed out" % argv
        return code == 0, out if code == 0 else (out or "command exited with %d" % code)
    host = w.ip
    if "tcpSocket" in pr:
        port = _port(c, pr["tcpSocket"].get("port"))
        if port is None:
            return False, "unknown port %r" % pr["tcpSocket"].get("port")
        try:
            _r, wr = await asyncio.wait_for(
                asyncio.open_connection(pr["tcpSocket"].get("host") or host, port), timeout)
            wr.close()
            return True, ""
        except (OSError, asyncio.TimeoutError) as e:
            return False, "dial tcp %s:%d: %s" % (host, port, e.strerror if isinstance(
                e, OSError) and e.strerror else "i/o timeout")
    if "httpGet" in pr:
        hg = pr["httpGet"]
        port = _port(c, hg.get("port"))
        if port is None:
            return False, "unknown port %r" % hg.get("port")
        import aiohttp
        url = "%s://%s:%d%s" % (hg.get("scheme", "HTTP").lower(), hg.get("host") or host, port,
                                hg.get("path", "/"))
        headers = {h["name"]: h["value"] for h in hg.get("httpHeaders") or []}
        try:
            async with aiohttp.ClientSession() as s:
                async with s.get(url, headers=headers, ssl=False,
                                 timeout=aiohttp.ClientTimeout(total=timeout)) as r:
                    await r.read()
                    if 200 <= r.status < 400:
                        return True, ""
                    return False, "HTTP probe failed with statuscode: %d" % r.status
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as e:
            return False, 'Get "%s": %s' % (url, e or "context deadline exceeded")
    return False, "unsupported probe handler"
