#!/usr/bin/env bash
# timeout: 200
# kubesim's authentication and RBAC, driven with curl and service-account bearer tokens
# (TokenRequest tokens and a legacy token Secret): granted requests get 200/201, everything
# else 403 worded as Kubernetes words it; unknown tokens 401; Role/ClusterRole via
# RoleBinding/ClusterRoleBinding, resourceNames, subresources (pods/exec), wildcards,
# non-resource URLs, SelfSubjectAccessReview, revocation when the SA or rule goes away; and,
# through the real kubectl with the SA's token, RBAC escalation prevention (escalate, bind) and
# OwnerReferencesPermissionEnforcement, refused with kube-apiserver's messages.
set -u
: "${ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$ROOT/tests/lib/kubesim.sh"
ks_skip_unless_root
command -v kubectl >/dev/null || { echo "skip: kubectl not installed"; exit 77; }
command -v curl >/dev/null || { echo "skip: curl not installed"; exit 77; }

pass=0
fail=0
ks_up
SERVER=$(sed -n 's/^ *server: //p' "$KS_DIR/kubeconfig")
CA=$KS_DIR/pki/ca.crt
k() { timeout 40 "$KUBESIM" run --dir "$KS_DIR" -- kubectl "$@"; }

# req TOKEN METHOD PATH [BODY]: prints "CODE BODY" (body on one line)
req() {
  local tok=$1 method=$2 path=$3 body=${4:-}
  local args=(-sS --max-time 20 --cacert "$CA" -X "$method" -o "$KS_DIR/body" -w '%{http_code}')
  [ -n "$tok" ] && args+=(-H "Authorization: Bearer $tok")
  [ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data "$body")
  local code
  code=$(ks_run curl "${args[@]}" "$SERVER$path") || code="curl-failed"
  echo "$code $(tr -d '\n' <"$KS_DIR/body" 2>/dev/null)"
}

# check WANT_CODE [REGEX] TOKEN METHOD PATH [BODY]
check() {
  local want=$1 pat=$2
  shift 2
  local got
  got=$(req "$@")
  if [ "${got%% *}" != "$want" ] || ! grep -Eq -- "$pat" <<<"${got#* }"; then
    echo "FAIL $2 $3: want $want /$pat/, got: ${got:0:400}"
    fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
}

ns=rb
k create namespace $ns >/dev/null || ks_fail "create namespace"
ks_wait_for "k get sa default -n $ns" 10 || ks_fail "no default service account"
k create sa agent -n $ns >/dev/null || ks_fail "create sa"
for p in allowed other; do
  k run $p -n $ns --image=busybox --restart=Never \
    --overrides='{"spec":{"nodeName":"ghost-node"}}' -- true >/dev/null || ks_fail "run $p"
done
k create role exec-one -n $ns --verb=get --resource=pods --resource-name=allowed >/dev/null
k apply -f - >/dev/null <<EOF || ks_fail "apply rbac"
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: exec-one-sub, namespace: $ns}
rules:
- apiGroups: [""]
  resources: [pods/exec]
  resourceNames: [allowed]
  verbs: [get, create]
- apiGroups: [batch]
  resources: ["*"]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: agent-exec, namespace: $ns}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: exec-one}
subjects: [{kind: ServiceAccount, name: agent, namespace: $ns}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: agent-exec-sub, namespace: $ns}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: exec-one-sub}
subjects: [{kind: ServiceAccount, name: agent}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: cm-reader}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: agent-cm, namespace: $ns}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cm-reader}
subjects: [{kind: ServiceAccount, name: agent, namespace: $ns}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ns-getter}
rules: [{apiGroups: [""], resources: [namespaces], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: agent-ns-getter}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ns-getter}
subjects: [{kind: ServiceAccount, name: agent, namespace: $ns}]
EOF
TOK=$(k create token agent -n $ns) || ks_fail "create token"
[ -n "$TOK" ] || ks_fail "empty token"
U="system:serviceaccount:$ns:agent"
P=/api/v1/namespaces/$ns/pods

# granted: get on the named pod, exec (get and create) on it, batch/*, configmaps via a
# ClusterRole bound in the namespace, get namespaces via a ClusterRoleBinding
check 200 '"name":"allowed"' "$TOK" GET $P/allowed
check 200 '"kind":"ConfigMapList"' "$TOK" GET /api/v1/namespaces/$ns/configmaps
check 200 '"name":"rb"' "$TOK" GET /api/v1/namespaces/$ns
check 201 '"kind":"Job"' "$TOK" POST /apis/batch/v1/namespaces/$ns/jobs \
  '{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"suspend":true,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}'
check 200 '"kind":"JobList"' "$TOK" GET /apis/batch/v1/namespaces/$ns/jobs
got=$(req "$TOK" GET "$P/allowed/exec?command=true&stdout=true")
if [ "${got%% *}" = 403 ]; then echo "FAIL exec on allowed pod refused: $got"; fail=$((fail + 1));
else pass=$((pass + 1)); fi
got=$(req "$TOK" POST "$P/allowed/exec?command=true&stdout=true")
if [ "${got%% *}" = 403 ]; then echo "FAIL exec POST on allowed pod refused: $got"; fail=$((fail + 1));
else pass=$((pass + 1)); fi
# discovery for every authenticated user
check 200 '"minor":"32"' "$TOK" GET /version
check 200 '"kind":"APIResourceList"' "$TOK" GET /api/v1

# refused, with the Kubernetes wording
check 403 "pods \\\\\"other\\\\\" is forbidden: User \\\\\"$U\\\\\" cannot get resource \\\\\"pods\\\\\" in API group \\\\\"\\\\\" in the namespace \\\\\"$ns\\\\\"" \
  "$TOK" GET $P/other
check 403 "pods is forbidden: User \\\\\"$U\\\\\" cannot list resource \\\\\"pods\\\\\" in API group \\\\\"\\\\\" in the namespace \\\\\"$ns\\\\\"" \
  "$TOK" GET $P
check 403 "cannot get resource \\\\\"pods/exec\\\\\" in API group \\\\\"\\\\\" in the namespace \\\\\"$ns\\\\\"" \
  "$TOK" GET "$P/other/exec?command=true&stdout=true"
check 403 "pods \\\\\"other\\\\\" is forbidden: User \\\\\"$U\\\\\" cannot create resource \\\\\"pods/exec\\\\\"" \
  "$TOK" POST "$P/other/exec?command=true&stdout=true"
check 403 'cannot delete resource \\"pods\\"' "$TOK" DELETE $P/allowed
check 403 'cannot get resource \\"pods/log\\"' "$TOK" GET $P/allowed/log
check 403 'cannot list resource \\"configmaps\\" in API group \\"\\" in the namespace \\"default\\"' \
  "$TOK" GET /api/v1/namespaces/default/configmaps
check 403 'cannot create resource \\"configmaps\\"' "$TOK" POST \
  /api/v1/namespaces/$ns/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}'
check 403 'namespaces is forbidden: .* cannot list resource \\"namespaces\\" in API group \\"\\" at the cluster scope' \
  "$TOK" GET /api/v1/namespaces
check 403 'cannot list resource \\"jobs\\" in API group \\"batch\\" in the namespace \\"default\\"' \
  "$TOK" GET /apis/batch/v1/namespaces/default/jobs
check 403 '"reason":"Forbidden"' "$TOK" GET /api/v1/nodes
check 403 'cannot get path \\"/metrics\\"' "$TOK" GET /metrics

# self access reviews (what kubectl auth can-i sends)
check 201 '"allowed":true' "$TOK" POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews \
  "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SelfSubjectAccessReview\",\"spec\":{\"resourceAttributes\":{\"namespace\":\"$ns\",\"verb\":\"create\",\"resource\":\"pods\",\"subresource\":\"exec\",\"name\":\"allowed\"}}}"
check 201 '"allowed":false' "$TOK" POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews \
  "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SelfSubjectAccessReview\",\"spec\":{\"resourceAttributes\":{\"namespace\":\"$ns\",\"verb\":\"create\",\"resource\":\"pods\",\"subresource\":\"exec\",\"name\":\"other\"}}}"

# authentication failures
check 401 '"reason":"Unauthorized"' "not-a-token" GET $P/allowed
check 403 'User \\"system:anonymous\\" cannot get resource \\"pods\\"' "" GET $P/allowed

# legacy token Secret
k apply -f - >/dev/null <<EOF || ks_fail "token secret"
apiVersion: v1
kind: Secret
metadata:
  name: agent-token
  namespace: $ns
  annotations: {kubernetes.io/service-account.name: agent}
type: kubernetes.io/service-account-token
EOF
TOK2=$(k get secret agent-token -n $ns -o 'jsonpath={.data.token}' | base64 -d)
[ -n "$TOK2" ] || ks_fail "legacy token secret has no token"
check 200 '"name":"allowed"' "$TOK2" GET $P/allowed
check 403 'cannot get resource \\"pods\\"' "$TOK2" GET $P/other

# ---- write-time checks, through the real kubectl with the service account's token ----
# RBAC escalation prevention: a Role may grant only what its creator holds (or it needs
# `escalate`); a RoleBinding may reference only a role whose permissions its creator holds
# (or it needs `bind` on that role). OwnerReferencesPermissionEnforcement: blockOwnerDeletion
# needs update on the owner's finalizers. Messages as kube-apiserver words them.
sed "s/^\( *token: \).*/\1$TOK/" "$KS_DIR/kubeconfig" >"$KS_DIR/agent.kubeconfig"
ka() { timeout 40 "$KUBESIM" run --dir "$KS_DIR" -- kubectl --kubeconfig "$KS_DIR/agent.kubeconfig" -n $ns "$@"; }
k create role rbac-writer -n $ns --verb=create,update,patch,get --resource=roles,rolebindings >/dev/null &&
  k create rolebinding agent-rbac-writer -n $ns --role=rbac-writer --serviceaccount=$ns:agent >/dev/null ||
  ks_fail "rbac-writer role"
G="(groups=[\"system:serviceaccounts\" \"system:serviceaccounts:$ns\" \"system:authenticated\"])"
# expect_out ok|refused TEXT CMD...: the command succeeds, or fails printing TEXT (fixed string)
expect_out() {
  local want=$1 text=$2 out rc
  shift 2
  out=$("$@" 2>&1); rc=$?
  if { [ "$want" = ok ] && [ $rc -eq 0 ]; } || { [ "$want" = refused ] && [ $rc -ne 0 ] && grep -qF -- "$text" <<<"$out"; }; then
    pass=$((pass + 1))
  else
    echo "FAIL ($want) $*: rc $rc: ${out:0:600}"; fail=$((fail + 1))
  fi
}
too_much="apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: too-much, namespace: $ns}
rules:
- {apiGroups: [\"\"], resources: [pods], verbs: [get, delete]}
- {apiGroups: [\"\"], resources: [pods], resourceNames: [allowed], verbs: [get]}
- {apiGroups: [batch], resources: [jobs], verbs: [create]}"
expect_out refused "roles.rbac.authorization.k8s.io \"too-much\" is forbidden: user \"$U\" $G is attempting to grant RBAC permissions not currently held:
{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\" \"delete\"]}" ka create -f - <<<"$too_much"
expect_out ok "" ka create role within --verb=get --resource=pods --resource-name=allowed
expect_out refused "rolebindings.rbac.authorization.k8s.io \"agent-edit\" is forbidden: user \"$U\" $G is attempting to grant RBAC permissions not currently held:" \
  ka create rolebinding agent-edit --clusterrole=edit --serviceaccount=$ns:agent
expect_out ok "" ka create rolebinding agent-within --role=within --serviceaccount=$ns:agent
# an update that adds a permission not held is refused too
expect_out refused "is attempting to grant RBAC permissions not currently held:
{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"list\"]}" \
  ka patch role within --type=json -p '[{"op":"add","path":"/rules/-","value":{"apiGroups":[""],"resources":["secrets"],"verbs":["list"]}}]'
# escalate and bind lift the checks
k create role escalate-roles -n $ns --verb=escalate --resource=roles >/dev/null &&
  k create clusterrole bind-edit --verb=bind --resource=clusterroles --resource-name=edit >/dev/null &&
  k create rolebinding agent-escalate -n $ns --role=escalate-roles --serviceaccount=$ns:agent >/dev/null &&
  k create rolebinding agent-bind-edit -n $ns --clusterrole=bind-edit --serviceaccount=$ns:agent >/dev/null ||
  ks_fail "escalate/bind grants"
expect_out ok "" ka create -f - <<<"$too_much"
expect_out ok "" ka create rolebinding agent-edit --clusterrole=edit --serviceaccount=$ns:agent
k delete rolebinding agent-edit agent-escalate agent-bind-edit -n $ns >/dev/null || ks_fail "delete grants"
# blockOwnerDeletion needs update on the owner's finalizers (the agent may create Jobs)
k create configmap owner -n $ns >/dev/null || ks_fail "owner configmap"
OUID=$(k get configmap owner -n $ns -o jsonpath='{.metadata.uid}')
owned() { # owned NAME BLOCK: a suspended Job owned by the ConfigMap
  echo "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"$1\",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"owner\",\"uid\":\"$OUID\",\"blockOwnerDeletion\":$2}]},\"spec\":{\"suspend\":true,\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}}}"
}
expect_out refused "jobs.batch \"owned-blocking\" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>" \
  ka create -f - <<<"$(owned owned-blocking true)"
expect_out ok "" ka create -f - <<<"$(owned owned-plain false)"
k create role cm-finalizers -n $ns --verb=update --resource=configmaps/finalizers >/dev/null &&
  k create rolebinding agent-cm-finalizers -n $ns --role=cm-finalizers --serviceaccount=$ns:agent >/dev/null ||
  ks_fail "finalizers grant"
expect_out ok "" ka create -f - <<<"$(owned owned-blocking true)"
# the cluster admin (system:masters) is never held back
expect_out ok "" k create clusterrole admin-anything --verb='*' --resource='*'

# revocation: the rule goes away, then the service account
k delete rolebinding agent-exec agent-within -n $ns >/dev/null || ks_fail "delete rolebindings"
check 403 'cannot get resource \\"pods\\"' "$TOK" GET $P/allowed
k delete sa agent -n $ns >/dev/null || ks_fail "delete sa"
check 401 '"reason":"Unauthorized"' "$TOK" GET $P/allowed
check 401 '"reason":"Unauthorized"' "$TOK2" GET $P/allowed

echo "kubesim_rbac: $pass checks passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -ge 41 ]
