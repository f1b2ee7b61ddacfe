#!/usr/bin/env bash
# The release packaging and the install script, for this machine's target, from binaries built
# already: scripts/release packages them, the archive and its checksum are checked, install.sh
# installs from the local folder (a file:// URL) and refuses an archive whose checksum is wrong.
#
#   tests/release/check.sh [--profile debug|release]
set -euo pipefail
cd "$(dirname "$0")/../.."
profile="${2:-debug}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
check() {
  local name="$1"; shift
  if "$@"; then passed=$((passed + 1)); echo "ok: $name"; else failed=$((failed + 1)); echo "FAILED: $name"; fi
}

scripts/release --no-build --profile "$profile" --out "$work/dist"
host="$(rustc -vV | sed -n 's/^host: //p')"
archive="corvid-$host.tar.gz"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"

check "the checksum file matches the archive" \
  sh -c "cd '$work/dist' && sha256sum -c '$archive.sha256' >/dev/null"
check "the archive holds both programs and the README in one folder" \
  sh -c "tar -tzf '$work/dist/$archive' | sort | tr '\n' ' ' | grep -q 'corvid-$version-$host/ corvid-$version-$host/README.md corvid-$version-$host/corvid corvid-$version-$host/corvid-desktop'"

case "$host" in
  x86_64-unknown-linux-gnu | aarch64-unknown-linux-gnu)
    check "install.sh installs from a local release" \
      sh -c "scripts/install.sh --from 'file://$work/dist' --prefix '$work/prefix' >'$work/install.log' 2>&1"
    check "the installed corvid runs" \
      sh -c "'$work/prefix/bin/corvid' --version | grep -q '^corvid $version\$'"
    check "the installed corvid-desktop runs" \
      sh -c "'$work/prefix/bin/corvid-desktop' --version | grep -q '^corvid-desktop $version\$'"
    # A tampered archive: same name, other bytes.
    mkdir -p "$work/bad"
    cp "$work/dist/$archive.sha256" "$work/bad/"
    printf 'not corvid' | gzip > "$work/bad/$archive"
    check "install.sh refuses an archive whose checksum is wrong" \
      sh -c "! scripts/install.sh --from 'file://$work/bad' --prefix '$work/bad-prefix' 2>'$work/bad.log' && grep -q 'checksum mismatch' '$work/bad.log' && [ ! -e '$work/bad-prefix/bin/corvid' ]"
    ;;
  *) echo "(install.sh's archives are for Linux and macOS release builds; not checked on $host)" ;;
esac

echo "release: $passed passed, $failed failed"
[ "$failed" = 0 ]
