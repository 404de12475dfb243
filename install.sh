#!/bin/sh
# Installs the spate release binary for this OS and CPU, after checking its SHA-256.
#
#   curl -fsSL https://raw.githubusercontent.com/spate-rs/spate/main/install.sh | sh
#   curl -fsSL https://raw.githubusercontent.com/spate-rs/spate/main/install.sh | sh -s -- --prefix /usr/local
#   sh install.sh [--prefix DIR] [--version TAG]
#
# The binary goes to PREFIX/bin (default prefix: ~/.local) and the man page to
# PREFIX/share/man/man1. Root is needed only when PREFIX is not writable (then run with sudo).
# Environment: SPATE_PREFIX, SPATE_VERSION (a tag such as v0.1.0; default: the latest release),
# SPATE_BASE_URL (the directory holding the release files; default: the GitHub release).
# Exit codes: 0 installed; 1 download, checksum or install failed; 2 usage error or unsupported
# platform.
set -eu

repo="https://github.com/spate-rs/spate"
prefix="${SPATE_PREFIX:-${HOME:-}/.local}"
version="${SPATE_VERSION:-latest}"

usage() {
    printf '%s\n' "usage: install.sh [--prefix DIR] [--version TAG]" \
        "Installs spate to DIR/bin (default ~/.local/bin) after checking its SHA-256." \
        "Environment: SPATE_PREFIX, SPATE_VERSION, SPATE_BASE_URL."
}
say() { printf 'spate install: %s\n' "$1"; }
fail() { printf 'spate install: %s\n' "$1" >&2; exit "${2:-1}"; }

while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || fail "--prefix needs a directory" 2; prefix="$2"; shift 2 ;;
        --prefix=*) prefix="${1#--prefix=}"; shift ;;
        --version) [ $# -ge 2 ] || fail "--version needs a tag such as v0.1.0" 2; version="$2"; shift 2 ;;
        --version=*) version="${1#--version=}"; shift ;;
        -h|--help) usage; exit 0 ;;
        *) fail "unknown argument '$1' (try --prefix DIR or --version TAG)" 2 ;;
    esac
done
[ -n "$prefix" ] || fail "no prefix: HOME is not set; use --prefix DIR" 2

os="$(uname -s)"
cpu="$(uname -m)"
case "$os" in
    Linux)
        # glibc systems get the build linked against glibc 2.17; musl systems (Alpine) the
        # static one.
        os_part="unknown-linux-gnu"
        case "$(ldd --version 2>&1)" in
            *musl*) os_part="unknown-linux-musl" ;;
        esac ;;
    Darwin) os_part="apple-darwin" ;;
    MINGW*|MSYS*|CYGWIN*|Windows_NT)
        fail "Windows: download spate-x86_64-pc-windows-msvc.zip from $repo/releases" 2 ;;
    *) fail "unsupported operating system '$os' (builds exist for Linux and macOS; or: cargo install --git $repo)" 2 ;;
esac
case "$cpu" in
    x86_64|amd64) cpu_part="x86_64" ;;
    aarch64|arm64) cpu_part="aarch64" ;;
    *) fail "unsupported CPU '$cpu' on $os (builds exist for x86_64 and aarch64; or: cargo install --git $repo)" 2 ;;
esac
target="$cpu_part-$os_part"
archive="spate-$target.tar.gz"

if [ -n "${SPATE_BASE_URL:-}" ]; then
    base="${SPATE_BASE_URL%/}"
elif [ "$version" = latest ]; then
    base="$repo/releases/latest/download"
else
    base="$repo/releases/download/$version"
fi

if command -v curl >/dev/null 2>&1; then
    fetch() { curl -fsSL -o "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
    fetch() { wget -q -O "$2" "$1"; }
else
    fail "neither curl nor wget is installed; install one of them and run this again"
fi
if command -v sha256sum >/dev/null 2>&1; then
    digest() { sha256sum "$1"; }
elif command -v shasum >/dev/null 2>&1; then
    digest() { shasum -a 256 "$1"; }
else
    fail "neither sha256sum nor shasum is installed: cannot verify the download"
fi

tmp="$(mktemp -d 2>/dev/null || mktemp -d -t spate)"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

say "downloading $base/$archive"
fetch "$base/$archive" "$tmp/$archive" || fail "cannot download $base/$archive"
fetch "$base/$archive.sha256" "$tmp/$archive.sha256" || fail "cannot download $base/$archive.sha256"

expected="$(cut -d ' ' -f 1 <"$tmp/$archive.sha256")"
actual="$(digest "$tmp/$archive" | cut -d ' ' -f 1)"
if [ "${#expected}" -ne 64 ] || [ "$expected" != "$actual" ]; then
    fail "checksum mismatch for $archive (expected '$expected', got '$actual'): not installed"
fi

mkdir "$tmp/x"
tar -xzf "$tmp/$archive" -C "$tmp/x" || fail "cannot unpack $archive"
[ -f "$tmp/x/spate" ] || fail "$archive has no spate binary"

bin="$prefix/bin"
if ! mkdir -p "$bin" 2>/dev/null || [ ! -w "$bin" ]; then
    fail "cannot write to $bin: run with sudo, or choose another --prefix"
fi
# Copy beside the destination, then rename: a running spate is never overwritten in place.
partial="$bin/.spate.new.$$"
if ! { cp "$tmp/x/spate" "$partial" && chmod 755 "$partial" && mv -f "$partial" "$bin/spate"; }; then
    rm -f "$partial"
    fail "cannot install $bin/spate"
fi
if [ -f "$tmp/x/spate.1" ] && mkdir -p "$prefix/share/man/man1" 2>/dev/null; then
    cp "$tmp/x/spate.1" "$prefix/share/man/man1/spate.1" 2>/dev/null || true
fi

installed="$("$bin/spate" --version 2>/dev/null)" || fail "installed $bin/spate, but it does not run on this machine"
say "installed $installed to $bin/spate"
case ":${PATH:-}:" in
    *":$bin:"*) ;;
    *) say "$bin is not on your PATH; add it, e.g. in ~/.profile: export PATH=\"$bin:\$PATH\"" ;;
esac
