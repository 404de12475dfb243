#!/usr/bin/env bash
# What CI runs (via .ci/run): formatting, lints as errors, and the README's test command.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings
cargo test --locked
