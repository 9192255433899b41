"""kubesim's one RFC 3339 formatter: UTC timestamps as the API shows them
(`2026-01-01T00:00:00Z`, metav1.Time), with 6 fractional digits for metav1.MicroTime and
9 for the CRI log lines and podinit's events. Imports only `time`: podinit.py, a
standalone pid 1 run with `python3 -I -S`, loads this file by path too."""
import time


def rfc3339(t=None, digits=0, nanos=None):
    """Epoch seconds t (default: now) in RFC 3339 UTC, with `digits` fractional digits
    (0: none) taken from t's fraction, or from `nanos` when given (an integer t with its
    nanoseconds, as protobuf's Timestamp carries them)."""
    if t is None:
        t = time.time()
    s = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))
    if digits:
        frac = nanos // 10 ** (9 - digits) if nanos is not None else int((t % 1) * 10 ** digits)
        s += ".%0*d" % (digits, frac)
    return s + "Z"
