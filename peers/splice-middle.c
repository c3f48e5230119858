/* The middle of a pipeline, reduced to its system calls, to find what
 * bounds `src | METER | reader`: peers/middle-loop.sh runs it beside
 * pipespeed pv and Debian's pv.
 *
 *   splice-middle 0 [CHUNK]  blocking splice(stdin, stdout, CHUNK) until EOF
 *   splice-middle 1 [CHUNK]  stdin -> a private 1 MiB pipe -> stdout, both
 *                            splices SPLICE_F_NONBLOCK, poll(2) when stuck
 *                            (1 MiB more buffering in the middle)
 * Both pipes are grown to 1 MiB with F_SETPIPE_SZ unless NOGROW is set.
 * Build: cc -O2 -o target/splice-middle peers/splice-middle.c */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MIB (1 << 20)

static int die(const char *what) { perror(what); return 1; }

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: splice-middle 0|1 [CHUNK]\n"); return 2; }
  int mode = atoi(argv[1]);
  size_t chunk = argc > 2 ? strtoul(argv[2], NULL, 10) : MIB;
  if (!getenv("NOGROW") && (fcntl(0, F_SETPIPE_SZ, MIB) < 0 || fcntl(1, F_SETPIPE_SZ, MIB) < 0))
    return die("F_SETPIPE_SZ");
  if (mode == 0) {
    for (;;) {
      ssize_t n = splice(0, NULL, 1, NULL, chunk, 0);
      if (n == 0) return 0;
      if (n < 0) return die("splice");
    }
  }
  int p[2];
  if (pipe(p) < 0 || fcntl(p[1], F_SETPIPE_SZ, MIB) < 0) return die("pipe");
  size_t held = 0;
  int eof = 0;
  for (;;) {
    int progress = 0;
    if (!eof && held < MIB) {
      ssize_t n = splice(0, NULL, p[1], NULL, chunk, SPLICE_F_NONBLOCK);
      if (n == 0) eof = 1;
      else if (n > 0) held += n, progress = 1;
      else if (errno != EAGAIN) return die("splice in");
    }
    if (held) {
      ssize_t n = splice(p[0], NULL, 1, NULL, held, SPLICE_F_NONBLOCK);
      if (n > 0) held -= n, progress = 1;
      else if (n < 0 && errno != EAGAIN) return die("splice out");
    }
    if (eof && !held) return 0;
    if (!progress) {
      struct pollfd f[2] = {{0, POLLIN, 0}, {1, POLLOUT, 0}};
      int from_in = !eof && held < MIB, to_out = held > 0;
      if (poll(from_in ? f : f + 1, from_in + to_out, -1) < 0 && errno != EINTR) return die("poll");
    }
  }
}
