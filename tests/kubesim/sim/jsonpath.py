"""The subset of Kubernetes JSONPath used by printer columns: .a.b, [n], [*], ['key'],
[?(@.k=="v")] filters."""
import re

_TOK = re.compile(r"""\.([A-Za-z0-9_\-/$]+)|\[(\d+|\*)\]|\['([^']*)'\]|\["([^"]*)"\]|"""
                  r"""\[\?\(@\.([A-Za-z0-9_.\-]+)\s*(==|!=)\s*(?:"([^"]*)"|'([^']*)'|"""
                  r"""([A-Za-z0-9_.\-]+))\)\]|\.\.?\*""")


def _parse(path):
    path = path.strip()
    if path.startswith("{") and path.endswith("}"):
        path = path[1:-1]
    if path.startswith("$"):
        path = path[1:]
    toks, pos = [], 0
    while pos < len(path):
        m = _TOK.match(path, pos)
        if not m:
            raise ValueError("unsupported jsonpath %r at %d" % (path, pos))
        toks.append(m)
        pos = m.end()
    return toks


def evaluate(obj, path):
    """Returns the list of values the path selects."""
    cur = [obj]
    for m in _parse(path):
        nxt = []
        key = m.group(1) or m.group(3) or m.group(4)
        for c in cur:
            if key is not None:
                if isinstance(c, dict) and key in c:
                    nxt.append(c[key])
            elif m.group(2) is not None:
                if isinstance(c, list):
                    if m.group(2) == "*":
                        nxt.extend(c)
                    elif int(m.group(2)) < len(c):
                        nxt.append(c[int(m.group(2))])
            elif m.group(5) is not None:
                want = m.group(7) if m.group(7) is not None else (
                    m.group(8) if m.group(8) is not None else m.group(9))
                if isinstance(c, list):
                    for e in c:
                        v = e
                        for p in m.group(5).split("."):
                            v = v.get(p) if isinstance(v, dict) else None
                        sv = v if isinstance(v, str) else ("" if v is None else str(v))
                        if (m.group(6) == "==") == (sv == want):
                            nxt.append(e)
            else:
                if isinstance(c, dict):
                    nxt.extend(c.values())
                elif isinstance(c, list):
                    nxt.extend(c)
        cur = nxt
    return cur
