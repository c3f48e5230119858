/*
 * pipe_ref: the two programs of "How fast are Linux pipes anyway?"
 * (https://mazzo.li/posts/fast-pipes.html) in plain C, with the same bare
 * system calls and nothing else, so that pipespeed's ladder can run beside
 * them on one machine in one session (peers/ladder-vs-pipe_ref.sh).
 *
 *   pipe_ref write [--vmsplice] [--huge] [--busy] [--buf SIZE]
 *   pipe_ref read  [--splice] [--huge] [--busy] [--buf SIZE] [--bytes SIZE] [--csv]
 *
 * write   hands the same --buf bytes (default 256 KiB, the blog's), all
 *         'X', to stdout forever with write(2). With --vmsplice it gives
 *         the buffer's two halves to vmsplice(2) in turn and sizes the pipe
 *         to one half (F_SETPIPE_SZ): a half goes in again only once the
 *         other has gone in whole, which is once the reader has taken all
 *         of the first (the blog's double buffer). Exits 0 when the reader
 *         goes away (EPIPE).
 * read    takes --bytes (default 4 GiB) from stdin, at most --buf bytes a
 *         call: read(2) into a buffer, or with --splice splice(2) into
 *         /dev/null. Prints "<GiB/s> GiB/s" (GiB = 2^30; the bytes over the
 *         time from before the first call to after the last), or with
 *         --csv one line without a header, the 13 first columns of
 *         `pipespeed read --csv`: gib_s,bytes,buf_size,pipe_size,busy_loop,
 *         poll,huge_page,check_huge_page,read_with_splice,gift,lock_memory,
 *         dont_touch_pages,seconds (this reference has no option for
 *         pipe_size, poll, check_huge_page, gift, lock_memory or
 *         dont_touch_pages: they are 0).
 * --huge  the buffer 2 MiB-aligned and a multiple of 2 MiB, with
 *         madvise(MADV_HUGEPAGE) before it is filled.
 * --busy  O_NONBLOCK on the descriptor (and SPLICE_F_NONBLOCK): a call
 *         that would sleep returns EAGAIN and is made again at once.
 *
 * Buffers come from malloc(3) as the blog's do (aligned_alloc(3) with
 * --huge): glibc serves blocks of 128 KiB and more with mmap(2), 16 bytes
 * past a page boundary, and where a buffer starts changes the vmsplice and
 * read rungs (docs/ladder.md). SIZE is digits with an optional K, M or G
 * (2^10, 2^20, 2^30). Exit status: 0; 1 when a call fails or the input ends
 * before --bytes (the line is printed first, for the bytes that came);
 * 2 on a bad command line. Build: peers/build.sh (cc -O2 -Wall).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define HUGE_PAGE ((size_t)2 << 20)

struct opts {
  int zero_copy; /* write: --vmsplice; read: --splice */
  int huge, busy, csv;
  size_t buf;
  uint64_t bytes;
};

static _Noreturn void die(const char *what) {
  fprintf(stderr, "pipe_ref: %s: %s\n", what, strerror(errno));
  exit(1);
}

static _Noreturn void usage(void) {
  fprintf(stderr, "usage: pipe_ref write [--vmsplice] [--huge] [--busy] [--buf SIZE]\n"
                  "       pipe_ref read [--splice] [--huge] [--busy] [--buf SIZE] [--bytes SIZE] [--csv]\n");
  exit(2);
}

static uint64_t parse_size(const char *option, const char *text) {
  char *end;
  errno = 0;
  uint64_t v = strtoull(text, &end, 10);
  int shift = 0;
  if (*end == 'K') shift = 10;
  else if (*end == 'M') shift = 20;
  else if (*end == 'G') shift = 30;
  if (shift) end++;
  if (end == text || *text == '-' || *end || errno || v > (UINT64_MAX >> shift)) {
    fprintf(stderr, "pipe_ref: %s %s: not a size (digits, then K, M or G if you like)\n", option, text);
    exit(2);
  }
  return v << shift;
}

static struct opts parse(int argc, char **argv, int writer) {
  struct opts o = {.buf = (size_t)256 << 10, .bytes = (uint64_t)4 << 30};
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, writer ? "--vmsplice" : "--splice")) o.zero_copy = 1;
    else if (!strcmp(a, "--huge")) o.huge = 1;
    else if (!strcmp(a, "--busy")) o.busy = 1;
    else if (!writer && !strcmp(a, "--csv")) o.csv = 1;
    else if (!strcmp(a, "--buf") && i + 1 < argc) o.buf = parse_size(a, argv[++i]);
    else if (!writer && !strcmp(a, "--bytes") && i + 1 < argc) o.bytes = parse_size(a, argv[++i]);
    else {
      fprintf(stderr, "pipe_ref: %s: not an option of pipe_ref %s\n", a, argv[1]);
      usage();
    }
  }
  if (o.buf == 0 || o.buf > (size_t)1 << 30 || (writer && o.zero_copy && o.buf < 2)) {
    fprintf(stderr, "pipe_ref: --buf must be at least 1 byte (2 with --vmsplice), at most 1G\n");
    exit(2);
  }
  return o;
}

/* len bytes, all 'X' (which also faults every page in before timing). */
static char *buffer(size_t len, int huge) {
  char *p;
  if (huge) {
    size_t rounded = (len + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    p = aligned_alloc(HUGE_PAGE, rounded);
    if (!p) die("aligned_alloc");
    if (madvise(p, rounded, MADV_HUGEPAGE) < 0) die("madvise(MADV_HUGEPAGE)");
  } else {
    p = malloc(len);
    if (!p) die("malloc");
  }
  memset(p, 'X', len);
  return p;
}

static void nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) die("fcntl(O_NONBLOCK)");
}

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int writer(struct opts o) {
  if (o.busy) nonblocking(STDOUT_FILENO);
  char *buf = buffer(o.buf, o.huge);
  if (!o.zero_copy) {
    for (;;) {
      for (size_t done = 0; done < o.buf;) {
        ssize_t n = write(STDOUT_FILENO, buf + done, o.buf - done);
        if (n < 0 && errno == EAGAIN) continue;
        if (n < 0 && errno == EPIPE) return 0;
        if (n < 0) die("write");
        done += (size_t)n;
      }
    }
  }
  size_t half = o.buf / 2;
  if (fcntl(STDOUT_FILENO, F_SETPIPE_SZ, (int)half) < 0) die("fcntl(F_SETPIPE_SZ) on stdout");
  char *halves[2] = {buf, buf + half};
  unsigned flags = o.busy ? SPLICE_F_NONBLOCK : 0;
  for (int which = 0;; which ^= 1) {
    struct iovec v = {.iov_base = halves[which], .iov_len = half};
    while (v.iov_len > 0) {
      ssize_t n = vmsplice(STDOUT_FILENO, &v, 1, flags);
      if (n < 0 && errno == EAGAIN) continue;
      if (n < 0 && errno == EPIPE) return 0;
      if (n < 0) die("vmsplice");
      v.iov_base = (char *)v.iov_base + n;
      v.iov_len -= (size_t)n;
    }
  }
}

static int reader(struct opts o) {
  if (o.busy) nonblocking(STDIN_FILENO);
  int null = -1;
  char *buf = NULL;
  if (o.zero_copy) {
    null = open("/dev/null", O_WRONLY);
    if (null < 0) die("open /dev/null");
  } else {
    buf = buffer(o.buf, o.huge);
  }
  unsigned flags = o.busy ? SPLICE_F_NONBLOCK : 0;
  uint64_t got = 0;
  double start = seconds_now();
  while (got < o.bytes) {
    size_t want = o.bytes - got < o.buf ? (size_t)(o.bytes - got) : o.buf;
    ssize_t n = o.zero_copy ? splice(STDIN_FILENO, NULL, null, NULL, want, flags)
                            : read(STDIN_FILENO, buf, want);
    if (n < 0 && errno == EAGAIN) continue;
    if (n < 0) die(o.zero_copy ? "splice from stdin (a pipe?) to /dev/null" : "read");
    if (n == 0) break;
    got += (uint64_t)n;
  }
  double seconds = seconds_now() - start;
  double gib_s = seconds > 0 ? (double)got / seconds / (double)(1 << 30) : 0;
  if (o.csv)
    printf("%.6f,%llu,%zu,0,%d,0,%d,0,%d,0,0,0,%.6f\n", gib_s, (unsigned long long)got, o.buf,
           o.busy, o.huge, o.zero_copy, seconds);
  else
    printf("%.2f GiB/s\n", gib_s);
  if (fflush(stdout) != 0) die("stdout");
  if (got < o.bytes) {
    fprintf(stderr, "pipe_ref: the input ended after %llu of %llu bytes\n",
            (unsigned long long)got, (unsigned long long)o.bytes);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) usage();
  /* A reader that goes away is the writer's normal end: EPIPE, not a signal. */
  signal(SIGPIPE, SIG_IGN);
  if (!strcmp(argv[1], "write")) return writer(parse(argc, argv, 1));
  if (!strcmp(argv[1], "read")) return reader(parse(argc, argv, 0));
  usage();
}
