#!/usr/bin/env bash
# tests/k8s/prebuild.sh: builds the real cluster's components (tests/k8s/build.sh) and the
# Docker Engine's images (make docker-images) in the background while `make test` runs the
# kubesim suites, so that a machine with a cold cache does not pay both one after the other.
#
#   tests/k8s/prebuild.sh start      starts it (nice 10) and prints its PID, or nothing where
#                                    the real-cluster suite cannot run (not root, no Docker)
#   tests/k8s/prebuild.sh wait PID   waits for what the suite needs (bounded by PREBUILD_S,
#                                    default 3600 s); 0 when it was built, else 1 with the last
#                                    lines of its log (the other versions may still be building)
#   tests/k8s/prebuild.sh stop PID   ends it and its builds (make test's EXIT trap: nothing is
#                                    left running when make test is interrupted)
#
# Log: build/test-logs/k8s-prebuild.log. A failure here is not the suite's: tests/k8s/run.sh
# builds again (each component holds a lock while it is built, so nothing is built twice).
set -u
cd "$(dirname "$0")/../.."
log=build/test-logs/k8s-prebuild.log
case ${1:-} in
  start)
    [ "$(id -u)" = 0 ] || exit 0
    command -v docker >/dev/null && docker info >/dev/null 2>&1 || exit 0
    mkdir -p build/test-logs
    # timeout makes the process group that `stop` ends (its PID is the group's). What the
    # suite needs comes first; its "prebuild: done" line is what `wait` waits for. Then, on a
    # machine whose cache was warm already (it keeps its cache), the other Kubernetes versions
    # (K8S_OTHER_VERSIONS) at nice 19, on what the suites leave idle, until `stop` (make test
    # stops it before the exclusive tests): a build cut short keeps what it compiled in the Go
    # build cache, so a later run goes on from there.
    # In a session of its own: the kernel's autogroup scheduler shares the CPU between sessions
    # first and applies nice only inside one, and every test runs in a session of its own
    # (tests/run-integration.sh). So what the suite needs gets a test's share; the other
    # versions get the session's autogroup at nice 19: the idle CPU (a nice inside make test's
    # session had left them a full share beside each test).
    warm=; [ -f "$(tests/k8s/build.sh --bindir kube)/.stamp" ] && warm=1
    setsid nice -n 10 timeout -k 10 "${PREBUILD_S:-3600}" bash -c 's=$SECONDS; tests/k8s/build.sh &&
      make --no-print-directory docker-images &&
      (. tests/k8s/versions.env && ENGINE=docker images/build-images.sh $K8S_IMAGE_VARIANTS) &&
      echo "prebuild: done in $((SECONDS - s)) s" ||
      { echo "prebuild: failed"; exit 1; }
      [ -n "'"$warm"'" ] || exit 0
      echo 19 >/proc/self/autogroup || echo "prebuild: the session stays at autogroup nice 0"
      . tests/k8s/versions.env
      for v in $K8S_OTHER_VERSIONS; do
        [ -f "$(K8S_VERSION=$v tests/k8s/build.sh --bindir kube)/.stamp" ] && continue
        s=$SECONDS; echo "prebuild: Kubernetes $v (nice 19)"
        K8S_VERSION=$v nice -n 9 tests/k8s/build.sh kube && echo "prebuild: Kubernetes $v built in $((SECONDS - s)) s"
      done' >"$log" 2>&1 </dev/null &
    echo $! ;;
  wait)
    pid=${2:-}
    [ -n "$pid" ] || exit 0
    while kill -0 "$pid" 2>/dev/null && ! grep -q -e '^prebuild: done' -e '^prebuild: failed' "$log"; do sleep 2; done
    if grep -q '^prebuild: done' "$log"; then grep '^prebuild: done' "$log"; exit 0; fi
    echo "prebuild failed (tests/k8s/run.sh builds again); last lines of $log:"; tail -n 20 "$log"; exit 1 ;;
  stop)
    [ -z "${2:-}" ] || ! kill -0 "$2" 2>/dev/null || { kill -TERM -- "-$2" 2>/dev/null; echo "prebuild: stopped"; }
    exit 0 ;;
  *) echo "usage: tests/k8s/prebuild.sh start | wait PID | stop PID" >&2; exit 2 ;;
esac
