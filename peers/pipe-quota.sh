#!/bin/sh
# How many concurrent large copies one unprivileged user can run before
# the per-user pipe budget (/proc/sys/fs/pipe-user-pages-soft) bites,
# pipespeed cat against GNU cat.
#
# Usage: [SIZE=16M] [PIPESPEED=BIN] peers/pipe-quota.sh [N ...]
#   N: numbers of concurrent pipelines (default: 1 16 24 28 30 31 32 33 34
#   48 64 200 1000 1010 1020 1030); SIZE: the copied file's size, as
#   head -c takes it; PIPESPEED: the binary (default target/release/pipespeed)
#
# For each N and each tool X, starts N pipelines `X BIG | sleep 600` (the
# reader has not read yet, so every pipe stays as the writer sized it),
# waits until every pipe holds bytes (the writer has sized its pipes by
# then), then makes a new pipe as the same user and reports its size and
# whether F_SETPIPE_SZ may still enlarge it to pipe-max-size. Then the
# readers are killed and every writer has exited before the next round.
# Past the soft limit a new pipe gets 2 pages (8 KiB) and enlarging fails.
#
# Root is exempt from the budget: run as root, the script copies itself
# and the binary into a directory the user nobody can read and reruns
# itself as nobody (runuser). BIG is made in a temporary directory.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" = 0 ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	chmod 755 "$tmp"
	cp "$0" "$tmp/pipe-quota.sh"
	cp "${PIPESPEED:-$here/../target/release/pipespeed}" "$tmp/pipespeed"
	echo "# peers/pipe-quota.sh${*:+ $*}"
	runuser -u nobody -- env PIPESPEED="$tmp/pipespeed" SIZE="${SIZE:-16M}" sh "$tmp/pipe-quota.sh" --as-is "$@"
	exit
fi
if [ "${1:-}" = --as-is ]; then
	shift
else
	echo "# peers/pipe-quota.sh${*:+ $*}"
fi
[ $# -gt 0 ] || set -- 1 16 24 28 30 31 32 33 34 48 64 200 1000 1010 1020 1030
pipespeed=${PIPESPEED:-$here/../target/release/pipespeed}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
big=$work/big
head -c "${SIZE:-16M}" /dev/zero > "$big"

# Waits until the pipe each pid reads holds bytes, then makes a new pipe
# and prints its size in KiB and whether it may grow to pipe-max-size.
probe='
import fcntl, os, struct, sys, termios, time
F_SETPIPE_SZ, F_GETPIPE_SZ = 1031, 1032
deadline = time.monotonic() + 120
for pid in sys.argv[1:]:
    while True:
        try:
            fd = os.open(f"/proc/{pid}/fd/0", os.O_RDONLY | os.O_NONBLOCK)
            try:
                queued = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0]
            finally:
                os.close(fd)
            if queued > 0:
                break
        except OSError:
            pass  # not its pipe yet
        if time.monotonic() > deadline:
            sys.exit(f"pipe of {pid} still empty")
        time.sleep(0.01)
r, w = os.pipe()
size = fcntl.fcntl(w, F_GETPIPE_SZ)
try:
    fcntl.fcntl(w, F_SETPIPE_SZ, int(open("/proc/sys/fs/pipe-max-size").read()))
    grows = "yes"
except OSError:
    grows = "refused"
print(f"{size // 1024} KiB | {grows}")
'

# round WRITER N: the probe's answer with N pipelines `WRITER BIG | sleep`.
round() {
	readers=
	i=0
	while [ "$i" -lt "$2" ]; do
		$1 "$big" | sleep 600 &
		readers="$readers $!"
		i=$((i + 1))
	done
	# shellcheck disable=SC2086 # one pid per argument
	python3 -c "$probe" $readers
	# shellcheck disable=SC2086
	kill $readers
	wait
}

echo "kernel $(uname -r); user $(id -un) (uid $(id -u)); pipe-user-pages-soft $(cat /proc/sys/fs/pipe-user-pages-soft); pipe-max-size $(cat /proc/sys/fs/pipe-max-size); BIG $(wc -c < "$big") bytes; pipeline: X BIG | sleep 600"
echo "pipespeed: $("$pipespeed" --version)"
echo "GNU: $(cat --version | head -1)"
echo
echo "| N | pipespeed cat: new pipe | may grow | GNU cat: new pipe | may grow |"
echo "|---:|---:|---|---:|---|"
for n in "$@"; do
	echo "| $n | $(round "$pipespeed cat" "$n") | $(round cat "$n") |"
done
