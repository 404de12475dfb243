#!/usr/bin/env bash
# Creates target/test-venv: the Python packages some integration tests check spate against
# (test-only, pinned; never a dependency of spate). .ci/run calls it; run it yourself to run those
# tests locally (they skip with a message without it, and fail under SPATE_REQUIRE_TOOLS=1).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/target/test-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check \
  hdrhistogram==0.10.8 \
  numpy==2.4.6 scipy==1.17.1 \
  llmock==0.2.2 fastapi==0.165.0 uvicorn==0.54.0 \
  mcp==2.3.0 \
  hypercorn==0.18.0 aioquic==1.7.2 \
  kubernetes-validate==1.37.0 \
  grpcio==1.85.3 grpcio-tools==1.85.1 grpcio-reflection==1.85.1 protobuf==7.36.2 \
  ruamel.yaml==0.18.17 ruamel.yaml.clib==0.2.15
