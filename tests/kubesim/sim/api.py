"""HTTP layer of the API server: URL parsing, authentication, RBAC, CRUD, list with
selectors and pagination, watch streams, Table output, subresources, reviews."""
import json
import logging

from . import admission, crd as crdmod
from . import errors, events as evmod, tables
from .auth import ANONYMOUS
from .errors import ApiError
from .events import EVENTS_V1
from .httpreply import jresp, qbool
from .listwatch import ListWatch, check_field_selector
from .rbac import Attrs, authorize, rules_for
from .selectors import parse_field_selector
from .jsoncopy import deepcopy
from .store import now

log = logging.getLogger("kubesim.api")


class Req:
    """Parsed resource request."""
    group = ""
    version = ""
    info = None
    namespace = ""
    name = ""
    sub = ""
    verb = ""


class Api(ListWatch):
    """Resource request handling bound to a store, authenticator and kubelet."""

    def __init__(self, server):
        self.server = server
        self.store = server.store
        self.auth = server.auth
        self.registry = server.store.registry
        # fault lose-create-answer: store key -> creates left whose answer is lost
        self.lose_create = {}

    # ---- request parsing -----------------------------------------------
    def parse(self, request, parts):
        r = Req()
        if parts[0] == "api":
            if len(parts) < 3:
                return None
            r.group, r.version, rest = "", parts[1], parts[2:]
        else:
            if len(parts) < 4:
                return None
            r.group, r.version, rest = parts[1], parts[2], parts[3:]
        if rest[0] == "namespaces" and len(rest) >= 3:
            cand = self.registry.lookup(r.group, r.version, rest[2])
            if cand is not None and cand.namespaced:
                r.namespace = rest[1]
                rest = rest[2:]
        plural = rest[0]
        r.info = self.registry.lookup(r.group, r.version, plural)
        if r.info is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if len(rest) > 1:
            r.name = rest[1]
        if len(rest) > 2:
            r.sub = "/".join(rest[2:])
            if r.sub not in r.info.subresources and not (r.info.key == "namespaces" and
                                                         r.sub in ("finalize", "status")):
                raise ApiError(404, "NotFound", "the server could not find the requested "
                               "resource")
        if r.info.namespaced and not r.namespace and r.name:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        q = request.query
        m = request.method
        if m == "GET":
            if r.name:
                r.verb = "get"
            else:
                r.verb = "watch" if qbool(q, "watch") else "list"
        elif m == "POST":
            r.verb = "create"
        elif m == "PUT":
            r.verb = "update"
        elif m == "PATCH":
            r.verb = "patch"
        elif m == "DELETE":
            r.verb = "delete" if r.name else "deletecollection"
        else:
            raise errors.method_not_allowed()
        # a single-object watch via fieldSelector=metadata.name=X is authorized with the name
        return r

    def check(self, request, r):
        user = request["user"]
        name = r.name
        if r.verb in ("list", "watch") and not name:
            fs = request.query.get("fieldSelector", "")
            for p in fs.split(","):
                if p.startswith("metadata.name=") or p.startswith("metadata.name=="):
                    name = p.split("=")[-1]
        a = Attrs(r.verb, r.group, r.info.plural, r.sub, name, r.namespace)
        if authorize(self.store, user, a):
            return
        if r.info.key == "pods" and r.sub == "exec" and r.verb == "get":
            a2 = Attrs("create", r.group, r.info.plural, r.sub, name, r.namespace)
            if authorize(self.store, user, a2):
                return
        raise errors.forbidden(r.info.key, r.name, user.name, r.verb,
                               a.full_resource, r.group, r.namespace)

    # ---- dispatch --------------------------------------------------------
    async def handle(self, request, parts):
        r = self.parse(request, parts)
        if r is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        self.check(request, r)
        info = r.info
        if not r.sub and r.verb not in info.verbs:
            raise errors.method_not_allowed()
        if r.sub in ("exec", "log") and info.key == "pods":
            return await self.pod_stream(request, r)
        if r.sub == "binding" and request.method == "POST":
            body = await self.body(request)
            target = (body.get("target") or {}).get("name")
            if not target:
                raise errors.invalid("Binding", r.name, [("target.name", "Required value")])
            self.store.bind(r.namespace, r.name, target)
            return jresp({"kind": "Status", "apiVersion": "v1", "metadata": {},
                          "status": "Success", "code": 201}, 201)
        if r.sub == "token" and info.key == "serviceaccounts":
            return await self.token_request(request, r)
        if r.sub == "scale":
            return await self.scale(request, r)
        if info.key.endswith(".authorization.k8s.io") and info.plural.endswith("reviews"):
            return await self.review(request, r)
        if info.key.endswith(".authentication.k8s.io"):
            return await self.authn_review(request, r)
        m = request.method
        if r.verb == "get":
            obj = self.read(info, r.namespace, r.name)
            if r.sub == "status" or r.sub == "finalize":
                pass
            return self.respond_obj(request, r, obj)
        if r.verb == "list":
            return self.list(request, r)
        if r.verb == "watch":
            return await self.watch(request, r)
        if m == "POST":
            if r.name:
                raise errors.method_not_allowed()
            return await self.create(request, r)
        if m == "PUT":
            return await self.update(request, r)
        if m == "PATCH":
            return await self.patch(request, r)
        if m == "DELETE":
            if r.name:
                return await self.delete(request, r)
            return await self.deletecollection(request, r)
        raise errors.method_not_allowed()

    # ---- storage views --------------------------------------------------
    def skey(self, info):
        return "events" if info.key == EVENTS_V1 else info.key

    def out(self, info, version, obj):
        """Stored object -> wire form for the requested version."""
        if info.key == EVENTS_V1:
            return evmod.core_to_v1(obj)
        if info.crd is not None:
            obj["apiVersion"] = info.api_version(version)
            obj = crdmod.default(obj, crdmod._schema(info, version))
        return obj

    def read(self, info, ns, name):
        return self.store.get(self.skey(info), ns, name)

    def respond_obj(self, request, r, obj, status=200):
        obj = self.out(r.info, r.version, obj)
        if self.wants_table(request) and not r.sub:
            md = {"resourceVersion": obj["metadata"].get("resourceVersion", "")}
            resp = jresp(tables.table(r.info, r.version, [obj], md,
                                      request.query.get("includeObject", "Object")), status)
        else:
            resp = jresp(obj, status)
        for w in request.get("kubesim_warnings") or []:
            resp.headers.add("Warning", '299 - "%s"' % w.replace("\\", "\\\\").replace(
                '"', '\\"'))
        return resp

    @staticmethod
    def field_validation(request):
        """The request's fieldValidation directive; kube-apiserver defaults to Warn."""
        v = request.query.get("fieldValidation", "")
        return v if v in crdmod.FIELD_VALIDATION else "Warn"

    def prepare_cr(self, request, r, obj):
        """Prune, default and validate a custom resource as the request asks."""
        warnings = request.setdefault("kubesim_warnings", [])
        return crdmod.prepare(r.info, r.version, obj, validation=self.field_validation(request),
                              warnings=warnings)

    @staticmethod
    def wants_table(request):
        acc = request.headers.get("Accept", "")
        first = acc.split(",")[0]
        return "as=Table" in first

    async def body(self, request):
        raw = await request.read()
        if not raw:
            raise errors.bad_request("the body of the request was empty")
        ctype = request.headers.get("Content-Type", "application/json").split(";")[0].strip()
        if ctype not in ("application/json", "application/yaml", "application/x-yaml",
                         "text/yaml", "application/vnd.kubernetes.protobuf", ""):
            raise ApiError(415, "UnsupportedMediaType", 'the body of the request was in an '
                           'unknown format - accepted media types include: application/json, '
                           'application/yaml, application/vnd.kubernetes.protobuf')
        if ctype == "application/vnd.kubernetes.protobuf":
            from . import protobuf
            return protobuf.decode(raw)
        if "yaml" in ctype and "patch" not in ctype:
            try:
                import yaml
                return yaml.safe_load(raw)
            except Exception as e:
                raise errors.bad_request("error decoding YAML: %s" % e)
        try:
            return json.loads(raw)
        except ValueError as e:
            raise errors.bad_request("couldn't get version/kind; json parse error: %s" % e)

    def in_obj(self, r, obj, request=None):
        """Wire object from the client -> stored form (checks kind/apiVersion)."""
        if not isinstance(obj, dict):
            raise errors.bad_request("the body must be a JSON object")
        info = r.info
        av, kind = obj.get("apiVersion"), obj.get("kind")
        want = info.api_version(r.version)
        if av and av != want:
            raise errors.bad_request("the API version in the data (%s) does not match the "
                                     "expected API version (%s)" % (av, want))
        if kind and kind != info.kind:
            raise errors.bad_request('%s in version "%s" cannot be handled as a %s: kind '
                                     'mismatch' % (kind, r.version, info.kind))
        if info.key == EVENTS_V1:
            obj = evmod.v1_to_core(obj)
        if info.crd is not None:
            obj = self.prepare_cr(request, r, obj) if request is not None else \
                crdmod.prepare(info, r.version, obj)
        return obj

    def dry_run(self, request):
        return "dryRun" in request.query and request.query["dryRun"] == "All"

    # ---- verbs -------------------------------------------------------------
    async def create(self, request, r):
        obj = self.in_obj(r, await self.body(request), request)
        admission.admit(self, request, r, obj, None)
        if self.dry_run(request):
            self.store.info(self.skey(r.info))
            obj = deepcopy(obj)
            md = obj.setdefault("metadata", {})
            if r.info.namespaced:
                md["namespace"] = r.namespace
            if self.store.try_get(self.skey(r.info), r.namespace, md.get("name", "")):
                raise errors.already_exists(r.info.key, md.get("name"))
            md.setdefault("uid", "")
            md["creationTimestamp"] = now()
            return self.respond_obj(request, r, obj, 201)
        created = self.store.create(self.skey(r.info), r.namespace, obj)
        left = self.lose_create.get(self.skey(r.info), 0)
        if left > 0:  # committed, but the client never learns it (fault lose-create-answer)
            self.lose_create[self.skey(r.info)] = left - 1
            raise ApiError(504, "Timeout", "Timeout: request did not complete within requested timeout "
                           "- context deadline exceeded")
        return self.respond_obj(request, r, created, 201)

    async def update(self, request, r):
        obj = self.in_obj(r, await self.body(request), request)
        md = obj.setdefault("metadata", {})
        if md.get("name") and md["name"] != r.name:
            raise errors.bad_request("the name of the object (%s) does not match the name on "
                                     "the URL (%s)" % (md["name"], r.name))
        md["name"] = r.name
        if r.info.namespaced:
            if md.get("namespace") and md["namespace"] != r.namespace:
                raise errors.bad_request("the namespace of the provided object does not match "
                                         "the namespace sent on the request")
            md["namespace"] = r.namespace
        sub = "status" if r.sub == "status" else None
        if r.info.key == "namespaces" and r.sub == "finalize":
            return self.namespace_finalize(request, r, obj)
        admission.admit(self, request, r, obj, self.store.try_get(self.skey(r.info), r.namespace,
                                                                  r.name))
        if self.dry_run(request):
            return self.respond_obj(request, r, self.read(r.info, r.namespace, r.name))
        res = self.store.update(self.skey(r.info), r.namespace, obj, subresource=sub)
        return self.respond_obj(request, r, res)

    def namespace_finalize(self, request, r, obj):
        fins = (obj.get("spec") or {}).get("finalizers") or []

        def f(o):
            o.setdefault("spec", {})["finalizers"] = fins
        res = self.store.mutate("namespaces", None, r.name, f)
        return jresp(res)

    async def patch(self, request, r):
        ctype = request.headers.get("Content-Type", "")
        raw = await request.read()
        skey = self.skey(r.info)
        from . import patch as patchmod
        cur = self.store.try_get(skey, r.namespace, r.name)
        if cur is None:
            if ctype.split(";")[0].strip() != patchmod.APPLY or r.sub:
                raise errors.not_found(r.info.key, r.name)
            # server-side apply of a new object creates it
            obj = patchmod.parse_body(patchmod.APPLY, raw)
            if not isinstance(obj, dict):
                raise errors.bad_request("apply patch must be an object")
            obj.setdefault("metadata", {})["name"] = r.name
            obj = self.in_obj(r, obj, request)
            admission.admit(self, request, r, obj, None)
            if self.dry_run(request):
                return self.respond_obj(request, r, obj, 201)
            created = self.store.create(skey, r.namespace, obj)
            return self.respond_obj(request, r, created, 201)
        wire = self.out(r.info, r.version, cur)
        new = patchmod.apply_patch(self.store, r.info, wire, ctype, raw)
        if not isinstance(new, dict):
            raise errors.bad_request("patch result must be an object")
        if r.info.crd is not None:
            new = self.prepare_cr(request, r, new)
        if r.info.key == EVENTS_V1:
            new = evmod.v1_to_core(new)
        admission.admit(self, request, r, new, cur)
        if self.dry_run(request):
            return self.respond_obj(request, r, new)
        sub = "status" if r.sub == "status" else None
        res = self.store.update(skey, r.namespace, new, subresource=sub)
        return self.respond_obj(request, r, res)

    def delete_options(self, request, body):
        q = request.query
        grace = body.get("gracePeriodSeconds")
        if "gracePeriodSeconds" in q:
            try:
                grace = int(q["gracePeriodSeconds"])
            except ValueError:
                raise errors.bad_request("invalid gracePeriodSeconds")
        prop = body.get("propagationPolicy") or q.get("propagationPolicy")
        orphan = body.get("orphanDependents")
        if "orphanDependents" in q:
            orphan = qbool(q, "orphanDependents")
        if prop is None and orphan is not None:
            prop = "Orphan" if orphan else "Background"
        if prop not in (None, "Orphan", "Background", "Foreground"):
            raise errors.bad_request('propagationPolicy: Unsupported value: "%s"' % prop)
        dry = body.get("dryRun") == ["All"] or self.dry_run(request)
        return grace, prop, body.get("preconditions"), dry

    async def read_delete_body(self, request):
        raw = await request.read()
        if not raw:
            return {}
        if raw.startswith(b"k8s\x00"):
            from . import protobuf
            return protobuf.decode(raw)
        try:
            b = json.loads(raw)
        except ValueError:
            raise errors.bad_request("invalid DeleteOptions")
        return b if isinstance(b, dict) else {}

    async def delete(self, request, r):
        grace, prop, pre, dry = self.delete_options(request, await self.read_delete_body(
            request))
        skey = self.skey(r.info)
        if dry:
            return self.respond_obj(request, r, self.store.get(skey, r.namespace, r.name))
        obj, removed = self.store.delete(skey, r.namespace, r.name, grace, prop, pre)
        if removed and skey != "pods" and r.info.crd is None:
            return jresp({"kind": "Status", "apiVersion": "v1", "metadata": {},
                          "status": "Success", "details": {
                              "name": r.name, "group": r.group, "kind": r.info.plural,
                              "uid": obj["metadata"].get("uid")}})
        return self.respond_obj(request, r, obj, 200 if removed else 202 if skey != "pods"
                                else 200)

    async def deletecollection(self, request, r):
        grace, prop, pre, dry = self.delete_options(request, await self.read_delete_body(
            request))
        skey = self.skey(r.info)
        fs = parse_field_selector(request.query.get("fieldSelector", ""))
        check_field_selector(r.info, fs)
        objs = self.store.list(skey, r.namespace or None,
                               request.query.get("labelSelector"), fs)
        out = []
        for o in objs:
            md = o["metadata"]
            if dry:
                out.append(o)
                continue
            try:
                d, _ = self.store.delete(skey, md.get("namespace"), md["name"], grace, prop)
                out.append(self.out(r.info, r.version, d))
            except ApiError as e:
                if e.code != 404:
                    raise
        return jresp({"kind": r.info.list_kind, "apiVersion": r.info.api_version(r.version),
                      "metadata": {"resourceVersion": str(self.store.rv)}, "items": out})

    # ---- pods/exec and pods/log (node side) ----------------------------------
    async def pod_stream(self, request, r):
        kubelet = request.app.get("kubelet")
        pod = self.store.get("pods", r.namespace, r.name)
        if r.sub == "exec":
            if request.method not in ("GET", "POST"):
                raise errors.method_not_allowed()
            if kubelet is None or not hasattr(kubelet, "handle_exec"):
                raise errors.internal("no kubelet in this simulator")
            return await kubelet.handle_exec(request, r.namespace, r.name)
        if request.method != "GET":
            raise errors.method_not_allowed()
        if kubelet is None or not hasattr(kubelet, "handle_log"):
            raise errors.bad_request('container "%s" in pod "%s" is waiting to start: no kubelet'
                                     % (pod["spec"]["containers"][0]["name"], r.name))
        return await kubelet.handle_log(request, r.namespace, r.name)

    # ---- serviceaccounts/token -----------------------------------------------
    async def token_request(self, request, r):
        if request.method != "POST":
            raise errors.method_not_allowed()
        body = await self.body(request)
        tok = self.auth.new_token(r.namespace, r.name)
        exp = int((body.get("spec") or {}).get("expirationSeconds") or 3600)
        body.setdefault("metadata", {})
        body["metadata"].update({"name": r.name, "namespace": r.namespace,
                                 "creationTimestamp": None})
        body["apiVersion"] = "authentication.k8s.io/v1"
        body["kind"] = "TokenRequest"
        body.setdefault("spec", {})["expirationSeconds"] = exp
        body["spec"].setdefault("audiences", ["https://kubernetes.default.svc.cluster.local"])
        body["status"] = {"token": tok, "expirationTimestamp": now(exp)}
        return jresp(body, 201)

    # ---- scale (CRDs with a scale subresource) ---------------------------------
    async def scale(self, request, r):
        info = r.info
        if info.crd is not None:
            vs = crdmod.version_spec(info, r.version)
            sc = (vs.get("subresources") or {}).get("scale") or {}
        else:
            sc = {}
        spec_path = sc.get("specReplicasPath", ".spec.replicas").lstrip(".").split(".")
        stat_path = sc.get("statusReplicasPath", ".status.replicas").lstrip(".").split(".")
        obj = self.store.get(info.key, r.namespace, r.name)

        def getp(o, p):
            for k in p:
                o = o.get(k) if isinstance(o, dict) else None
            return o
        if request.method in ("PUT", "PATCH"):
            if request.method == "PUT":
                body = await self.body(request)
                want = (body.get("spec") or {}).get("replicas")
            else:
                from . import patch as patchmod
                cur = {"spec": {"replicas": getp(obj, spec_path)}}
                ctype = request.headers.get("Content-Type", "")
                if "strategic" in ctype:
                    ctype = "application/merge-patch+json"
                body = patchmod.apply_patch(self.store, info, cur, ctype, await request.read())
                want = (body.get("spec") or {}).get("replicas")

            if not isinstance(want, int) or isinstance(want, bool) or want < 0:
                raise errors.invalid("Scale", r.name, [("spec.replicas", "Invalid value: %s: "
                                                        "must be greater than or equal to 0"
                                                        % json.dumps(want))])

            def f(o):
                t = o
                for k in spec_path[:-1]:
                    t = t.setdefault(k, {})
                t[spec_path[-1]] = want
                if "generation" in o["metadata"]:
                    o["metadata"]["generation"] += 1
            obj = self.store.mutate(info.key, r.namespace, r.name, f)
        md = obj["metadata"]
        return jresp({"kind": "Scale", "apiVersion": "autoscaling/v1",
                      "metadata": {"name": md["name"], "namespace": md.get("namespace"),
                                   "uid": md["uid"], "resourceVersion": md["resourceVersion"],
                                   "creationTimestamp": md["creationTimestamp"]},
                      "spec": {"replicas": getp(obj, spec_path) or 0},
                      "status": {"replicas": getp(obj, stat_path) or 0}})

    # ---- access reviews --------------------------------------------------------
    async def review(self, request, r):
        if request.method != "POST":
            raise errors.method_not_allowed()
        body = await self.body(request)
        spec = body.get("spec") or {}
        user = request["user"]
        if r.info.plural == "subjectaccessreviews":
            from .auth import User
            user = User(spec.get("user", ""), spec.get("groups") or [], spec.get("uid", ""))
        if r.info.plural == "selfsubjectrulesreviews":
            ns = spec.get("namespace", "")
            rules = rules_for(self.store, user, ns)
            if "system:masters" in user.groups:
                rules = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                         {"nonResourceURLs": ["*"], "verbs": ["*"]}]
            body["status"] = {
                "resourceRules": [{k: v for k, v in x.items() if k != "nonResourceURLs"}
                                  for x in rules if "nonResourceURLs" not in x],
                "nonResourceRules": [{"verbs": x["verbs"], "nonResourceURLs":
                                      x["nonResourceURLs"]} for x in rules
                                     if "nonResourceURLs" in x],
                "incomplete": False}
            return jresp(body, 201)
        ra = spec.get("resourceAttributes")
        nra = spec.get("nonResourceAttributes")
        if ra:
            a = Attrs(ra.get("verb", ""), ra.get("group", ""), ra.get("resource", ""),
                      ra.get("subresource", ""), ra.get("name", ""), ra.get("namespace", ""))
        elif nra:
            a = Attrs(nra.get("verb", ""), path=nra.get("path", ""))
        else:
            raise errors.invalid(r.info.kind, "", [("spec.resourceAttributes", "Required value:"
                                                    " exactly one of nonResourceAttributes or "
                                                    "resourceAttributes must be specified")])
        allowed = authorize(self.store, user, a)
        body["status"] = {"allowed": allowed}
        if allowed:
            body["status"]["reason"] = "RBAC: allowed"
        body.setdefault("metadata", {})["creationTimestamp"] = None
        return jresp(body, 201)

    async def authn_review(self, request, r):
        if request.method != "POST":
            raise errors.method_not_allowed()
        body = await self.body(request)
        if r.info.plural == "selfsubjectreviews":
            body["status"] = {"userInfo": request["user"].info()}
        else:
            tok = (body.get("spec") or {}).get("token", "")
            try:
                u = self.auth.authenticate("Bearer " + tok)
                body["status"] = {"authenticated": u is not ANONYMOUS, "user": u.info()}
            except ApiError:
                body["status"] = {"authenticated": False, "error": "invalid bearer token"}
        body.setdefault("metadata", {})["creationTimestamp"] = None
        return jresp(body, 201)
