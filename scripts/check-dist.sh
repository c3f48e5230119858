#!/usr/bin/env bash
# scripts/check-dist.sh TARBALL: checks a bundle made by scripts/dist.sh.
#  - its sha256 file matches;
#  - ldd calls its binary not dynamic;
#  - the binary runs with an empty environment, chrooted in a fresh user,
#    mount and PID namespace into a directory holding nothing but itself,
#    /proc and /dev/null (what a minimal VM has): --version says
#    `libc: static`, a small ladder measures, and `generate man` works.
# Needs unprivileged user namespaces (or root). Exit 0: all good.
set -euo pipefail

tarball=$(realpath "$1")
(cd "$(dirname "$tarball")" && sha256sum --quiet -c "$(basename "$tarball").sha256")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xzf "$tarball"
bin=$(echo "$work"/pipespeed-*/bin/pipespeed)
if ! ldd "$bin" 2>&1 | grep -qE 'not a dynamic executable|statically linked'; then
  echo "check-dist: $bin is dynamic: $(ldd "$bin" 2>&1 | head -n1)" >&2
  exit 1
fi

jail="$work/jail"
mkdir -p "$jail/bin" "$jail/proc" "$jail/dev" "$jail/tmp"
cp "$bin" "$jail/bin/pipespeed"
: >"$jail/dev/null"
# Inside the namespaces: /dev/null and /proc mounted, then the binary
# alone under chroot, with no environment at all.
in_jail() {
  unshare --user --map-root-user --mount --pid --fork sh -c '
    jail=$1; shift
    mount --bind /dev/null "$jail/dev/null" && mount -t proc proc "$jail/proc" &&
      exec /usr/bin/env -i /usr/sbin/chroot "$jail" "$@"' sh "$jail" "$@"
}
version=$(in_jail /bin/pipespeed --version)
echo "$version"
grep -qx 'libc: static' <<<"$version"
in_jail /bin/pipespeed bench --rungs write-read,vmsplice-splice --runs 2 --bytes 4M \
  --placement-runs 0 --json /tmp/ladder.json
in_jail /bin/pipespeed generate man /tmp/man
echo "check-dist: $(basename "$tarball"): static, runs alone"
