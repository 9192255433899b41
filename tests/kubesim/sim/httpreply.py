"""The HTTP layer's JSON replies and query flags, shared by api.py, listwatch.py and
server.py: a JSON body, a metav1.Status for an ApiError, and apimachinery's bool rule for
query parameters."""
import json

from aiohttp import web


def jresp(obj, status=200):
    return web.Response(body=json.dumps(obj, separators=(",", ":")).encode(), status=status,
                        content_type="application/json")


def status_resp(e):
    return jresp(e.status(), e.code)


def qbool(q, name):
    """apimachinery bool rule: absent false; 0/false false; anything else true."""
    if name not in q:
        return False
    return q[name].lower() not in ("0", "false")
