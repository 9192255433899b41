#!/usr/bin/env python3
"""test_lib_fakeapi.py - a small fake Kubernetes API server (stdlib only) used by
test_lib_client.c: generic namespaced CRUD on any /api or /apis path, list with
labelSelector/limit/continue, streaming watches with resourceVersion and 410,
merge and JSON patch, bearer-token auth over TLS (openssl-generated CA), and
fault injection (/fault/...) for retries, dropped watches and compaction, requests
whose connection is closed without a reply, and idle keep-alive connections closed.

  test_lib_fakeapi.py --dir D [--tls] [--token T]
writes D/port once listening (and D/ca.crt, D/wrong-ca.crt with --tls)."""
import argparse, json, os, re, socket, ssl, subprocess, sys, threading, time, urllib.parse, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# merge patch (RFC 7386) and JSON patch (RFC 6902): kubesim's, one copy for both test servers
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kubesim"))
from sim.errors import ApiError  # noqa: E402
from sim.patch import json_patch, merge_patch  # noqa: E402

LOCK = threading.Condition()
STORE = {}          # (coll, name) -> obj ; coll = "/api/v1/namespaces/ns/configmaps"
LOG = []            # (rv, type, coll, obj)
STATE = {"rv": 100, "compacted": 0, "faults": [], "token": None, "conns": set(), "requests": 0,
         "last_delete": None, "watch_socks": set(), "hits": {}, "socks": set()}

PATH_RE = re.compile(r"^(/api/v1|/apis/[^/]+/[^/]+)(?:/namespaces/([^/]+))?/([a-z0-9]+)(?:/([^/]+))?(?:/(status))?$")

def status(code, reason, message, extra=None):
    st = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
          "reason": reason, "code": code}
    if extra:
        st["details"] = extra
    return st

def match_labels(obj, sel):
    labels = obj.get("metadata", {}).get("labels") or {}
    for term in filter(None, sel.split(",")):
        if "!=" in term:
            k, v = term.split("!=", 1)
            if labels.get(k) == v:
                return False
        elif "=" in term:
            k, v = term.split("=", 1)
            if labels.get(k.rstrip("=")) != v.lstrip("="):
                return False
        elif labels.get(term) is None:
            return False
    return True

def record(kind, coll, obj):
    STATE["rv"] += 1
    obj["metadata"]["resourceVersion"] = str(STATE["rv"])
    LOG.append((STATE["rv"], kind, coll, json.loads(json.dumps(obj))))
    LOCK.notify_all()

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send_json(self, code, obj, headers=None):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def handle_one_request(self):
        with LOCK:
            STATE["socks"].add(self.connection)
        super().handle_one_request()

    def dispatch(self, method):
        # counted once a request arrived: a previous client's connection whose thread comes
        # back to wait for its next request (and finds EOF) is no connection of this client's
        STATE["conns"].add(id(self.connection))
        u = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(u.query, keep_blank_values=True)
        if u.path.startswith("/fault/"):
            return self.fault(u.path, q)
        with LOCK:
            STATE["requests"] += 1
            STATE["hits"][method] = STATE["hits"].get(method, 0) + 1
        tok = STATE["token"]
        if tok and self.headers.get("Authorization") != "Bearer " + tok and not self.cert_user():
            self.body()
            return self.send_json(401, status(401, "Unauthorized", "Unauthorized"))
        with LOCK:
            if STATE["faults"] and STATE["faults"][0][0] == "garbage":
                body = STATE["faults"].pop(0)[1].encode()
                self.body()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            if STATE["faults"] and STATE["faults"][0][0] == "drop":
                STATE["faults"].pop(0)
                self.body()
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            if STATE["faults"]:
                code, retry_after = STATE["faults"].pop(0)
                self.body()
                hdr = {"Retry-After": str(retry_after)} if retry_after is not None else {}
                reason = {429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable"}.get(code, "Unknown")
                return self.send_json(code, status(code, reason, "injected fault"), hdr)
        m = PATH_RE.match(u.path)
        if not m:
            return self.send_json(404, status(404, "NotFound", "the server could not find the requested resource"))
        prefix, ns, res, name, sub = m.groups()
        coll = prefix + ("/namespaces/" + ns if ns else "") + "/" + res
        try:
            if method == "GET" and name is None:
                if q.get("watch", [""])[0] in ("1", "true"):
                    return self.watch(prefix, ns, res, q)
                return self.list(prefix, ns, res, q)
            return getattr(self, "op_" + method.lower())(coll, ns, name, sub)
        except (BrokenPipeError, ConnectionResetError):
            return

    def cert_user(self):
        """The CN of a verified client certificate, or None."""
        try:
            cert = self.connection.getpeercert()
        except (AttributeError, ValueError):
            return None
        for rdn in (cert or {}).get("subject", ()):
            for k, v in rdn:
                if k == "commonName":
                    return v
        return None

    def fault(self, path, q):
        self.body()
        with LOCK:
            if path == "/fault/fail":
                ra = q.get("retry_after", [None])[0]
                for _ in range(int(q.get("n", ["1"])[0])):
                    STATE["faults"].append((int(q.get("code", ["503"])[0]), ra))
            elif path == "/fault/garbage":
                STATE["faults"].append(("garbage", q.get("body", ["{not json"])[0]))
            elif path == "/fault/drop-watches":
                for s in list(STATE["watch_socks"]):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                STATE["watch_socks"].clear()
            elif path == "/fault/drop":
                for _ in range(int(q.get("n", ["1"])[0])):
                    STATE["faults"].append(("drop", None))
            elif path == "/fault/close-idle":
                for s in list(STATE["socks"]):
                    if s is not self.connection and s not in STATE["watch_socks"]:
                        try:
                            s.shutdown(socket.SHUT_RDWR)
                        except OSError:
                            pass
                STATE["socks"] = {self.connection}
            elif path == "/fault/compact":
                STATE["compacted"] = STATE["rv"]
            elif path == "/fault/token":
                STATE["token"] = q["value"][0]
            elif path == "/fault/reset-stats":
                STATE["conns"].clear()
                STATE["requests"] = 0
                STATE["hits"] = {}
            stats = {"connections": len(STATE["conns"]), "requests": STATE["requests"], "hits": STATE["hits"],
                     "last_delete": STATE["last_delete"], "rv": STATE["rv"], "watches": len(STATE["watch_socks"])}
        self.send_json(200, stats)

    def list(self, prefix, ns, res, q):
        sel = q.get("labelSelector", [""])[0]
        limit = int(q.get("limit", ["0"])[0] or 0)
        cont = q.get("continue", [""])[0]
        with LOCK:
            items = [o for (c, n), o in sorted(STORE.items()) if self.in_scope(c, prefix, ns, res) and match_labels(o, sel)]
            rv = str(STATE["rv"])
        start = 0
        if cont:
            try:
                start, rv = int(cont.split(":")[0]), cont.split(":")[1]
            except (ValueError, IndexError):
                return self.send_json(400, status(400, "BadRequest", "invalid continue token"))
            if int(rv) < STATE["compacted"]:
                return self.send_json(410, status(410, "Expired", "continue token expired"))
        page = items[start:start + limit] if limit else items[start:]
        meta = {"resourceVersion": rv}
        if limit and start + limit < len(items):
            meta["continue"] = "%d:%s" % (start + limit, rv)
        self.send_json(200, {"kind": "List", "apiVersion": "v1", "metadata": meta, "items": page})

    @staticmethod
    def in_scope(coll, prefix, ns, res):
        return coll.startswith(prefix + "/") and coll.endswith("/" + res) and (not ns or coll == "%s/namespaces/%s/%s" % (prefix, ns, res))

    def watch(self, prefix, ns, res, q):
        sel = q.get("labelSelector", [""])[0]
        rv = int(q.get("resourceVersion", ["0"])[0] or 0)
        timeout = int(q.get("timeoutSeconds", ["60"])[0] or 60)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        sock = self.connection
        def chunk(obj):
            data = (json.dumps(obj) + "\n").encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        with LOCK:
            STATE["watch_socks"].add(sock)
        try:
            if rv and rv < STATE["compacted"]:
                chunk({"type": "ERROR", "object": status(410, "Expired", "too old resource version: %d (%d)" % (rv, STATE["compacted"]))})
                self.wfile.write(b"0\r\n\r\n")
                return
            if q.get("allowWatchBookmarks", [""])[0] == "true":
                chunk({"type": "BOOKMARK", "object": {"kind": "ConfigMap", "metadata": {"resourceVersion": str(max(rv, 1))}}})
            end = time.time() + timeout
            pos = 0
            while time.time() < end:
                with LOCK:
                    if sock not in STATE["watch_socks"]:
                        return
                    evs = [e for e in LOG[pos:] if e[0] > rv]
                    pos = len(LOG)
                    if not evs:
                        LOCK.wait(0.2)
                for (erv, kind, coll, obj) in evs:
                    if self.in_scope(coll, prefix, ns, res) and match_labels(obj, sel):
                        chunk({"type": kind, "object": obj})
                    rv = erv
            self.wfile.write(b"0\r\n\r\n")
        finally:
            with LOCK:
                STATE["watch_socks"].discard(sock)

    def op_get(self, coll, ns, name, sub):
        with LOCK:
            obj = STORE.get((coll, name))
        if obj is None:
            return self.send_json(404, status(404, "NotFound", '"%s" not found' % name))
        self.send_json(200, obj)

    def op_post(self, coll, ns, name, sub):
        try:
            obj = json.loads(self.body())
        except ValueError:
            return self.send_json(400, status(400, "BadRequest", "invalid JSON body"))
        n = obj.get("metadata", {}).get("name")
        if not n:
            return self.send_json(422, status(422, "Invalid", "metadata.name: Required value"))
        with LOCK:
            if (coll, n) in STORE:
                return self.send_json(409, status(409, "AlreadyExists", '"%s" already exists' % n))
            obj["metadata"].update({"uid": str(uuid.uuid4()), "creationTimestamp": "2026-11-30T06:00:00Z"})
            if ns:
                obj["metadata"]["namespace"] = ns
            record("ADDED", coll, obj)
            STORE[(coll, n)] = obj
        self.send_json(201, obj)

    def op_put(self, coll, ns, name, sub):
        obj = json.loads(self.body())
        with LOCK:
            cur = STORE.get((coll, name))
            if cur is None:
                return self.send_json(404, status(404, "NotFound", '"%s" not found' % name))
            want = obj.get("metadata", {}).get("resourceVersion")
            if want and want != cur["metadata"]["resourceVersion"]:
                return self.send_json(409, status(409, "Conflict", "the object has been modified; please apply your changes to the latest version and try again"))
            if sub == "status":
                new = dict(cur)
                new["status"] = obj.get("status")
            else:
                new = obj
                new["metadata"] = dict(obj["metadata"], uid=cur["metadata"]["uid"])
                if "status" in cur:
                    new["status"] = cur["status"]
            record("MODIFIED", coll, new)
            STORE[(coll, name)] = new
        self.send_json(200, new)

    def op_patch(self, coll, ns, name, sub):
        ct = self.headers.get("Content-Type", "")
        patch = json.loads(self.body())
        with LOCK:
            cur = STORE.get((coll, name))
            if cur is None:
                return self.send_json(404, status(404, "NotFound", '"%s" not found' % name))
            try:
                if ct == "application/merge-patch+json":
                    new = merge_patch(cur, patch)
                elif ct == "application/json-patch+json":
                    new = json_patch(cur, patch)
                else:
                    return self.send_json(415, status(415, "UnsupportedMediaType", "unsupported patch type " + ct))
            except (KeyError, IndexError, ValueError, ApiError) as e:
                return self.send_json(422, status(422, "Invalid", "patch failed: %s" % e))
            record("MODIFIED", coll, new)
            STORE[(coll, name)] = new
        self.send_json(200, new)

    def op_delete(self, coll, ns, name, sub):
        b = self.body()
        with LOCK:
            STATE["last_delete"] = json.loads(b) if b else None
            cur = STORE.pop((coll, name), None)
            if cur is None:
                return self.send_json(404, status(404, "NotFound", '"%s" not found' % name))
            record("DELETED", coll, cur)
        self.send_json(200, cur)

    def do_GET(self): self.dispatch("GET")
    def do_POST(self): self.dispatch("POST")
    def do_PUT(self): self.dispatch("PUT")
    def do_PATCH(self): self.dispatch("PATCH")
    def do_DELETE(self): self.dispatch("DELETE")

def gen_certs(d):
    def run(*a):
        subprocess.run(a, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for ca in ("ca", "wrong-ca"):
        run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-days", "2", "-subj", "/CN=" + ca, "-keyout", d + "/" + ca + ".key", "-out", d + "/" + ca + ".crt")
    run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj",
        "/CN=apiserver", "-keyout", d + "/server.key", "-out", d + "/server.csr")
    with open(d + "/ext.cnf", "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:apiserver.test\n")
    run("openssl", "x509", "-req", "-in", d + "/server.csr", "-CA", d + "/ca.crt", "-CAkey", d + "/ca.key",
        "-CAcreateserial", "-days", "2", "-extfile", d + "/ext.cnf", "-out", d + "/server.crt")
    run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj",
        "/CN=admin", "-keyout", d + "/client.key", "-out", d + "/client.csr")
    run("openssl", "x509", "-req", "-in", d + "/client.csr", "-CA", d + "/ca.crt", "-CAkey", d + "/ca.key",
        "-CAcreateserial", "-days", "2", "-out", d + "/client.crt")

class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # resets and failed TLS handshakes are part of the tests

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--tls", action="store_true")
    ap.add_argument("--token")
    a = ap.parse_args()
    STATE["token"] = a.token
    srv = Server(("127.0.0.1", 0), H)
    if a.tls:
        gen_certs(a.dir)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.dir + "/server.crt", a.dir + "/server.key")
        ctx.verify_mode = ssl.CERT_OPTIONAL  # client certificates authenticate like tokens
        ctx.load_verify_locations(a.dir + "/ca.crt")
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(a.dir + "/port.tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(a.dir + "/port.tmp", a.dir + "/port")
    srv.serve_forever()

if __name__ == "__main__":
    main()
