#!/usr/bin/env bash
# What CI runs (via .ci/run): formatting, lints as errors, the README's test command, and a
# lint of the shell scripts users run by shellcheck (required when SPATE_REQUIRE_SHELLCHECK=1).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings
if command -v shellcheck >/dev/null 2>&1; then
  shellcheck install.sh scripts/*.sh bench/arena/*.sh .ci/run
elif [ "${SPATE_REQUIRE_SHELLCHECK:-}" = 1 ]; then
  echo "check.sh: shellcheck is not installed" >&2
  exit 1
else
  echo "check.sh: shellcheck not installed; install.sh and scripts/ not linted" >&2
fi
cargo test --locked
