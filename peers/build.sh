#!/usr/bin/env bash
# peers/build.sh [DIR]: builds the C programs in peers/ (pipe_ref,
# splice_cat_ref, ipc_ref, cat-loops, splice-middle: every peers/*.c) into
# DIR, default target/peers of this checkout, each named after its file
# without the .c, with `cc -O2 -Wall -pthread` (they build without a
# warning). A program newer than its source is left as it is. Prints DIR.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:-$(dirname "$here")/target/peers}
mkdir -p "$out"
for src in "$here"/*.c; do
  name=$(basename "$src" .c)
  [ "$out/$name" -nt "$src" ] && continue
  # Built beside, then renamed: a script running the old one meanwhile
  # never finds half a file.
  cc -O2 -Wall -pthread -o "$out/.$name.new" "$src"
  mv -f "$out/.$name.new" "$out/$name"
done
echo "$out"
