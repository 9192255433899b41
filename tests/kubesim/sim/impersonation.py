"""Impersonation as kube-apiserver's WithImpersonation filter does it: the Impersonate-User,
Impersonate-Group (repeatable), Impersonate-Uid and Impersonate-Extra-<key> headers, each
authorized with verb `impersonate` (users / groups / serviceaccounts in API group "",
uids and userextras/<key> in authentication.k8s.io), then the request runs as the new
identity."""
import re
import urllib.parse

from . import errors
from .auth import User
from .rbac import Attrs, authorize

AUTH_GROUP = "authentication.k8s.io"
AUTH_GV = AUTH_GROUP + "/v1"
EXTRA_PREFIX = "impersonate-extra-"
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class HeaderError(Exception):
    """Impersonation headers that make no sense (groups without a user): kube-apiserver
    answers a plain-text 500 (responsewriters.InternalError); server.py renders it."""


class Ref:
    """One thing to impersonate, as the filter's ObjectReference (kind, namespace, name,
    apiVersion, fieldPath = the extra key)."""

    def __init__(self, kind, name, namespace="", api_version="", field_path=""):
        self.kind = kind
        self.name = name
        self.namespace = namespace
        self.api_version = api_version
        self.field_path = field_path

    def go_string(self):
        """Go's %v of the ObjectReference (7 fields: Kind Namespace Name UID APIVersion
        ResourceVersion FieldPath), as the 500 message prints it."""
        return "{%s}" % " ".join([self.kind, self.namespace, self.name, "", self.api_version,
                                  "", self.field_path])


def split_sa_username(name):
    """(namespace, name) for system:serviceaccount:NS:NAME with valid names, else None."""
    prefix = "system:serviceaccount:"
    if not name.startswith(prefix):
        return None
    parts = name[len(prefix):].split(":")
    if len(parts) != 2:
        return None
    ns, sa = parts
    if len(ns) > 63 or not _DNS_LABEL.match(ns) or len(sa) > 253 or \
            not _DNS_SUBDOMAIN.match(sa):
        return None
    return ns, sa


def _extra_key(header_name):
    key = header_name[len(EXTRA_PREFIX):].lower()
    try:
        return urllib.parse.unquote(key, errors="strict")
    except UnicodeDecodeError:
        return key


def requests_from(headers):
    """The Refs the headers ask for, in the filter's order (user, groups, extras, uid);
    raises HeaderError for groups, extras or a uid without a user."""
    refs = []
    user = headers.get("Impersonate-User", "")
    if user:
        sa = split_sa_username(user)
        refs.append(Ref("ServiceAccount", sa[1], sa[0]) if sa else Ref("User", user))
    others = False
    for g in headers.getall("Impersonate-Group", []):
        refs.append(Ref("Group", g))
        others = True
    for hname in sorted({k for k in headers.keys() if k.lower().startswith(EXTRA_PREFIX)}):
        for v in headers.getall(hname, []):
            refs.append(Ref("UserExtra", v, api_version=AUTH_GV, field_path=_extra_key(hname)))
            others = True
    uid = headers.get("Impersonate-Uid", "")
    if uid:
        refs.append(Ref("UID", uid, api_version=AUTH_GV))
        others = True
    if others and not user:
        raise HeaderError("requested [%s] without impersonating a user"
                          % " ".join(r.go_string() for r in refs))
    return refs


def _attrs(ref):
    """(authorizer attributes, qualified resource for the 403) of one Ref."""
    if ref.kind == "ServiceAccount":
        return Attrs("impersonate", "", "serviceaccounts", "", ref.name, ref.namespace), \
            "serviceaccounts"
    if ref.kind == "User":
        return Attrs("impersonate", "", "users", "", ref.name), "users"
    if ref.kind == "Group":
        return Attrs("impersonate", "", "groups", "", ref.name), "groups"
    if ref.kind == "UserExtra":
        return Attrs("impersonate", AUTH_GROUP, "userextras", ref.field_path, ref.name), \
            "userextras." + AUTH_GROUP
    return Attrs("impersonate", AUTH_GROUP, "uids", "", ref.name), "uids." + AUTH_GROUP


def _check(store, requestor, ref):
    a, qualified = _attrs(ref)
    if not authorize(store, requestor, a):
        raise errors.forbidden(qualified, a.name, requestor.name, a.verb, a.full_resource,
                               a.group, a.namespace)


def _final_groups(name, groups):
    """system:authenticated is added to a non-anonymous user unless system:authenticated or
    system:unauthenticated is there; system:unauthenticated to system:anonymous."""
    if name != "system:anonymous":
        if "system:authenticated" not in groups and "system:unauthenticated" not in groups:
            groups.append("system:authenticated")
    elif "system:unauthenticated" not in groups:
        groups.append("system:unauthenticated")
    return groups


def impersonate(store, headers, requestor):
    """The User the request runs as: requestor itself without impersonation headers.
    Raises HeaderError (500) or a 403 ApiError worded as kube-apiserver's."""
    refs = requests_from(headers)
    if not refs:
        return requestor
    groups_given = bool(headers.getall("Impersonate-Group", []))
    name, uid, groups, extra = "", "", [], {}
    for ref in refs:
        _check(store, requestor, ref)
        if ref.kind == "ServiceAccount":
            name = "system:serviceaccount:%s:%s" % (ref.namespace, ref.name)
            if not groups_given:
                groups = ["system:serviceaccounts", "system:serviceaccounts:" + ref.namespace]
        elif ref.kind == "User":
            name = ref.name
        elif ref.kind == "Group":
            groups.append(ref.name)
        elif ref.kind == "UserExtra":
            extra.setdefault(ref.field_path, []).append(ref.name)
        else:
            uid = ref.name
    return User(name, _final_groups(name, groups), uid, extra)
