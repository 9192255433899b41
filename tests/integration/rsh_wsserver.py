#!/usr/bin/python3
"""rsh_wsserver.py - a throwaway pod-exec WebSocket server (aiohttp) for testing
mpi-rsh's exec client without kubesim: runs the exec'd command locally and speaks
v5/v4.channel.k8s.io like the API server (first [1], channels 1/2, Status on 3,
close 1000). --mode selects faults: v4pick, v5refuse403, abrupt, nostatus,
dropafter:N, noping, http:CODE, fail:N (503 for the first N upgrades), internal,
textframe, badclose, silent:S (send nothing for S seconds, then run), heartbeat
(server pings every 0.3 s and drops clients that do not pong), orphan (commands outlive
the stream), cutonce:S[:404] (a kubelet restart: the first stream is cut S seconds after
its start, without a status, and its command runs on; later upgrades are served normally,
or answered 404 with ":404").
Writes its port to --port-file. Loopback only."""
import argparse
import asyncio
import json
import os
import signal
import ssl
import sys

from aiohttp import web, WSMsgType

V5, V4 = "v5.channel.k8s.io", "v4.channel.k8s.io"


def status_json(rc):
    if rc == 0:
        return {"metadata": {}, "status": "Success"}
    return {"metadata": {}, "status": "Failure",
            "message": "command terminated with non-zero exit code: exit status %d" % rc,
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": str(rc)}]}}


class Server:
    def __init__(self, args):
        self.args = args
        self.mode = args.mode
        self.upgrades = 0
        self.log = open(args.log, "a") if args.log else None

    def note(self, msg):
        if self.log:
            self.log.write(msg + "\n")
            self.log.flush()

    def err(self, code, reason, message):
        body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": message, "reason": reason, "code": code}
        return web.json_response(body, status=code)

    async def exec_handler(self, req):
        self.upgrades += 1
        offered = [p.strip() for p in req.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
        tls = req.transport.get_extra_info("ssl_object") if req.transport else None
        self.note("upgrade %d offered=%s query=%s auth=%s tls-resumed=%s" % (
            self.upgrades, offered, req.query_string, "yes" if req.headers.get("Authorization") else "no",
            tls.session_reused if tls else "-"))
        if self.args.token and req.headers.get("Authorization") != "Bearer " + self.args.token:
            return self.err(401, "Unauthorized", "Unauthorized")
        m = self.mode
        if m.startswith("http:"):
            code = int(m.split(":")[1])
            reason = {403: "Forbidden", 404: "NotFound", 500: "InternalError", 429: "TooManyRequests"}.get(code, "Unknown")
            msg = {403: 'pods "%s" is forbidden: User "system:serviceaccount:default:x" cannot get resource "pods/exec"' % req.match_info["pod"],
                   404: 'pods "%s" not found' % req.match_info["pod"]}.get(code, "boom %d" % code)
            return self.err(code, reason, msg)
        if m.startswith("cutonce:") and m.endswith(":404") and self.upgrades > 1:
            return self.err(404, "NotFound", 'pods "%s" not found' % req.match_info["pod"])
        if m.startswith("fail:") and self.upgrades <= int(m.split(":")[1]):
            return self.err(503, "ServiceUnavailable", "try again")
        supported = [V4] if m in ("v4pick", "v5refuse403") else [V5, V4]
        if m == "v5refuse403" and V5 in offered:
            return web.Response(status=403, text="websocket: unsupported protocol v5 offered")
        proto = next((p for p in offered if p in supported), None)
        if proto is None:
            return web.Response(status=403, text="no supported protocol")
        ws = web.WebSocketResponse(protocols=[proto], autoping=(m != "noping"), max_msg_size=64 << 20,
                                   heartbeat=(0.3 if m == "heartbeat" else None))
        await ws.prepare(req)
        cmd = req.query.getall("command", [])
        want_in = req.query.get("stdin", "false").lower() not in ("false", "0")
        await self.session(ws, proto, cmd, want_in, req)
        return ws

    async def session(self, ws, proto, cmd, want_in, req):
        m = self.mode
        if m.startswith("silent:"):
            await asyncio.sleep(float(m.split(":")[1]))
        await ws.send_bytes(b"\x01")
        if m == "textframe":
            await ws.send_str("1hello")
        if m == "internal":
            await ws.send_bytes(b"\x03" + json.dumps({"metadata": {}, "status": "Failure",
                                "message": "Internal error occurred: error executing command in container: not found",
                                "reason": "InternalError", "code": 500}).encode())
            await ws.close()
            return
        proc = await asyncio.create_subprocess_exec(
            *cmd, stdin=asyncio.subprocess.PIPE if want_in else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)
        self.note("pid %d" % proc.pid)
        sent = [0]
        drop_after = int(m.split(":")[1]) if m.startswith("dropafter:") else -1
        abort = asyncio.Event()

        async def pump(stream, ch):
            while True:
                data = await stream.read(32768)
                if not data:
                    return
                if drop_after >= 0 and ch == 1 and sent[0] + len(data) > drop_after:
                    data = data[:max(0, drop_after - sent[0])]
                    if data:
                        await ws.send_bytes(bytes([ch]) + data)
                    abort.set()
                    return
                sent[0] += len(data) if ch == 1 else 0
                await ws.send_bytes(bytes([ch]) + data)

        async def reader():
            async for msg in ws:
                if msg.type == WSMsgType.BINARY and msg.data:
                    ch = msg.data[0]
                    if ch == 0 and proc.stdin:
                        proc.stdin.write(msg.data[1:])
                        await proc.stdin.drain()
                    elif ch == 255 and proto == V5 and proc.stdin:
                        self.note("stdin EOF")
                        proc.stdin.close()
                elif msg.type == WSMsgType.PING:
                    self.note("ping (not answered)")
                elif msg.type == WSMsgType.CLOSE:
                    break

        rtask = asyncio.ensure_future(reader())
        pumps = asyncio.gather(pump(proc.stdout, 1), pump(proc.stderr, 2))
        if m.startswith("cutonce:") and self.upgrades == 1:
            # a kubelet restart: the stream cut without a status, the command runs on
            await asyncio.wait([pumps], timeout=float(m.split(":")[1]))
            if not pumps.done():
                self.note("cut (command runs on)")
                req.transport.abort()
                asyncio.ensure_future(proc.wait())
                return
        done, _ = await asyncio.wait([pumps, asyncio.ensure_future(abort.wait()), rtask],
                                     return_when=asyncio.FIRST_COMPLETED)
        if abort.is_set() or (rtask in done and not pumps.done()):
            # dropped mid-output, or the client went away: kill the command, cut TCP
            self.note("abort (client gone=%s)" % (rtask in done))
            if m != "orphan":  # orphan: like a real kubelet, the command outlives the stream
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            req.transport.abort()
            return
        rc = await proc.wait()
        if rc < 0:
            rc = 128 - rc
        self.note("exit %d" % rc)
        if m != "nostatus":
            await ws.send_bytes(b"\x03" + json.dumps(status_json(rc)).encode())
        if m == "abrupt":
            req.transport.abort()
            return
        if m == "badclose":
            await ws.close(code=4000, message=b"bye")
            return
        await ws.close()
        rtask.cancel()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--mode", default="normal")
    ap.add_argument("--token")
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--client-ca", help="require a client certificate signed by this CA")
    ap.add_argument("--log")
    ap.add_argument("--tls13-only", action="store_true", help="refuse TLS 1.2 (a hardened API server)")
    args = ap.parse_args()
    srv = Server(args)
    app = web.Application()
    app.router.add_get("/api/v1/namespaces/{ns}/pods/{pod}/exec", srv.exec_handler)
    sslctx = None
    if args.cert:
        sslctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        sslctx.load_cert_chain(args.cert, args.key)
        sslctx.set_alpn_protocols(["http/1.1"])
        if args.tls13_only:
            sslctx.minimum_version = ssl.TLSVersion.TLSv1_3
        if args.client_ca:
            sslctx.verify_mode = ssl.CERT_REQUIRED
            sslctx.load_verify_locations(args.client_ca)

    async def start():
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=sslctx)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(port))
        os.rename(tmp, args.port_file)
        await asyncio.Event().wait()

    try:
        asyncio.run(start())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
