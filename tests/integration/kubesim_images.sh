#!/usr/bin/env bash
# timeout: 600
# kubesim pods in real images (buildah-built, local containers-storage), through the real
# kubectl: a container sees a file that exists only in its image and not one that exists
# only on the host (also through kubectl exec); the image's Entrypoint/Cmd/Env/WorkingDir/
# User merged with the pod spec as Kubernetes merges them (command drops Cmd, args
# replaces Cmd, env overrides, runAsUser over USER, HOME from the image's passwd); a
# configMap volume, the service-account token, /etc/hosts and /etc/hostname inside the
# image's root; each container run has its own writable layer; runAsNonRoot is checked
# against the image's USER (a name cannot be verified); an image missing from the
# store is ErrImagePull/ImagePullBackOff with a Failed event, and with imagePullPolicy
# Never ErrImageNeverPull; Always reports a pull from the local store; imageID is the
# store's digest. Skips (77) without root, kubectl, buildah or a way to make the base.
set -u
: "${ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$ROOT/tests/lib/kubesim.sh"
. "$ROOT/tests/integration/kubesim_images.bash"
img_skip_unless_tools
W=$(mktemp -d /tmp/ks-images.XXXXXX)
HOSTONLY=/var/tmp/kubesim-host-only.$$
trap 'rm -rf "$W" "$HOSTONLY"' EXIT
img_base
mkdir -p "$W/probe"
cat >"$W/probe/Dockerfile" <<'DF'
FROM debian:12.11-slim
RUN echo in-image > /kubesim-only-in-image && useradd -u 1234 -m tester
ENV IMG_VAR=from-image OVERRIDE=image
WORKDIR /work
USER tester
ENTRYPOINT ["/bin/echo", "entry"]
CMD ["cmd-default"]
DF
t0=$(date +%s)
img_build probe "$W/probe"
echo "image kubesim-test/probe:1 built in $(( $(date +%s) - t0 )) s"
echo on-host > "$HOSTONLY"
img_conf "$W/images.conf"

ks_up --set images_conf="$W/images.conf" --set image_backoff=1
ks_on_exit "rm -rf '$W' '$HOSTONLY'"
pass=0 fail=0
check() { if [ "$2" -eq 0 ]; then pass=$((pass + 1)); echo "ok   $1"; else echo "FAIL: $1: $3"; fail=$((fail + 1)); fi; }
k() { timeout 60 "$KUBESIM" run --dir "$KS_DIR" -- kubectl "$@"; }
jp() { k get pod "$1" -o jsonpath="$2" 2>&1; }

k apply -f - >/dev/null <<YAML || ks_fail "apply"
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
data: {hello: world}
---
apiVersion: v1
kind: Pod
metadata: {name: main}
spec:
  restartPolicy: Never
  volumes: [{name: cm, configMap: {name: cm}}]
  containers:
  - name: main
    image: kubesim-test/probe:1
    command: [sh, -c]
    args:
    - |
      cat /kubesim-only-in-image
      [ -e $HOSTONLY ] && echo host-visible || echo host-hidden
      echo "\$IMG_VAR \$OVERRIDE \$HOME"
      pwd; id -u; cat /etc/hostname; grep -c kubernetes.default /etc/hosts
      cat /var/run/secrets/kubernetes.io/serviceaccount/namespace; echo
      [ -s /var/run/secrets/kubernetes.io/serviceaccount/token ] && echo token
      cat /data/hello; echo
      touch /tmp/writable && echo writable
      exec sleep 3600
    env: [{name: OVERRIDE, value: pod}]
    volumeMounts: [{name: cm, mountPath: /data}]
---
apiVersion: v1
kind: Pod
metadata: {name: entry}
spec:
  restartPolicy: Never
  containers: [{name: c, image: kubesim-test/probe:1}]
---
apiVersion: v1
kind: Pod
metadata: {name: args}
spec:
  restartPolicy: Never
  containers: [{name: c, image: kubesim-test/probe:1, args: [a1, a2]}]
---
apiVersion: v1
kind: Pod
metadata: {name: cmd}
spec:
  restartPolicy: Never
  containers: [{name: c, image: kubesim-test/probe:1, command: [/bin/echo, c1], args: [x]}]
---
apiVersion: v1
kind: Pod
metadata: {name: root}
spec:
  restartPolicy: Never
  securityContext: {runAsUser: 0}
  containers:
  - name: c
    image: kubesim-test/probe:1
    imagePullPolicy: Always
    command: [sh, -c, 'id -u; echo \$HOME; test -e /tmp/writable && echo shared || echo private']
---
apiVersion: v1
kind: Pod
metadata: {name: nonroot}
spec:
  securityContext: {runAsNonRoot: true}
  containers: [{name: c, image: kubesim-test/probe:1, command: ["true"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: absent}
spec:
  containers: [{name: c, image: kubesim-test/absent:1, command: ["true"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: never}
spec:
  containers: [{name: c, image: kubesim-test/absent:1, imagePullPolicy: Never, command: ["true"]}]
YAML

ks_wait_for "jp main '{.status.phase}' | grep -qx Running && [ \$(k logs main | wc -l) -ge 11 ]" 60
out=$(k logs main 2>&1)
want=$'in-image\nhost-hidden\nfrom-image pod /home/tester\n/work\n1234\nmain\n1\ndefault\ntoken\nworld\nwritable'
check "container in its image: image file seen, host file hidden, env/workdir/user/volumes" "$([ "$out" = "$want" ]; echo $?)" "got: $out; state: $(jp main "{.status.containerStatuses[0].state}")"
out=$(k exec main -- sh -c "cat /kubesim-only-in-image; test -e $HOSTONLY && echo host-visible || echo host-hidden; id -u; pwd; test -e /tmp/writable && echo own-layer" 2>&1)
check "kubectl exec runs in the image's root" "$([ "$out" = $'in-image\nhost-hidden\n1234\n/work\nown-layer' ]; echo $?)" "got: $out"
id=$(jp main '{.status.containerStatuses[0].imageID}')
check "imageID is the store's digest" "$([[ $id =~ ^docker.io/kubesim-test/probe@sha256:[0-9a-f]{64}$ ]]; echo $?)" "$id"

for p in entry args cmd root; do ks_wait_for "jp $p '{.status.phase}' | grep -qx Succeeded" 60 || true; done
out=$(k logs entry 2>&1); check "no command/args: Entrypoint + Cmd" "$([ "$out" = "entry cmd-default" ]; echo $?)" "$out"
out=$(k logs args 2>&1); check "args replace Cmd" "$([ "$out" = "entry a1 a2" ]; echo $?)" "$out"
out=$(k logs cmd 2>&1); check "command replaces Entrypoint, drops Cmd" "$([ "$out" = "c1 x" ]; echo $?)" "$out"
out=$(k logs root 2>&1); check "runAsUser over USER; own writable layer" "$([ "$out" = $'0\n/root\nprivate' ]; echo $?)" "$out; state: $(jp root "{.status.containerStatuses[0].state}")"
ev=$(k get events --field-selector involvedObject.name=root -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}')
check "imagePullPolicy Always: pulled from the local store" "$(grep -q '^Pulled: Successfully pulled image "kubesim-test/probe:1" in [0-9]*ms' <<<"$ev"; echo $?)" "$ev"

ks_wait_for "jp absent '{.status.containerStatuses[0].state.waiting.reason}' | grep -qx ImagePullBackOff" 30
check "missing image: ImagePullBackOff" $? "$(jp absent '{.status.containerStatuses[0].state}')"
ev=$(k get events --field-selector involvedObject.name=absent -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}')
check "missing image: Failed event" "$(grep -q '^Failed: Failed to pull image "kubesim-test/absent:1": .*not found\|^Failed: Failed to pull image "kubesim-test/absent:1": .*no such image' <<<"$ev"; echo $?)" "$ev"
ks_wait_for "jp never '{.status.containerStatuses[0].state.waiting.reason}' | grep -qx ErrImageNeverPull" 30
check "imagePullPolicy Never, missing: ErrImageNeverPull" $? "$(jp never '{.status.containerStatuses[0].state}')"

ks_wait_for "jp nonroot '{.status.containerStatuses[0].state.waiting.reason}' | grep -qx CreateContainerConfigError" 30
msg=$(jp nonroot '{.status.containerStatuses[0].state.waiting.message}')
check "runAsNonRoot with a named image USER: CreateContainerConfigError" "$(grep -q '^container has runAsNonRoot and image has non-numeric user (tester), cannot verify user is non-root' <<<"$msg"; echo $?)" "$msg"

echo "kubesim_images: $pass passed, $fail failed"
[ $fail -eq 0 ]
