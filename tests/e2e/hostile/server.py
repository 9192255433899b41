#!/usr/bin/env python3
"""A hostile Kubernetes API server for the C clients (mpi-agent, mpi-operator, mpi-rsh).

    server.py MODE PORTFILE

Listens on 127.0.0.1 (an ephemeral port, written to PORTFILE) and answers every request
in the way MODE names. It never crashes on what clients send; it only misbehaves in
what it sends back. Modes:

  truncated       valid HTTP, Content-Length matches, JSON body cut in the middle
  short-body      Content-Length 100000, 300 bytes sent, then the connection closes
  wrong-types     well-formed JSON with wrong types everywhere (items a string,
                  metadata an array, phase a number, conditions an object, ...)
  enormous        a 256 MiB JSON body (one huge string), streamed in chunks
  huge-header     a 16 MiB response header line
  huge-status     403 with a metav1.Status whose message is 8 MiB with newlines and
                  control characters
  slow-drip       headers, then one body byte every 0.5 s, forever
  garbage         random bytes instead of HTTP
  deep-nesting    a JSON body nested 200000 arrays deep
  watch-garbage   lists are fine (empty); watch streams send broken events, a 32 MiB
                  event line, then ERROR events
  chunked-lie     chunked encoding with a chunk size far larger than what follows
  close           accepts and closes every connection at once
"""
import asyncio
import json
import os
import random
import sys

MODE = sys.argv[1]
PORTFILE = sys.argv[2]
MIB = 1024 * 1024


def head(code=200, ctype="application/json", length=None, extra=""):
    reason = {200: "OK", 403: "Forbidden", 101: "Switching Protocols"}.get(code, "X")
    h = "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n" % (code, reason, ctype)
    if length is not None:
        h += "Content-Length: %d\r\n" % length
    return (h + extra + "\r\n").encode()


def body_for(path):
    """A plausible reply for path (used by modes that corrupt a valid reply)."""
    if "/pods" in path and "/exec" not in path and "/log" not in path:
        pods = [{"metadata": {"name": "j-worker-%d" % i, "namespace": "default",
                              "labels": {"mpi_job_name": "j", "mpi_role_type": "worker"},
                              "resourceVersion": "5"},
                 "status": {"phase": "Running", "podIP": "10.0.0.%d" % (i + 1),
                            "conditions": [{"type": "Ready", "status": "True"}]}}
                for i in range(50)]
        return {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "5"},
                "items": pods}
    return {"kind": "List", "apiVersion": "v1", "metadata": {"resourceVersion": "5"}, "items": []}


WRONG = {"kind": "PodList", "apiVersion": 1, "metadata": ["resourceVersion", 5],
         "items": [
             {"metadata": ["j-worker-0"], "status": 7},
             {"metadata": {"name": 12, "labels": "mpi_job_name=j"},
              "status": {"phase": 3, "conditions": {"type": "Ready"}, "podIP": ["x"]}},
             {"metadata": {"name": "j-worker-1", "resourceVersion": {"a": 1}},
              "spec": {"containers": "worker"}, "status": {"phase": "Running",
                                                           "containerStatuses": "ready"}},
             "a string item", None, 3.5, [[[]]]]}


async def send_enormous(w):
    total = 256 * MIB
    pre = b'{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"'
    post = b'"}}]}'
    w.write(head(length=len(pre) + total + len(post)))
    w.write(pre)
    chunk = b"A" * MIB
    for _ in range(total // MIB):
        w.write(chunk)
        await w.drain()
    w.write(post)
    await w.drain()


async def watch_garbage(w):
    w.write(head(extra="Transfer-Encoding: chunked\r\n"))

    async def chunk(b):
        w.write(b"%x\r\n" % len(b) + b + b"\r\n")
        await w.drain()
    await chunk(b'{"type":"ADDED","object":"not an object"}\n')
    await chunk(b'{"type":7}\n{"type":"MODIFIED"\n')
    await chunk(b'\x00\xff\xfe garbage \n')
    big = b'{"type":"ADDED","object":{"metadata":{"name":"' + b"B" * (32 * MIB) + b'"}}}\n'
    for i in range(0, len(big), MIB):
        await chunk(big[i:i + MIB])
    await chunk(b'{"type":"ERROR","object":{"kind":"Status","code":500,"message":"boom"}}\n')
    await asyncio.sleep(2)
    await chunk(b'{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}}\n')
    w.write(b"0\r\n\r\n")
    await w.drain()


async def handle(r, w):
    try:
        while True:
            line = await asyncio.wait_for(r.readline(), 30)
            if not line:
                return
            req = line.decode("latin-1").split()
            path = req[1] if len(req) > 1 else "/"
            length = 0
            while True:
                h = await asyncio.wait_for(r.readline(), 30)
                if h in (b"\r\n", b"\n", b""):
                    break
                k, _, v = h.decode("latin-1").partition(":")
                if k.strip().lower() == "content-length":
                    length = int(v.strip() or 0)
            if length:
                await r.readexactly(min(length, 64 * MIB))
            watch = "watch=1" in path or "watch=true" in path
            if MODE == "close":
                return
            if MODE == "garbage":
                w.write(bytes(random.getrandbits(8) for _ in range(4096)))
                await w.drain()
                return
            if MODE == "truncated":
                b = json.dumps(body_for(path)).encode()
                b = b[:len(b) // 2]
                w.write(head(length=len(b)) + b)
            elif MODE == "short-body":
                w.write(head(length=100000) + json.dumps(body_for(path)).encode()[:300])
                await w.drain()
                return
            elif MODE == "wrong-types":
                b = json.dumps(WRONG).encode()
                w.write(head(length=len(b)) + b)
            elif MODE == "enormous":
                await send_enormous(w)
            elif MODE == "huge-header":
                w.write(b"HTTP/1.1 200 OK\r\nX-Big: " + b"h" * (16 * MIB) + b"\r\nContent-Length: 2\r\n\r\n{}")
            elif MODE == "huge-status":
                msg = ("line one\nline two\x1b[31m\r" + "M" * (8 * MIB))
                b = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                "code": 403, "reason": "Forbidden" + "R" * 100000,
                                "message": msg}).encode()
                w.write(head(403, length=len(b)) + b)
            elif MODE == "slow-drip":
                w.write(head(length=10 * MIB))
                await w.drain()
                while True:
                    w.write(b"{")
                    await w.drain()
                    await asyncio.sleep(0.5)
            elif MODE == "deep-nesting":
                b = b"[" * 200000 + b"]" * 200000
                w.write(head(length=len(b)) + b)
            elif MODE == "watch-garbage":
                if watch:
                    await watch_garbage(w)
                    return
                b = json.dumps(body_for("/x")).encode()
                w.write(head(length=len(b)) + b)
            elif MODE == "chunked-lie":
                w.write(head(extra="Transfer-Encoding: chunked\r\n") + b"7fffffff\r\n" + b"{" * 1000)
                await w.drain()
                return
            else:
                return
            await w.drain()
    except (asyncio.TimeoutError, ConnectionError, asyncio.IncompleteReadError, ValueError):
        pass
    finally:
        try:
            w.close()
        except Exception:
            pass


async def main():
    srv = await asyncio.start_server(handle, "127.0.0.1", 0, limit=MIB)
    port = srv.sockets[0].getsockname()[1]
    with open(PORTFILE + ".tmp", "w") as f:
        f.write("%d\n" % port)
    os.rename(PORTFILE + ".tmp", PORTFILE)
    async with srv:
        await srv.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
