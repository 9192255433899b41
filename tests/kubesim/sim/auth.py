"""Authentication: client certificates signed by the instance CA (CN = user, O = groups),
the admin bearer token (system:masters) and service-account tokens (opaque bearer tokens
mapped to system:serviceaccount:NS:NAME), legacy SA token Secrets, TokenRequest, and the
per-namespace kube-root-ca.crt ConfigMap."""
import base64
import secrets as pysecrets

from . import errors


class User:
    """An authenticated identity."""

    def __init__(self, name, groups, uid="", extra=None):
        self.name = name
        self.groups = list(groups)
        self.uid = uid
        self.extra = extra or {}

    def info(self):
        d = {"username": self.name, "groups": self.groups}
        if self.uid:
            d["uid"] = self.uid
        if self.extra:
            d["extra"] = self.extra
        return d


ANONYMOUS = User("system:anonymous", ["system:unauthenticated"])


def sa_user(ns, name, uid=""):
    return User("system:serviceaccount:%s:%s" % (ns, name),
                ["system:serviceaccounts", "system:serviceaccounts:" + ns,
                 "system:authenticated"], uid)


def cert_user(peercert):
    """The user a verified client certificate names: CN is the user name, each O a group
    (kube-apiserver's x509 CommonNameUserConversion); None without a CN."""
    name, groups = None, []
    for rdn in peercert.get("subject", ()):
        for k, v in rdn:
            if k == "commonName":
                name = v
            elif k == "organizationName":
                groups.append(v)
    if not name:
        return None
    return User(name, groups + ["system:authenticated"])


class Authenticator:
    """Maps bearer tokens to Users; issues service-account tokens."""

    def __init__(self, store, admin_token, ca_pem=""):
        self.store = store
        self.admin_token = admin_token
        self.ca_pem = ca_pem
        self.sa_tokens = {}   # token -> (ns, sa name, sa uid)
        self.by_sa = {}       # (ns, name, uid) -> token

    def authenticate(self, header, peercert=None):
        """header: the Authorization header value (or None); peercert: the verified client
        certificate (ssl getpeercert() dict) or None. Returns User; raises 401. As in
        kube-apiserver the x509 authenticator comes first: a certificate wins over a token."""
        if peercert:
            u = cert_user(peercert)
            if u is not None:
                return u
        if not header:
            return ANONYMOUS
        parts = header.split(None, 1)
        if len(parts) != 2 or parts[0].lower() != "bearer":
            raise errors.unauthorized()
        tok = parts[1].strip()
        if tok == self.admin_token:
            return User("kubernetes-admin", ["system:masters", "system:authenticated"])
        ent = self.sa_tokens.get(tok)
        if ent is None:
            ent = self._legacy_secret_token(tok)
        if ent is None:
            raise errors.unauthorized()
        ns, name, uid = ent
        sa = self.store.try_get("serviceaccounts", ns, name)
        if sa is None or (uid and sa["metadata"]["uid"] != uid):
            raise errors.unauthorized()
        return sa_user(ns, name, sa["metadata"]["uid"])

    def _legacy_secret_token(self, tok):
        for s in self.store.list("secrets", copy=False):
            if s.get("type") == "kubernetes.io/service-account-token":
                t = (s.get("data") or {}).get("token")
                if t and base64.b64decode(t).decode(errors="replace") == tok:
                    ann = s["metadata"].get("annotations") or {}
                    return (s["metadata"]["namespace"],
                            ann.get("kubernetes.io/service-account.name", ""),
                            ann.get("kubernetes.io/service-account.uid", ""))
        return None

    def token_for(self, ns, name):
        """A bearer token for service account ns/name (stable while the SA lives)."""
        sa = self.store.get("serviceaccounts", ns, name)
        key = (ns, name, sa["metadata"]["uid"])
        tok = self.by_sa.get(key)
        if tok is None:
            tok = "kubesim-sa.%s" % pysecrets.token_hex(24)
            self.by_sa[key] = tok
            self.sa_tokens[tok] = key
        return tok

    def new_token(self, ns, name):
        """A fresh token (TokenRequest)."""
        sa = self.store.get("serviceaccounts", ns, name)
        tok = "kubesim-sa.%s" % pysecrets.token_hex(24)
        self.sa_tokens[tok] = (ns, name, sa["metadata"]["uid"])
        return tok

    # legacy token secrets: filled in at create time (the token controller's job)
    def secret_hook(self, store, info, s):
        if s.get("type") != "kubernetes.io/service-account-token":
            return
        ann = s["metadata"].setdefault("annotations", {})
        sa_name = ann.get("kubernetes.io/service-account.name")
        if not sa_name:
            raise errors.invalid("Secret", s["metadata"].get("name", ""), [
                ("metadata.annotations[kubernetes.io/service-account.name]", "Required value")])
        ns = s["metadata"]["namespace"]
        sa = store.try_get("serviceaccounts", ns, sa_name)
        if sa is None:
            return
        ann["kubernetes.io/service-account.uid"] = sa["metadata"]["uid"]
        tok = self.new_token(ns, sa_name)
        data = s.setdefault("data", {})
        data["token"] = base64.b64encode(tok.encode()).decode()
        data["ca.crt"] = base64.b64encode(self.ca_pem.encode()).decode()
        data["namespace"] = base64.b64encode(ns.encode()).decode()

    def install(self, store):
        store.hooks_create.setdefault("secrets", []).append(self.secret_hook)
