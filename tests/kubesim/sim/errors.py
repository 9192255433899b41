"""ApiError: an error the HTTP layer renders as a metav1.Status, worded as Kubernetes does."""


class ApiError(Exception):
    """An API failure with HTTP code, Status reason and message (Kubernetes wording)."""

    def __init__(self, code, reason, message, details=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self):
        st = {"kind": "Status", "apiVersion": "v1", "metadata": {},
              "status": "Failure", "message": self.message,
              "reason": self.reason, "code": self.code}
        if self.details is not None:
            st["details"] = self.details
        return st


def _gr(res):
    """'pods' stays 'pods'; 'jobs.batch' stays; used in messages as Kubernetes does."""
    return res


def _details(res, name):
    d = {"kind": res.split(".", 1)[0]}
    if name:
        d["name"] = name
    if "." in res:
        d["group"] = res.split(".", 1)[1]
    return d


def not_found(res, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (_gr(res), name), _details(res, name))


def already_exists(res, name):
    return ApiError(409, "AlreadyExists", '%s "%s" already exists' % (_gr(res), name),
                    _details(res, name))


def conflict(res, name, msg="the object has been modified; please apply your changes "
                            "to the latest version and try again"):
    return ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": %s'
                    % (_gr(res), name, msg), _details(res, name))


def invalid(kind, name, causes):
    """causes: list of (field, message) pairs."""
    msgs = ["%s: %s" % (f, m) for f, m in causes]
    text = "%s \"%s\" is invalid: " % (kind, name)
    text += msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"
    det = {"name": name, "kind": kind,
           "causes": [{"reason": "FieldValueInvalid", "message": m, "field": f} for f, m in causes]}
    return ApiError(422, "Invalid", text, det)


def bad_request(msg):
    return ApiError(400, "BadRequest", msg)


def method_not_allowed(msg="the server does not allow this method on the requested resource"):
    return ApiError(405, "MethodNotAllowed", msg)


def unauthorized():
    return ApiError(401, "Unauthorized", "Unauthorized")


def gone(msg):
    return ApiError(410, "Expired", msg)


def forbidden(res, name, user, verb, resource, group, ns):
    """403 worded like the RBAC authorizer's denial."""
    if ns:
        where = ' in the namespace "%s"' % ns
    else:
        where = " at the cluster scope"
    what = '%s "%s"' % (res, name) if name else res
    msg = ('%s is forbidden: User "%s" cannot %s resource "%s" in API group "%s"%s'
           % (what, user, verb, resource, group, where))
    d = {"kind": res.split(".", 1)[0].split("/")[0]}
    if name:
        d["name"] = name
    if group:
        d["group"] = group
    return ApiError(403, "Forbidden", msg, d)


def internal(msg):
    return ApiError(500, "InternalError", "Internal error occurred: %s" % msg)
