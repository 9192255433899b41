#!/usr/bin/env bash
# timeout: 120
# kubesim's API-server half without a network: store semantics, patches, selectors,
# JSONPath, protobuf decoding, RBAC, CRD pruning/defaulting and the controllers
# (tests/kubesim/test_apiserver.py), shared host mount points (test_hostpaths.py) and the
# real-image store reader (test_imagestore.py); Python unittest. Needs no root.
set -u
: "${ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
/usr/bin/python3 -c 'import aiohttp' 2>/dev/null || { echo "skip: python3-aiohttp missing"; exit 77; }
exec /usr/bin/python3 -m unittest discover -s "$ROOT/tests/kubesim" -p 'test_*.py' -v
