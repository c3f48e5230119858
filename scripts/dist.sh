#!/usr/bin/env bash
# scripts/dist.sh [OUTDIR]: a release bundle of pipespeed.
#
# Builds a statically linked binary for the host's gnu target (glibc's
# static libraries, `-C target-feature=+crt-static`: no musl toolchain
# needed), generates the manual pages and the completions with it, and packs
#   OUTDIR/pipespeed-VERSION-TARGET.tar.gz  (bin/, share/man/man1/,
#     share/bash-completion/completions/, share/zsh/site-functions/,
#     share/fish/vendor_completions.d/, README.md, LICENSE-*)
#   OUTDIR/pipespeed-VERSION-TARGET.tar.gz.sha256
# OUTDIR defaults to target/dist. The static binary runs where nothing
# else is: a minimal VM (virtme-ng), a container, an initramfs.
set -euo pipefail
cd "$(dirname "$0")/.."

out=${1:-target/dist}
target=$(rustc -vV | sed -n 's/^host: //p')
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
name="pipespeed-$version-$target"

# A separate target directory: the static build must not replace the
# dynamic one that `cargo run` and the tests use.
RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
  cargo build --release --locked --target "$target" --target-dir target/static >&2
bin="target/static/$target/release/pipespeed"
# ldd says "not a dynamic executable" or "statically linked" (glibc 2.36).
if ! ldd "$bin" 2>&1 | grep -qE 'not a dynamic executable|statically linked'; then
  echo "dist.sh: $bin is dynamically linked: $(ldd "$bin" 2>&1 | head -n1)" >&2
  exit 1
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/$name"
mkdir -p "$root/bin" "$root/share/man/man1" "$root/share/bash-completion/completions" \
  "$root/share/zsh/site-functions" "$root/share/fish/vendor_completions.d"
cp "$bin" "$root/bin/pipespeed"
"$bin" generate man "$root/share/man/man1" 2>/dev/null
"$bin" generate completions bash >"$root/share/bash-completion/completions/pipespeed"
"$bin" generate completions zsh >"$root/share/zsh/site-functions/_pipespeed"
"$bin" generate completions fish >"$root/share/fish/vendor_completions.d/pipespeed.fish"
cp README.md "$root/"
cp LICENSE-APACHE LICENSE-MIT "$root/"

mkdir -p "$out"
tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$out/$name.tar.gz" "$name"
(cd "$out" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
echo "$out/$name.tar.gz"
