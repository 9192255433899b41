"""Config: the simulator instance's settings shared by the API side and the node side."""
import hashlib
import json
import os

API_PORT = 6443
GATEWAY = "10.250.0.1"
POD_CIDR = "10.250.0.0/16"
# values of `kubesim up --tls-min-version` (kube-apiserver's flag names); tls.py maps them
TLS_MIN_VERSIONS = ("VersionTLS12", "VersionTLS13")


def check_seconds(key, value):
    """An error message if tunable `key` must be a number of seconds >= 0 and value is not."""
    if key not in ("exec_ready_delay", "watch_delay"):
        return None
    try:
        if float(value) >= 0:
            return None
    except ValueError:
        pass
    return "%s: want a number of seconds >= 0, got %r" % (key, value)


def netns_name(d):
    """Host network namespace name for instance directory d."""
    return "ks-%s-h" % hashlib.sha1(os.path.abspath(d).encode()).hexdigest()[:8]


class Config:
    """Settings of one kubesim instance (see INTERFACE.md)."""

    def __init__(self, d, nodes=1, gpus=0, netns=None, api_host=GATEWAY, api_port=API_PORT,
                 extra=None, tls_min_version="VersionTLS12"):
        self.dir = os.path.abspath(d)
        self.state_dir = os.path.join(self.dir, "state")
        self.netns = netns
        self.bridge = "br0"
        self.gateway = GATEWAY
        self.pod_cidr = POD_CIDR
        self.api_host = api_host
        self.api_port = api_port
        self.nodes = nodes
        self.gpus = gpus
        self.extra = dict(extra or {})
        self.tls_min_version = tls_min_version   # as kube-apiserver's --tls-min-version
        self.kubesim_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self.repo_root = os.path.dirname(os.path.dirname(self.kubesim_dir))
        self.ca_file = os.path.join(self.dir, "pki", "ca.crt")
        self.ca_pem = ""
        self.token_for = None  # set by the server: token_for(ns, sa) -> str

    def to_json(self):
        return {"dir": self.dir, "nodes": self.nodes, "gpus": self.gpus, "netns": self.netns,
                "api_host": self.api_host, "api_port": self.api_port, "extra": self.extra,
                "tls_min_version": self.tls_min_version}

    def save(self):
        os.makedirs(self.state_dir, exist_ok=True)
        p = os.path.join(self.state_dir, "config.json")
        with open(p + ".tmp", "w") as f:
            json.dump(self.to_json(), f)
        os.replace(p + ".tmp", p)

    @classmethod
    def load(cls, d):
        with open(os.path.join(os.path.abspath(d), "state", "config.json")) as f:
            j = json.load(f)
        c = cls(j["dir"], j.get("nodes", 1), j.get("gpus", 0), j.get("netns"),
                j.get("api_host", GATEWAY), j.get("api_port", API_PORT), j.get("extra"),
                j.get("tls_min_version", "VersionTLS12"))
        if os.path.exists(c.ca_file):
            with open(c.ca_file) as f:
                c.ca_pem = f.read()
        return c
