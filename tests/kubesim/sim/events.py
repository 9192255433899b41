"""events.k8s.io/v1 Event as a view over core v1 Events (one storage, two APIs)."""

EVENTS_V1 = "events.events.k8s.io"     # its resource key; stored as core "events"


def core_to_v1(ev):
    md = dict(ev.get("metadata") or {})
    out = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": md,
           "eventTime": ev.get("eventTime"), "reason": ev.get("reason"),
           "regarding": ev.get("involvedObject"), "note": ev.get("message"),
           "type": ev.get("type"), "reportingController": ev.get("reportingComponent") or
           (ev.get("source") or {}).get("component", ""),
           "reportingInstance": ev.get("reportingInstance") or
           (ev.get("source") or {}).get("host", ""),
           "action": ev.get("action"),
           "deprecatedSource": ev.get("source"), "deprecatedFirstTimestamp":
           ev.get("firstTimestamp"), "deprecatedLastTimestamp": ev.get("lastTimestamp"),
           "deprecatedCount": ev.get("count")}
    if ev.get("related"):
        out["related"] = ev["related"]
    if ev.get("series"):
        out["series"] = ev["series"]
    return {k: v for k, v in out.items() if v is not None}


def v1_to_core(ev):
    md = dict(ev.get("metadata") or {})
    out = {"apiVersion": "v1", "kind": "Event", "metadata": md,
           "involvedObject": ev.get("regarding") or {}, "reason": ev.get("reason"),
           "message": ev.get("note"), "type": ev.get("type"), "eventTime": ev.get("eventTime"),
           "reportingComponent": ev.get("reportingController"),
           "reportingInstance": ev.get("reportingInstance"), "action": ev.get("action"),
           "source": ev.get("deprecatedSource") or {"component": ev.get("reportingController", "")},
           "firstTimestamp": ev.get("deprecatedFirstTimestamp"),
           "lastTimestamp": ev.get("deprecatedLastTimestamp"),
           "count": ev.get("deprecatedCount")}
    if ev.get("related"):
        out["related"] = ev["related"]
    if ev.get("series"):
        out["series"] = ev["series"]
    return {k: v for k, v in out.items() if v is not None}
