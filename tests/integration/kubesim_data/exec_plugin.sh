#!/usr/bin/env bash
# exec_plugin.sh - a kubeconfig exec credential plugin for tests/integration/lib_kubeconfig.sh
# (kept out of tests/integration/*.sh, which the runner takes for tests).
# What it does comes from the env the kubeconfig's exec.env sets:
#   PLUGIN_DIR   counts its runs in PLUGIN_DIR/runs and saves KUBERNETES_EXEC_INFO of run N
#                in PLUGIN_DIR/info.N
#   PLUGIN_API   apiVersion of the ExecCredential printed (client.authentication.k8s.io/v1...)
#   PLUGIN_MODE  token:   {"token": PLUGIN_TOKEN}, expiring in an hour
#                expired: {"token": PLUGIN_TOKEN} with an expirationTimestamp in the past
#                cert:    clientCertificateData/clientKeyData from PLUGIN_CERT/PLUGIN_KEY files
#                fail:    two lines on stderr, exit 1
#                garbage: not JSON on stdout, exit 0
set -u
dir=${PLUGIN_DIR:?PLUGIN_DIR not set}
n=$(( $(cat "$dir/runs" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$dir/runs"
printf '%s' "${KUBERNETES_EXEC_INFO:-}" > "$dir/info.$n"
api=${PLUGIN_API:-client.authentication.k8s.io/v1}
# json_str FILE: the file's text as one JSON string
json_str() { python3 -c 'import json,sys; print(json.dumps(open(sys.argv[1]).read()))' "$1"; }
cred() { printf '{"apiVersion":"%s","kind":"ExecCredential","status":{%s}}\n' "$api" "$1"; }
case ${PLUGIN_MODE:-token} in
  token)
    cred "\"token\":\"$PLUGIN_TOKEN\",\"expirationTimestamp\":\"$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ)\"" ;;
  expired)
    cred "\"token\":\"$PLUGIN_TOKEN\",\"expirationTimestamp\":\"$(date -u -d '-1 hour' +%Y-%m-%dT%H:%M:%SZ)\"" ;;
  cert)
    cred "\"clientCertificateData\":$(json_str "$PLUGIN_CERT"),\"clientKeyData\":$(json_str "$PLUGIN_KEY")" ;;
  fail)
    echo "exec_plugin: contacting the identity provider" >&2
    echo "exec_plugin: login refused for test-user" >&2
    exit 1 ;;
  garbage)
    echo "this is not an ExecCredential" ;;
  *)
    echo "exec_plugin: unknown PLUGIN_MODE ${PLUGIN_MODE}" >&2
    exit 2 ;;
esac
