"""The subset of Kubernetes JSONPath used by printer columns: .a.b, [n], [-n], [a:b], [*],
['key'], [?(@.k=="v")] filters, .* wildcards."""
import re

_TOK = re.compile(
    r"""\.(?P<key>[A-Za-z0-9_\-/$]+)"""
    r"""|\[(?P<idx>-?\d+|\*)\]"""
    r"""|\[(?P<lo>-?\d*):(?P<hi>-?\d*)\]"""
    r"""|\['(?P<sq>[^']*)'\]|\["(?P<dq>[^"]*)"\]"""
    r"""|\[\?\(@\.(?P<fpath>[A-Za-z0-9_.\-]+)\s*(?P<op>==|!=)\s*"""
    r"""(?:"(?P<v1>[^"]*)"|'(?P<v2>[^']*)'|(?P<v3>[A-Za-z0-9_.\-]+))\)\]"""
    r"""|(?P<star>\.\.?\*)""")


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


def _field(e, dotted):
    v = e
    for p in dotted.split("."):
        v = v.get(p) if isinstance(v, dict) else None
    return v


def evaluate(obj, path):
    """Returns the list of values the path selects."""
    cur = [obj]
    for m in _parse(path):
        g = m.groupdict()
        key = g["key"] if g["key"] is not None else (g["sq"] if g["sq"] is not None
                                                     else g["dq"])
        nxt = []
        for c in cur:
            if key is not None:
                if isinstance(c, dict) and key in c:
                    nxt.append(c[key])
            elif g["idx"] is not None:
                if isinstance(c, list):
                    if g["idx"] == "*":
                        nxt.extend(c)
                    else:
                        i = int(g["idx"])
                        if -len(c) <= i < len(c):
                            nxt.append(c[i])
            elif g["lo"] is not None:
                if isinstance(c, list):
                    lo = int(g["lo"]) if g["lo"] else None
                    hi = int(g["hi"]) if g["hi"] else None
                    nxt.extend(c[lo:hi])
            elif g["fpath"] is not None:
                want = next(x for x in (g["v1"], g["v2"], g["v3"]) if x is not None)
                if isinstance(c, list):
                    for e in c:
                        v = _field(e, g["fpath"])
                        sv = v if isinstance(v, str) else ("" if v is None else str(v))
                        if (g["op"] == "==") == (sv == want):
                            nxt.append(e)
            else:
                if isinstance(c, dict):
                    nxt.extend(c.values())
                elif isinstance(c, list):
                    nxt.extend(c)
        cur = nxt
    return cur
