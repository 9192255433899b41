#!/usr/bin/env bash
# 20: malformed MPIJobs beyond the 23 of tests/integration/controller_api.sh (26 more, see
# tests/e2e/data/malformed.py). Each is either refused by the API server's CRD schema
# (kubectl create fails naming the field; nothing exists) or accepted and then marked
# Failed by the controller with a message naming the field. For every one: no pod, Job,
# ConfigMap, Service, ServiceAccount, Role, RoleBinding or Secret of the job exists (nothing
# half-created), its status stops changing (no retry loop). Meanwhile a valid job created
# after all of them runs to Succeeded (the controller keeps serving), and the operator
# is still alive at the end.
# timeout: 300
. "$(dirname "$0")/../lib.sh"
e2e_begin
e2e_up
e2e_op_start a
python3 "$ROOT/tests/e2e/data/malformed.py" "$E2E_DIR/mal" >/dev/null || e2e_fail "generating the jobs"
napi=0 nctl=0 bad=()
while IFS=$'\t' read -r name kind want; do
  if kc create -f "$E2E_DIR/mal/$name.json" >"$E2E_DIR/create-$name.out" 2>&1; then
    [ "$kind" = ctl ] || bad+=("$name: the API accepted it (schema should refuse ${want})")
  else
    if [ "$kind" = api ]; then
      grep -qF -- "$want" "$E2E_DIR/create-$name.out" || bad+=("$name: refusal does not name $want: $(tr '\n' ' ' <"$E2E_DIR/create-$name.out" | cut -c1-200)")
      napi=$((napi + 1))
    else
      bad+=("$name: refused by the API ($(tr '\n' ' ' <"$E2E_DIR/create-$name.out" | cut -c1-160)), the controller should judge it")
    fi
  fi
done <"$E2E_DIR/mal/cases.tsv"
e2e_create good
while IFS=$'\t' read -r name kind want; do
  [ "$kind" = ctl ] || continue
  kc get mpijob "$name" >/dev/null 2>&1 || continue
  nctl=$((nctl + 1))
  if ! e2e_wait_for "[ \"\$(cond '$name' Failed status)\" = True ]" 30; then
    bad+=("$name: no Failed condition (last: $(kc get mpijob "$name" -o jsonpath='{.status.conditions[-1:].type}/{.status.conditions[-1:].message}' 2>&1 | cut -c1-160))")
    continue
  fi
  msg=$(cond "$name" Failed message)
  case $msg in *"$want"*) ;; *) bad+=("$name: message \"$msg\" does not name $want");; esac
done <"$E2E_DIR/mal/cases.tsv"
e2e_expect good Succeeded '^MPIJobSucceeded$' 'successfully completed' "$T_CREATE" 150
# nothing half-created, no retry loop
sleep 2
declare -A rv
while IFS=$'\t' read -r name kind want; do
  [ "$kind" = ctl ] || continue
  rv[$name]=$(kc get mpijob "$name" -o jsonpath='{.metadata.resourceVersion}' 2>/dev/null)
  objs=$(kc get pods,jobs,cm,svc,sa,role,rolebinding,secrets -l "training.kubeflow.org/job-name=$name" -o name 2>/dev/null
         kc get pods -l "mpi_job_name=$name" -o name 2>/dev/null)
  for o in configmap/$name-config serviceaccount/$name-launcher service/$name-worker job.batch/$name-launcher; do
    kc get "$o" >/dev/null 2>&1 && objs="$objs $o"
  done
  [ -z "$(echo $objs)" ] || bad+=("$name: half-created: $(echo $objs)")
done <"$E2E_DIR/mal/cases.tsv"
sleep 4
for name in "${!rv[@]}"; do
  [ -z "${rv[$name]}" ] && continue
  now=$(kc get mpijob "$name" -o jsonpath='{.metadata.resourceVersion}' 2>/dev/null)
  [ "$now" = "${rv[$name]}" ] || bad+=("$name: status keeps changing (rv ${rv[$name]} -> $now)")
done
kill -0 "$(e2e_op_pid a)" 2>/dev/null || bad+=("the operator died")
for b in "${bad[@]}"; do e2e_log "BAD: $b"; done
e2e_note "schemaRefused=$napi controllerFailed=$nctl wrong=${#bad[@]}"
[ ${#bad[@]} -eq 0 ] || e2e_fail "${#bad[@]} malformed jobs mishandled: ${bad[*]}"
e2e_no_leftovers good 30
e2e_pass
