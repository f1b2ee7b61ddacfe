#!/bin/sh
# Installs corvid from a release: picks the archive for this machine, checks its SHA-256, and
# puts `corvid` and `corvid-desktop` in a bin folder. No Rust toolchain needed.
#
#   curl -fsSL <release>/install.sh | sh
#   sh install.sh [--prefix DIR] [--from URL]
#
# --from (or CORVID_RELEASE_URL): the folder holding the release's files, e.g.
# https://github.com/<owner>/<repo>/releases/latest/download (the release workflow writes its own
# repository into the copy it publishes) or a local file:// folder. --prefix (or CORVID_PREFIX):
# where bin/ goes, default ~/.local.
set -eu

from="${CORVID_RELEASE_URL:-}"
prefix="${CORVID_PREFIX:-$HOME/.local}"
# Filled in by the release workflow for the copy it publishes.
default_from=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="$2"; shift 2 ;;
    --from) from="$2"; shift 2 ;;
    *) echo "install.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
from="${from:-$default_from}"
if [ -z "$from" ]; then
  echo "install.sh: say where the release is: --from URL (or CORVID_RELEASE_URL)" >&2
  exit 2
fi

# This machine's archive.
os="$(uname -s)"
arch="$(uname -m)"
case "$os/$arch" in
  Linux/x86_64 | Linux/amd64) target="x86_64-unknown-linux-gnu" ;;
  Linux/aarch64 | Linux/arm64) target="aarch64-unknown-linux-gnu" ;;
  Darwin/*) target="universal-apple-darwin" ;;
  *) echo "install.sh: no corvid build for $os/$arch; build from source (see README.md)" >&2; exit 1 ;;
esac
archive="corvid-$target.tar.gz"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT INT TERM
fetch() {
  curl --fail --silent --show-error --location --proto '=https,file' --output "$2" "$1" || {
    echo "install.sh: cannot download $1" >&2
    exit 1
  }
}
echo "corvid: downloading $archive from $from"
fetch "$from/$archive" "$work/$archive"
fetch "$from/$archive.sha256" "$work/$archive.sha256"

# The checksum file names the archive; check the bytes we have against it.
expected="$(cut -d' ' -f1 < "$work/$archive.sha256")"
if command -v sha256sum >/dev/null 2>&1; then
  actual="$(sha256sum "$work/$archive" | cut -d' ' -f1)"
else
  actual="$(shasum -a 256 "$work/$archive" | cut -d' ' -f1)"
fi
if [ -z "$expected" ] || [ "$expected" != "$actual" ]; then
  echo "install.sh: checksum mismatch for $archive (expected $expected, got $actual): not installed" >&2
  exit 1
fi

tar -xzf "$work/$archive" -C "$work"
folder="$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'corvid-*' | head -n 1)"
mkdir -p "$prefix/bin"
for bin in corvid corvid-desktop; do
  [ -f "$folder/$bin" ] || { echo "install.sh: $bin is missing from $archive" >&2; exit 1; }
  # Through a temporary name: a running corvid keeps its old file.
  cp "$folder/$bin" "$prefix/bin/.$bin.new"
  chmod 755 "$prefix/bin/.$bin.new"
  mv -f "$prefix/bin/.$bin.new" "$prefix/bin/$bin"
done
echo "corvid: installed $("$prefix/bin/corvid" --version) in $prefix/bin"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "corvid: add $prefix/bin to your PATH" ;;
esac
echo "corvid: next, run \`corvid serve\` (or \`corvid service install\` to run it at login)"
