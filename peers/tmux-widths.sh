#!/usr/bin/env bash
# Every command's default text in a real terminal of W columns (issue 38):
# each runs in a tmux window resized to W (`resize-window -x W`), without
# COLUMNS, so the width comes from the terminal as a user's would; the
# pane's lines are read back joined where the terminal wrapped them
# (`capture-pane -J`), so a line wider than W shows at its real width.
#
#   peers/tmux-widths.sh [PIPESPEED] [WIDTHS]
#
# PIPESPEED defaults to target/release/pipespeed, WIDTHS to "80 120".
# Prints, per command and width: its lines, its widest line and whether
# that fits. `top` watches a `yes | pipespeed pv -q -L 5M | head -c 10M`
# pipeline it starts itself (--run), about 2 windows; `compare` compares two
# latency results made first. Needs tmux.
set -euo pipefail
exe=$(realpath "${1:-target/release/pipespeed}")
widths=${2:-80 120}
command -v tmux >/dev/null || { echo "needs tmux" >&2; exit 2; }
work=$(mktemp -d)
session="widths-$$"
trap 'tmux kill-session -t "$session" 2>/dev/null; rm -rf "$work"' EXIT INT TERM HUP
"$exe" latency --duration 0.2 --json "$work/a.json" >/dev/null 2>&1
"$exe" latency --duration 0.2 --json "$work/b.json" >/dev/null 2>&1
commands=(
  "$exe"
  "$exe latency"
  "$exe contend"
  "$exe ipc"
  "$exe compare $work/a.json $work/b.json"
  "$exe top --interval 1 --run 'yes | $exe pv -q -L 5M | head -c 10M > /dev/null'"
  "$exe bench --zero-copy"
)
names=(pipespeed latency contend ipc compare top "bench --zero-copy")
printf '%-18s %7s %6s %7s %s\n' command columns lines widest fits
for width in $widths; do
  for i in "${!commands[@]}"; do
    done_file="$work/done-$i-$width"
    # The window is resized before the command starts (it waits a second),
    # and a tall one keeps the whole text; 2>&1: stderr is on the screen too.
    tmux new-session -d -s "$session" -x 200 -y 200 \
      "sleep 1; unset COLUMNS; ${commands[$i]} 2>&1; touch $done_file; sleep 600"
    tmux resize-window -t "$session" -x "$width" -y 200
    while [ ! -e "$done_file" ]; do sleep 1; done
    # Trailing blanks are not printed text: tmux keeps the pane's.
    tmux capture-pane -t "$session" -pJ -S - | sed -e 's/ *$//' >"$work/out-$i-$width.txt"
    tmux kill-session -t "$session"
    out=$(sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$work/out-$i-$width.txt")
    lines=$(printf '%s\n' "$out" | wc -l)
    widest=$(printf '%s\n' "$out" | awk '{ n = length($0); if (n > w) w = n } END { print w + 0 }')
    fits=yes; [ "$widest" -le "$width" ] || fits=NO
    printf '%-18s %7s %6s %7s %s\n' "${names[$i]}" "$width" "$lines" "$widest" "$fits"
  done
done
