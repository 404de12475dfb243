#!/usr/bin/env bash
# Creates target/test-node: the MCP reference "everything" server (npm
# @modelcontextprotocol/server-everything, pinned with its lockfile in tests/it/servers/everything)
# that tests/it/mcp_everything.rs loads as a second MCP implementation. Test-only; never a
# dependency of spate. .ci/run calls it; without it those tests skip with a message (and fail
# under SPATE_REQUIRE_TOOLS=1).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/target/test-node"
mkdir -p "$dir"
cp "$root/tests/it/servers/everything/package.json" "$root/tests/it/servers/everything/package-lock.json" "$dir/"
cd "$dir"
npm ci --no-audit --no-fund --silent
