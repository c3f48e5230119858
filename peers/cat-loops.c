/* cat's file -> pipe loop, reduced to its system calls, in the variants
 * tried against uutils cat 0.12 for issue #27 part 3 (docs/cat.md):
 *
 *   cat-loops mid CHUNK MID FILE     splice FILE -> a private pipe of MID
 *                                    bytes (CHUNK a call), then all of it
 *                                    -> stdout, blocking (uutils' loop, and
 *                                    pipespeed's)
 *   cat-loops full CHUNK MID FILE    the private pipe kept full: both
 *                                    splices SPLICE_F_NONBLOCK once data
 *                                    waits, poll(2) on stdout when stuck
 *   cat-loops direct CHUNK MID FILE  splice FILE -> stdout, CHUNK a call
 *   cat-loops threads CHUNK MID FILE two threads, each with its own private
 *                                    pipe, splicing every other CHUNK at
 *                                    its offset, moving them to stdout in
 *                                    turn
 *
 * stdout is grown to 1 MiB. No error handling worth the name: a probe.
 * Build: cc -O2 -pthread -o target/cat-loops peers/cat-loops.c */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static size_t chunk, midsz;
static int src;
static off_t size;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long turn;

static int private_pipe(int p[2]) {
  if (pipe2(p, O_CLOEXEC) < 0) return -1;
  fcntl(p[1], F_SETPIPE_SZ, (int)midsz);
  return 0;
}

static void next_turn(void) {
  pthread_mutex_lock(&mu);
  turn++;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

static void *worker(void *arg) {
  long id = (long)arg;
  int p[2];
  if (private_pipe(p) < 0) exit(3);
  for (long k = id;; k += 2) {
    loff_t off = (loff_t)k * chunk;
    size_t n = 0;
    while (n < chunk && off < size) {
      ssize_t m = splice(src, &off, p[1], NULL, chunk - n, 0);
      if (m <= 0) break;
      n += m;
    }
    pthread_mutex_lock(&mu);
    while (turn != k) pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    if (n == 0) { next_turn(); return NULL; }
    while (n > 0) {
      ssize_t m = splice(p[0], NULL, 1, NULL, n, 0);
      if (m <= 0) exit(3);
      n -= m;
    }
    next_turn();
  }
}

int main(int argc, char **argv) {
  if (argc != 5) { fprintf(stderr, "usage: cat-loops mid|full|direct|threads CHUNK MID FILE\n"); return 2; }
  const char *mode = argv[1];
  chunk = strtoul(argv[2], NULL, 0);
  midsz = strtoul(argv[3], NULL, 0);
  src = open(argv[4], O_RDONLY);
  struct stat st;
  if (src < 0 || fstat(src, &st) < 0) { perror(argv[4]); return 1; }
  size = st.st_size;
  fcntl(1, F_SETPIPE_SZ, 1 << 20);
  int p[2];
  if (!strcmp(mode, "direct")) {
    for (;;) {
      ssize_t n = splice(src, NULL, 1, NULL, chunk, 0);
      if (n <= 0) return n < 0;
    }
  }
  if (!strcmp(mode, "threads")) {
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    return 0;
  }
  if (private_pipe(p) < 0) return 1;
  if (!strcmp(mode, "mid")) {
    for (;;) {
      ssize_t n = splice(src, NULL, p[1], NULL, chunk, 0);
      if (n <= 0) return n < 0;
      while (n > 0) {
        ssize_t m = splice(p[0], NULL, 1, NULL, n, 0);
        if (m <= 0) return 1;
        n -= m;
      }
    }
  }
  /* full: a file never leaves the private pipe's room unused */
  size_t pending = 0;
  int eof = 0;
  for (;;) {
    if (!eof && pending + 4096 <= midsz) {
      ssize_t n = splice(src, NULL, p[1], NULL, midsz - pending, pending ? SPLICE_F_NONBLOCK : 0);
      if (n == 0) eof = 1;
      else if (n > 0) pending += n;
      else if (errno != EAGAIN) return 1;
    }
    if (pending == 0) {
      if (eof) return 0;
      continue;
    }
    ssize_t m = splice(p[0], NULL, 1, NULL, pending, SPLICE_F_NONBLOCK);
    if (m > 0) { pending -= m; continue; }
    if (m < 0 && errno != EAGAIN) return 1;
    if (eof || pending + 4096 > midsz) {
      struct pollfd out = {1, POLLOUT, 0};
      poll(&out, 1, -1);
    }
  }
}
