#!/usr/bin/env bash
# scripts/references.sh [NAME...]: fetches the tools pipespeed is compared
# with into target/references/ of this checkout (wherever it is run from),
# each under its own NAME-VERSION/ directory, and prints the absolute path
# of each of its programs, one a line, in the order below:
#
#   NAME        what                                        programs, in target/references/bin/
#   pv          pv 1.12 (Debian sid)                        pv
#   gnu-9.10    GNU coreutils 9.10 (Debian sid)             gnu-cat gnu-tee
#   gnu-9.12    GNU coreutils 9.12 (Debian experimental)    gnu12-cat gnu12-tee gnu12-yes
#   strace      strace 7 (Debian sid)                       strace
#   pipe-bench  the kernel's tools/testing/selftests/pipe/  pipe_bench
#               pipe_bench.c from Debian sid's
#               linux-source-7.2, built with cc
#   uutils      uutils coreutils 0.12.0: Debian sid's       uutils-cat uutils-tee uutils-yes
#               rust-coreutils, else cargo install
#
# No NAME: all of them. The tests read the programs from their variables
# (PIPESPEED_PV=target/references/bin/pv, PIPESPEED_GNU_TEE=.../gnu-tee,
# PIPESPEED_GNU12_YES=.../gnu12-yes, PIPESPEED_STRACE=.../strace,
# PIPESPEED_PIPE_BENCH=.../pipe_bench, each as an absolute path).
#
# Cached by version: a NAME whose NAME-VERSION/ directory exists is not
# fetched again and nothing goes to the network; its links in bin/ are
# made again if missing and its paths printed, nothing else (there is no
# --check: delete NAME-VERSION/ to fetch it again). A directory appears
# whole or not at all (it is made beside and renamed), so an interrupted
# fetch leaves nothing that passes for a cached one.
#
# Debian's programs are taken out of their packages (dpkg -x; nothing is
# installed) with the libraries they need, and run through Debian's own
# loader and C library, fetched with them: bin/ holds small sh wrappers.
# apt works in a private state directory under target/references/, with
# the Debian mirror this machine's apt uses (PIPESPEED_DEBIAN_MIRROR
# overrides it; http://deb.debian.org/debian where none is found); nothing
# system-wide changes. The .debs are deleted once their programs are in
# place (for pipe-bench: once pipe_bench.c is taken out and built).
#
# Each NAME is fetched on its own (its own apt state), so several runs may
# go side by side: `scripts/references.sh pv & scripts/references.sh
# gnu-9.10 & wait`. A NAME that cannot be fetched: one line on stderr
# naming it and why; the others are still tried, and the exit status is 1.
# An unknown NAME: exit status 2, nothing fetched. Needs bash, apt-get,
# dpkg, python3 (pipe-bench), cc (pipe-bench), cargo (uutils, only if
# Debian has no rust-coreutils 0.12.0).
set -euo pipefail

all=(pv gnu-9.10 gnu-9.12 strace pipe-bench uutils)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
refs=$root/target/references
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

usage() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}" >&2
  exit "$1"
}

# The directory a NAME is cached in, under $refs.
dir_of() {
  case $1 in
  pv) echo pv-1.12 ;;
  gnu-9.10 | gnu-9.12) echo "$1" ;;
  strace) echo strace-7 ;;
  pipe-bench) echo pipe-bench-7.2 ;;
  uutils) echo uutils-0.12.0 ;;
  esac
}

# The programs a NAME gives, as named in bin/.
programs_of() {
  case $1 in
  pv) echo pv ;;
  gnu-9.10) echo gnu-cat gnu-tee ;;
  gnu-9.12) echo gnu12-cat gnu12-tee gnu12-yes ;;
  strace) echo strace ;;
  pipe-bench) echo pipe_bench ;;
  uutils) echo uutils-cat uutils-tee uutils-yes ;;
  esac
}

# The Debian mirror: PIPESPEED_DEBIAN_MIRROR, else the first .../debian
# URI of this machine's apt sources (not the security archive), else
# deb.debian.org.
mirror() {
  if [ -n "${PIPESPEED_DEBIAN_MIRROR:-}" ]; then
    echo "$PIPESPEED_DEBIAN_MIRROR"
    return
  fi
  local found
  found=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    sed -n -e 's/^URIs:[[:space:]]*//p' -e 's/^deb[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]*\)\{0,1\}//p' |
    tr ' ' '\n' | grep -E '^(https?|file)://.*/debian/?$' | head -n 1 || true)
  echo "${found:-http://deb.debian.org/debian}"
}

# --- The work on one NAME, in a subshell of its own (fetch below). ---
# $name, $stage (its directory being made) and $log are set there.

fail() {
  printf 'references.sh: %s: %s\n' "$name" "$*" >&2
  exit 1
}

# try WHAT COMMAND...: runs COMMAND, its output kept in $log; if it fails,
# the NAME fails with WHAT and the last line COMMAND printed.
try() {
  local what=$1
  shift
  "$@" >>"$log" 2>&1 || fail "$what failed: $(tail -n 1 "$log")"
}

progress() {
  if [ -t 2 ]; then printf 'references.sh: %s: %s\n' "$name" "$*" >&2; fi
}

# apt_init SUITE...: a private apt state in $stage/apt knowing SUITE... of
# the mirror (main, binary packages only); its options in the array apt.
apt_init() {
  [ -r "$keyring" ] || fail "no Debian archive keyring at $keyring (the package debian-archive-keyring)"
  local dir=$stage/apt suite url
  url=$(mirror)
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/debs"
  : >"$dir/sources.list"
  : >"$dir/preferences"
  for suite; do
    printf 'deb [signed-by=%s] %s %s main\n' "$keyring" "$url" "$suite" >>"$dir/sources.list"
  done
  apt=(-o Dir::Etc::sourcelist="$dir/sources.list" -o Dir::Etc::sourceparts=-
    -o Dir::Etc::preferences="$dir/preferences" -o Dir::Etc::preferencesparts=-
    -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache"
    -o APT::Default-Release= -o APT::Sandbox::User="$(id -un)"
    -o Acquire::Languages=none -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
    -o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false
    -o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false)
  progress "apt-get update ($* of $url)"
  try "apt-get update ($* of $url)" apt-get "${apt[@]}" update -qq
  # An index it could not fetch is only a warning to apt-get (status 0).
  if grep -q 'Failed to fetch' "$log"; then
    fail "apt-get update ($* of $url) failed: $(grep -m 1 'Failed to fetch' "$log")"
  fi
  printf 'mirror: %s (%s)\n' "$url" "$*" >>"$stage/SOURCE"
}

# version_of PACKAGE WANT: the newest Debian version of PACKAGE whose
# upstream version is WANT or starts with WANT and one of . + ~ (9.10
# gives 9.10-1, never 9.100-1); fails saying which versions there are.
version_of() {
  local versions v upstream
  versions=$(apt-cache "${apt[@]}" madison "$1" 2>>"$log" | awk -F'|' '{gsub(/ /, "", $2); print $2}')
  for v in $versions; do
    upstream=${v#*:}
    upstream=${upstream%-*}
    case $upstream in "$2" | "$2".* | "$2"+* | "$2"~*)
      echo "$v"
      return
      ;;
    esac
  done
  fail "Debian has no $1 $2 (it has: $(echo "${versions:-none}" | paste -sd ' ' -))"
}

# debs PACKAGE=VERSION: downloads it and every package it needs
# (recursively, by Depends and Pre-Depends, the others at their candidate
# versions) into $stage/apt/debs and extracts them all into $stage/root.
debs() {
  local pkg=${1%%=*} deps d
  deps=$(apt-cache "${apt[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
    --no-breaks --no-replaces --no-enhances "$1" 2>>"$log") ||
    fail "apt-cache depends $1 failed: $(tail -n 1 "$log")"
  # Its lines: a package's name at the start, then what it depends on,
  # indented; <virtual> packages are left out (something real provides them).
  deps=$(echo "$deps" | grep -E '^[a-z0-9]' | grep -vxF "$pkg" | sort -u || true)
  progress "apt-get download $1 $(echo "$deps" | tr '\n' ' ')"
  # shellcheck disable=SC2086 # package names: no spaces, no patterns
  (cd "$stage/apt/debs" && try "apt-get download $1" apt-get "${apt[@]}" download -qq "$1" $deps)
  mkdir -p "$stage/root"
  for d in "$stage"/apt/debs/*.deb; do
    try "dpkg -x $(basename "$d")" dpkg -x "$d" "$stage/root"
    # shellcheck disable=SC2016 # dpkg-deb's ${Field}s, not the shell's
    dpkg-deb --show --showformat='${Package} = ${Version}\n' "$d" >>"$stage/SOURCE"
  done
}

# wrapper PROGRAM COMMAND...: $stage/bin/PROGRAM, a sh script running
# COMMAND (paths under root/, relative to NAME-VERSION/) through the
# Debian loader and libraries in $stage/root, from wherever NAME-VERSION/
# lies (it finds itself through any symlinks: the tests link it as `tee`).
wrapper() {
  local program=$1 loader libs arg command=""
  shift
  loader=$(cd "$stage" && find root -name 'ld-linux*.so.*' -type f | head -n 1)
  [ -n "$loader" ] || fail "no ld-linux*.so.* in the packages fetched"
  libs=$(cd "$stage" && find root \( -name 'lib*.so' -o -name 'lib*.so.*' \) -not -path '*/gconv/*' -printf '%h\n' | sort -u |
    sed 's|^|$d/|' | paste -sd: -)
  for arg; do
    case $arg in root/*) command="$command \"\$d/$arg\"" ;; *) command="$command $arg" ;; esac
  done
  mkdir -p "$stage/bin"
  cat >"$stage/bin/$program" <<EOF
#!/bin/sh
# $program: made by scripts/references.sh from Debian's packages (see
# ../SOURCE), run through the loader and C library fetched with them.
d=\$(dirname "\$(readlink -f "\$0")")/..
exec "\$d/$loader" --library-path "$libs"$command "\$@"
EOF
  chmod +x "$stage/bin/$program"
}

# check PROGRAM TEXT ARG...: `$stage/bin/PROGRAM ARG...` prints TEXT in
# its first line.
check() {
  local program=$1 text=$2 first
  shift 2
  first=$("$stage/bin/$program" "$@" 2>&1 | head -n 1) || true
  case $first in *"$text"*) printf '%s: %s\n' "$program" "$first" >>"$stage/SOURCE" ;;
  *) fail "$program $* printed \"$first\", not \"$text\"" ;;
  esac
}

# Debian's loader takes its library path split at ':'.
no_colon() {
  case $refs in *:*) fail "Debian's loader cannot run from a path with ':' in it ($refs)" ;; esac
}

# from_debian "SUITE..." PACKAGE WANT: PACKAGE at version WANT (as
# version_of takes it) and what it needs, extracted into $stage/root.
from_debian() {
  local version
  no_colon
  # shellcheck disable=SC2086 # SUITEs: words
  apt_init $1
  version=$(version_of "$2" "$3")
  debs "$2=$version"
}

fetch_pv() {
  from_debian sid pv 1.12
  wrapper pv --argv0 pv root/usr/bin/pv
  check pv "pv 1.12" --version
}

fetch_gnu() { # SUITES VERSION PREFIX: coreutils VERSION, programs PREFIX-cat ...
  local tool programs=(cat tee)
  from_debian "$1" coreutils "$2"
  [ "$2" = 9.10 ] || programs+=(yes)
  for tool in "${programs[@]}"; do
    wrapper "$3-$tool" --argv0 "$tool" "root/usr/bin/$tool"
    check "$3-$tool" "(GNU coreutils) $2" --version
  done
}

fetch_strace() {
  from_debian sid strace 7
  wrapper strace --argv0 strace root/usr/bin/strace
  check strace "version 7." -V
}

fetch_pipe_bench() {
  local version deb
  apt_init sid
  version=$(version_of linux-source-7.2 7.2)
  progress "apt-get download linux-source-7.2=$version (160 MB)"
  (cd "$stage/apt/debs" && try "apt-get download linux-source-7.2=$version" \
    apt-get "${apt[@]}" download -qq "linux-source-7.2=$version")
  deb=$(find "$stage/apt/debs" -name 'linux-source-7.2_*.deb' | head -n 1)
  echo "linux-source-7.2 = $version" >>"$stage/SOURCE"
  # The .deb holds one file worth having, usr/src/linux-source-7.2.tar.xz
  # (160 MB, 1.6 GB unpacked); pipe_bench.c lies 99.6% of the way into
  # it (tools/ sorts near the end), so tar --occurrence=1 would stop
  # only after unpacking nearly all of it. The tarball is xz in blocks
  # of 24 MiB, each of which unpacks alone: take_from_xz_tar unpacks
  # blocks from the last one back until the file's tar header shows up
  # (5 of 68 here), and only where the .xz is not made so does the whole
  # stream go through xz and tar.
  progress "taking pipe_bench.c out of linux-source-7.2's tarball"
  dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards './usr/src/linux-source-*.tar.xz' >"$stage/apt/src.tar.xz" ||
    fail "no usr/src/linux-source-*.tar.xz in $(basename "$deb")"
  local status=0
  take_from_xz_tar "$stage/apt/src.tar.xz" tools/testing/selftests/pipe/pipe_bench.c "$stage/pipe_bench.c" 2>>"$log" ||
    status=$?
  if [ "$status" = 3 ]; then
    # Its blocks cannot be unpacked one by one: the whole stream. tar stops
    # at the file; xz, cut short, is not asked how it ended.
    set +o pipefail
    xz -T0 -dc "$stage/apt/src.tar.xz" 2>/dev/null |
      tar -xO --occurrence=1 --wildcards '*/tools/testing/selftests/pipe/pipe_bench.c' >"$stage/pipe_bench.c" 2>>"$log"
    set -o pipefail
  elif [ "$status" != 0 ]; then
    fail "no tools/testing/selftests/pipe/pipe_bench.c in $(basename "$deb"): $(tail -n 1 "$log")"
  fi
  [ -s "$stage/pipe_bench.c" ] || fail "no tools/testing/selftests/pipe/pipe_bench.c in $(basename "$deb")"
  mkdir -p "$stage/bin"
  try "cc -O2 -pthread pipe_bench.c" cc -O2 -pthread -o "$stage/bin/pipe_bench" "$stage/pipe_bench.c"
}

# take_from_xz_tar XZ PATH OUT: writes to OUT the file of the tarball XZ
# (one .xz stream) whose name is DIR/PATH, unpacking only the blocks it
# needs, the last first. Exit status 1: not found; 3: XZ is not one
# stream of LZMA2 blocks (then unpack it whole).
take_from_xz_tar() {
  python3 - "$@" <<'PY'
import lzma, struct, sys

path, want, out = sys.argv[1], sys.argv[2].encode(), sys.argv[3]
data = open(path, "rb").read()

def varint(buf, i):
    value = shift = 0
    while True:
        byte = buf[i]; i += 1
        value |= (byte & 0x7F) << shift; shift += 7
        if byte < 0x80:
            return value, i

def cannot(why):
    print(why, file=sys.stderr); sys.exit(3)

# The xz file format (https://tukaani.org/xz/xz-file-format.txt): a
# stream header, blocks, an index of (unpadded, unpacked) sizes, a footer.
if data[:6] != b"\xfd7zXZ\x00" or data[-2:] != b"YZ":
    cannot("not one .xz stream")
check_size = {0: 0, 1: 4, 4: 8, 10: 32}.get(data[7] & 0x0F)
if check_size is None:
    cannot("unknown check")
index_size = (struct.unpack("<I", data[-8:-4])[0] + 1) * 4
index_at = len(data) - 12 - index_size
count, i = varint(data, index_at + 1)
blocks, offset, unpacked = [], 12, 0
for _ in range(count):
    unpadded, i = varint(data, i)
    size, i = varint(data, i)
    blocks.append((offset, unpadded, unpacked, size))
    offset += (unpadded + 3) & ~3
    unpacked += size
if offset != index_at:
    cannot("more than one stream, or padding")

cache = {}
def unpack(n):
    """Block n unpacked: a raw LZMA2 stream after the block header."""
    if n not in cache:
        at, unpadded, _, size = blocks[n]
        header = (data[at] + 1) * 4
        flags = data[at + 1]
        j = at + 2
        if flags & 0x03:
            cannot("a block with more than one filter")
        if flags & 0x40:
            _, j = varint(data, j)
        if flags & 0x80:
            _, j = varint(data, j)
        filter_id, j = varint(data, j)
        _, j = varint(data, j)
        if filter_id != 0x21:
            cannot("a block not in LZMA2")
        prop = data[j]
        dict_size = 0xFFFFFFFF if prop >= 40 else (2 | (prop & 1)) << (prop // 2 + 11)
        raw = lzma.LZMADecompressor(lzma.FORMAT_RAW,
                                    filters=[{"id": lzma.FILTER_LZMA2, "dict_size": dict_size}])
        cache[n] = raw.decompress(data[at + header:at + unpadded - check_size])
        if len(cache[n]) != size:
            cannot("a block of another size than its index says")
    return cache[n]

def unpacked_range(start, length):
    """Bytes [start, start + length) of the tarball."""
    got = b""
    for n, (_, _, first, size) in enumerate(blocks):
        if first + size > start and first < start + length:
            got += unpack(n)[max(0, start - first):start + length - first]
    return got

# A ustar header is 512 bytes at a multiple of 512: the name at 0 (100
# bytes), the size in octal at 124, "ustar" at 257, a prefix at 345.
needle = b"/" + want + b"\x00"
for n in reversed(range(len(blocks))):
    first = blocks[n][2]
    window = unpack(n) + (unpack(n + 1)[:1024] if n + 1 < len(blocks) else b"")
    at = window.find(needle)
    while at >= 0:
        start = (first + at) // 512 * 512
        header = unpacked_range(start, 512)
        name = header[:100].rstrip(b"\x00")
        prefix = header[345:500].rstrip(b"\x00")
        full = prefix + b"/" + name if prefix else name
        top, _, rest = full.partition(b"/")
        if header[257:262] == b"ustar" and header[156:157] in (b"0", b"\x00") and top and rest == want:
            size = int(header[124:136].rstrip(b"\x00 ") or b"0", 8)
            open(out, "wb").write(unpacked_range(start + 512, size))
            sys.exit(0)
        at = window.find(needle, at + 1)
print(f"{want.decode()} is not in the tarball", file=sys.stderr)
sys.exit(1)
PY
}

fetch_uutils() {
  local tool version=""
  apt_init sid
  if [ -n "$(apt-cache "${apt[@]}" madison rust-coreutils 2>>"$log")" ]; then
    version=$(version_of rust-coreutils 0.12.0 2>/dev/null) || version=""
  fi
  if [ -n "$version" ]; then
    no_colon
    debs "rust-coreutils=$version"
    for tool in cat tee yes; do
      wrapper "uutils-$tool" root/usr/bin/coreutils "$tool"
    done
  else
    command -v cargo >/dev/null || fail "Debian has no rust-coreutils 0.12.0, and there is no cargo to build it"
    progress "cargo install coreutils 0.12.0 (cat, tee, yes: a few minutes)"
    try "cargo install coreutils 0.12.0" cargo install --quiet --locked coreutils --version 0.12.0 \
      --no-default-features --features cat,tee,yes --root "$stage/cargo"
    echo "cargo install coreutils --version 0.12.0 --no-default-features --features cat,tee,yes" >>"$stage/SOURCE"
    mkdir -p "$stage/bin"
    for tool in cat tee yes; do
      # shellcheck disable=SC2016 # the wrapper's $0 and $@
      printf '#!/bin/sh\n# uutils-%s: made by scripts/references.sh (cargo install, see ../SOURCE).\nexec "$(dirname "$(readlink -f "$0")")/../cargo/bin/coreutils" %s "$@"\n' \
        "$tool" "$tool" >"$stage/bin/uutils-$tool"
      chmod +x "$stage/bin/uutils-$tool"
    done
  fi
  for tool in cat tee yes; do
    check "uutils-$tool" "(uutils coreutils) 0.12.0" --version
  done
}

# fetch NAME: NAME-VERSION/ made if missing, its links in bin/, its paths
# printed. Runs in a subshell: a failure ends NAME only. (Not called as
# `fetch || ...`: that would turn set -e off inside it.)
fetch() (
  name=$1
  local dir program
  dir=$refs/$(dir_of "$name")
  if [ ! -d "$dir" ]; then
    mkdir -p "$refs"
    stage=$(mktemp -d "$refs/.$name.XXXXXX")
    chmod 755 "$stage" # mktemp makes it 0700; the tests also run as nobody
    log=$stage/log
    trap 'rm -rf "$stage"' EXIT
    printf 'fetched by scripts/references.sh %s on %s\n' "$name" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$stage/SOURCE"
    case $name in
    pv) fetch_pv ;;
    gnu-9.10) fetch_gnu sid 9.10 gnu ;;
    gnu-9.12) fetch_gnu "sid experimental" 9.12 gnu12 ;;
    strace) fetch_strace ;;
    pipe-bench) fetch_pipe_bench ;;
    uutils) fetch_uutils ;;
    esac
    rm -rf "$stage/apt" "$log"
    # Another run may have made it meanwhile: then its copy stays.
    mv -T "$stage" "$dir" 2>/dev/null || [ -d "$dir" ] || fail "cannot rename $stage to $dir"
  fi
  mkdir -p "$refs/bin"
  for program in $(programs_of "$name"); do
    [ -x "$dir/bin/$program" ] || fail "$dir/bin/$program is missing: delete $dir to fetch it again"
    if [ "$(readlink "$refs/bin/$program" 2>/dev/null)" != "../$(basename "$dir")/bin/$program" ]; then
      ln -sfn "../$(basename "$dir")/bin/$program" "$refs/bin/.$program.$$"
      mv -fT "$refs/bin/.$program.$$" "$refs/bin/$program"
    fi
    echo "$refs/bin/$program"
  done
)

names=("$@")
[ $# -gt 0 ] || names=("${all[@]}")
for name in "${names[@]}"; do
  case $name in
  -h | --help) usage 0 ;;
  *) [ -n "$(dir_of "$name")" ] || {
    echo "references.sh: unknown NAME $name (known: ${all[*]}; --help says more)" >&2
    exit 2
  } ;;
  esac
done
status=0
for name in "${names[@]}"; do
  set +e
  (
    set -e
    fetch "$name"
  )
  # shellcheck disable=SC2181 # the subshell above may not be an if's test
  [ $? = 0 ] || status=1
  set -e
done
exit "$status"
