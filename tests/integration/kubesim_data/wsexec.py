#!/usr/bin/python3
"""Minimal exec WebSocket client for kubesim_exec.sh (an independent peer besides kubectl):
wsexec.py KUBECONFIG NS POD PROTOCOLS STDIN_TEXT|- CMD...
Prints one JSON object: protocol, http status, first message, stdout, stderr, status
(channel 3, parsed if JSON), close code, and whether a ping was answered."""
import asyncio
import base64
import json
import ssl
import sys
import tempfile
from urllib.parse import urlencode

import aiohttp
import yaml


async def main():
    kc, ns, pod, protos, stdin = sys.argv[1:6]
    cmd = sys.argv[6:]
    cfg = yaml.safe_load(open(kc))
    cl = cfg["clusters"][0]["cluster"]
    token = cfg["users"][0]["user"]["token"]
    ca = base64.b64decode(cl["certificate-authority-data"])
    with tempfile.NamedTemporaryFile(suffix=".crt") as f:
        f.write(ca)
        f.flush()
        ctx = ssl.create_default_context(cafile=f.name)
    q = [("command", c) for c in cmd] + [("stdout", "true"), ("stderr", "true")]
    if stdin != "-":
        q.append(("stdin", "true"))
    url = "%s/api/v1/namespaces/%s/pods/%s/exec?%s" % (cl["server"], ns, pod, urlencode(q))
    res = {"protocol": None, "http": None, "first": None, "stdout": "", "stderr": "",
           "status": None, "close": None, "pong": False}
    b64 = "base64" in protos
    async with aiohttp.ClientSession() as s:
        try:
            ws = await s.ws_connect(url, protocols=protos.split(","), ssl=ctx, autoping=False,
                                    headers={"Authorization": "Bearer " + token})
        except aiohttp.WSServerHandshakeError as e:
            res["http"] = e.status
            print(json.dumps(res))
            return
        res["http"] = 101
        res["protocol"] = ws.protocol
        await ws.ping(b"kubesim")
        if stdin != "-":
            data = stdin.encode()
            if b64:
                await ws.send_str("0" + base64.b64encode(data).decode())
            else:
                await ws.send_bytes(b"\x00" + data)
                if ws.protocol.startswith("v5"):
                    await ws.send_bytes(b"\xff\x00")
        async for m in ws:
            if m.type == aiohttp.WSMsgType.PONG:
                res["pong"] = m.data == b"kubesim"
                continue
            if m.type == aiohttp.WSMsgType.TEXT and b64:
                ch, data = ord(m.data[0]) - 0x30, base64.b64decode(m.data[1:])
            elif m.type == aiohttp.WSMsgType.BINARY:
                ch, data = m.data[0], m.data[1:]
            else:
                continue
            if res["first"] is None:
                res["first"] = [ch, len(data)]
            if ch == 1:
                res["stdout"] += data.decode(errors="replace")
            elif ch == 2:
                res["stderr"] += data.decode(errors="replace")
            elif ch == 3:
                try:
                    res["status"] = json.loads(data)
                except ValueError:
                    res["status"] = data.decode(errors="replace")
        res["close"] = ws.close_code
    print(json.dumps(res, sort_keys=True))


asyncio.run(main())
