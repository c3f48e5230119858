/*
 * ipc_ref: a plain C reference for `pipespeed ipc` throughput, one
 * mechanism at a time.
 *
 *   cc -O2 -Wall -Wextra -o target/peers/ipc_ref peers/ipc_ref.c
 *   ipc_ref pipe|unix-stream|tcp|shm SIZE BYTES [--cpus A,B]
 *
 * Sets up the channel, forks; the child (pinned to CPU A, default 0) sends
 * BYTES/SIZE messages (rounded up) of SIZE bytes from one 'X'-filled,
 * page-aligned buffer, one call per message (looping on partial writes),
 * then closes its end; the parent (pinned to CPU B, default 1) receives into
 * a page-aligned SIZE-byte buffer, one call per receive, up to SIZE bytes,
 * until end of file. The rate is timed
 * (CLOCK_MONOTONIC) from the end of the first successful receive to the end
 * of the last one, over the bytes after the first receive, and printed as
 * "<GiB/s> GiB/s" (GiB = 2^30).
 *   pipe         pipe2(O_CLOEXEC), default pipe size, write(2) / read(2)
 *   unix-stream  socketpair(AF_UNIX, SOCK_STREAM), default buffers, send / recv, flags 0
 *   tcp          127.0.0.1, port 0; connect, accept, listener closed;
 *                TCP_NODELAY on both ends, default buffers, send / recv, flags 0
 *   shm          a memfd ring of CAP = max(1 MiB, 4*SIZE) (a power of two,
 *                SIZE up to 512M), futex wake-ups after 1000 spins (none when
 *                A == B); the producer memcpys each
 *                message in, the consumer takes up to SIZE bytes in place (it
 *                never reads them); at the close the producer repeats its wake
 *                until the consumer is surely awake (see shm_send)
 * SIZE and BYTES take a K, M or G suffix. Errors: a message, exit 1.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum mech { PIPE, UNIX_STREAM, TCP, SHM };

/* The shared ring's layout: each counter on a cache line of its own. */
#define OFF_HEAD 0     /* bytes written by the producer (wrapping u32) */
#define OFF_TAIL 64    /* bytes consumed */
#define OFF_PW 128     /* producer_waiting */
#define OFF_CW 192     /* consumer_waiting */
#define OFF_CLOSED 256 /* set once by the producer after its last message */
#define OFF_DATA 4096

struct ring {
  _Atomic uint32_t *head, *tail, *pw, *cw, *closed;
  char *data;
  uint64_t cap;
};

static void die(const char *what) { perror(what); exit(1); }

static void usage(void) {
  fprintf(stderr, "usage: ipc_ref pipe|unix-stream|tcp|shm SIZE BYTES [--cpus A,B]\n");
  exit(2);
}

static uint64_t parse_size(const char *s) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s || errno) { fprintf(stderr, "bad size %s\n", s); exit(2); }
  switch (*end) {
  case 'G': v <<= 30; end++; break;
  case 'M': v <<= 20; end++; break;
  case 'K': v <<= 10; end++; break;
  }
  if (*end) { fprintf(stderr, "bad size %s\n", s); exit(2); }
  return v;
}

/* A buffer at the start of a page. With malloc's 16-byte alignment the
 * sender's memcpy into the ring ran 8% slower from an address 16 bytes
 * past a 32-byte boundary than from one on it (23.1 against 25.1 GiB/s,
 * shm 64K, medians of 11 runs of this program built with the buffer
 * placed each way): the reference should not depend on where
 * malloc happens to put the buffer. */
static char *page_buffer(uint64_t size) {
  char *p = aligned_alloc(4096, (size + 4095) / 4096 * 4096);
  if (!p) die("aligned_alloc");
  return p;
}

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) < 0) die("sched_setaffinity");
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

/* FUTEX_WAIT and FUTEX_WAKE, not the _PRIVATE ones: the word is shared
 * between two processes. */
static void futex_wait(_Atomic uint32_t *word, uint32_t seen) {
  if (syscall(SYS_futex, (void *)word, FUTEX_WAIT, seen, NULL, NULL, 0) < 0 && errno != EAGAIN &&
      errno != EINTR)
    die("futex wait");
}

/* Returns how many sleepers were woken (0 or 1). */
static long futex_wake(_Atomic uint32_t *word) {
  long n = syscall(SYS_futex, (void *)word, FUTEX_WAKE, 1, NULL, NULL, 0);
  if (n < 0) die("futex wake");
  return n;
}

/* Spins an end makes before it sleeps, as pipespeed's ring
 * (SPINS_BEFORE_SLEEP in src/ring.rs): 0 when both ends are on
 * one CPU, where spinning only holds the CPU the other end needs. */
static long spins_before_sleep = 1000;

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Producer: one memcpy per message into the ring, waking the consumer if
 * it sleeps. */
static void shm_send(struct ring *r, const char *buf, uint64_t size, uint64_t msgs) {
  uint32_t head = atomic_load_explicit(r->head, memory_order_relaxed);
  for (uint64_t m = 0; m < msgs; m++) {
    for (long spins = 0;; spins++) {
      uint32_t tail = atomic_load_explicit(r->tail, memory_order_acquire);
      if ((uint32_t)(head - tail) + size <= r->cap) break;
      if (spins < spins_before_sleep) {
        cpu_relax();
        continue;
      }
      atomic_store(r->pw, 1);
      tail = atomic_load(r->tail);
      if ((uint32_t)(head - tail) + size > r->cap) futex_wait(r->tail, tail);
      atomic_store(r->pw, 0);
    }
    uint64_t off = head & (r->cap - 1);
    uint64_t first = size < r->cap - off ? size : r->cap - off;
    memcpy(r->data + off, buf, first);
    if (first < size) memcpy(r->data, buf + first, size - first);
    head += (uint32_t)size;
    atomic_store_explicit(r->head, head, memory_order_release);
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(r->cw, memory_order_relaxed) == 1) futex_wake(r->head);
  }
  /* The close does not change `head`, the word the consumer sleeps on: a
   * consumer that looked at `closed` just before it was set may enter
   * FUTEX_WAIT just after a single wake, and sleep for ever (16 runs of 400
   * of 16 MiB did, here). So the wake is repeated while the consumer says
   * it is about to wait and none was woken; once it clears
   * consumer_waiting, its next look at `closed` sees 1. (A bound, in case
   * the consumer died with the flag up.) Nothing of this is timed. */
  atomic_store_explicit(r->closed, 1, memory_order_release);
  atomic_thread_fence(memory_order_seq_cst);
  for (long tries = 0; futex_wake(r->head) == 0 && atomic_load(r->cw) == 1 && tries < 1L << 24;
       tries++)
    ;
}

/* Consumer, one receive: up to `size` bytes taken in place; 0 at the end. */
static uint64_t shm_receive(struct ring *r, uint32_t *tail, uint64_t size) {
  uint32_t avail;
  for (long spins = 0;; spins++) {
    avail = atomic_load_explicit(r->head, memory_order_acquire) - *tail;
    if (avail) break;
    if (atomic_load_explicit(r->closed, memory_order_acquire) &&
        atomic_load_explicit(r->head, memory_order_acquire) == *tail)
      return 0;
    if (spins < spins_before_sleep) {
      cpu_relax();
      continue;
    }
    atomic_store(r->cw, 1);
    uint32_t seen = atomic_load(r->head);
    if (seen == *tail && !atomic_load(r->closed)) futex_wait(r->head, seen);
    atomic_store(r->cw, 0);
  }
  uint64_t n = avail < size ? avail : size;
  *tail += (uint32_t)n;
  atomic_store_explicit(r->tail, *tail, memory_order_release);
  atomic_thread_fence(memory_order_seq_cst);
  if (atomic_load_explicit(r->pw, memory_order_relaxed) == 1) futex_wake(r->tail);
  return n;
}

static void fd_send(enum mech mech, int fd, const char *buf, uint64_t size, uint64_t msgs) {
  for (uint64_t m = 0; m < msgs; m++) {
    uint64_t off = 0;
    while (off < size) {
      ssize_t n = mech == PIPE ? write(fd, buf + off, size - off) : send(fd, buf + off, size - off, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) die(mech == PIPE ? "write" : "send");
      off += n;
    }
  }
  if (close(fd) < 0) die("close");
}

static uint64_t fd_receive(enum mech mech, int fd, char *buf, uint64_t size) {
  for (;;) {
    ssize_t n = mech == PIPE ? read(fd, buf, size) : recv(fd, buf, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) die(mech == PIPE ? "read" : "recv");
    return n;
  }
}

/* A connected pair over loopback TCP: fds[0] connects, fds[1] was accepted. */
static void tcp_pair(int fds[2]) {
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof addr;
  int one = 1;
  int lis = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (lis < 0) die("socket");
  if (bind(lis, (struct sockaddr *)&addr, sizeof addr) < 0) die("bind");
  if (listen(lis, 1) < 0) die("listen");
  if (getsockname(lis, (struct sockaddr *)&addr, &len) < 0) die("getsockname");
  fds[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fds[0] < 0) die("socket");
  if (connect(fds[0], (struct sockaddr *)&addr, sizeof addr) < 0) die("connect");
  fds[1] = accept4(lis, NULL, NULL, SOCK_CLOEXEC);
  if (fds[1] < 0) die("accept");
  close(lis);
  for (int i = 0; i < 2; i++)
    if (setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0) die("TCP_NODELAY");
}

int main(int argc, char **argv) {
  if (argc != 4 && argc != 6) usage();
  enum mech mech;
  if (!strcmp(argv[1], "pipe")) mech = PIPE;
  else if (!strcmp(argv[1], "unix-stream")) mech = UNIX_STREAM;
  else if (!strcmp(argv[1], "tcp")) mech = TCP;
  else if (!strcmp(argv[1], "shm")) mech = SHM;
  else usage();
  uint64_t size = parse_size(argv[2]), bytes = parse_size(argv[3]);
  int cpu_a = 0, cpu_b = 1;
  if (argc == 6) {
    char extra;
    if (strcmp(argv[4], "--cpus") || sscanf(argv[5], "%d,%d%c", &cpu_a, &cpu_b, &extra) != 2 ||
        cpu_a < 0 || cpu_b < 0)
      usage();
  }
  if (cpu_a == cpu_b) spins_before_sleep = 0;
  if (size == 0 || size > SSIZE_MAX) { fprintf(stderr, "SIZE must be 1 or more\n"); exit(2); }
  uint64_t msgs = (bytes + size - 1) / size;

  /* The channel: fds[0] the sender's end, fds[1] the receiver's. */
  int fds[2] = {-1, -1};
  struct ring ring = {0};
  if (mech == PIPE) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) die("pipe2");
    fds[0] = p[1], fds[1] = p[0];
  } else if (mech == UNIX_STREAM) {
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0) die("socketpair");
  } else if (mech == TCP) {
    tcp_pair(fds);
  } else {
    /* head and tail are u32 counters: the ring must divide 2^32 and its
     * fill level (up to CAP) must fit in a u32 difference. */
    if (size > (1u << 29)) { fprintf(stderr, "shm: SIZE must be 512M or less\n"); exit(2); }
    uint64_t cap = 1 << 20;
    while (cap < 4 * size) cap <<= 1;
    int fd = memfd_create("ipc_ref", MFD_CLOEXEC);
    if (fd < 0) die("memfd_create");
    if (ftruncate(fd, OFF_DATA + cap) < 0) die("ftruncate");
    char *base = mmap(NULL, OFF_DATA + cap, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) die("mmap");
    close(fd);
    ring = (struct ring){(_Atomic uint32_t *)(base + OFF_HEAD), (_Atomic uint32_t *)(base + OFF_TAIL),
                         (_Atomic uint32_t *)(base + OFF_PW), (_Atomic uint32_t *)(base + OFF_CW),
                         (_Atomic uint32_t *)(base + OFF_CLOSED), base + OFF_DATA, cap};
  }

  fflush(stdout);
  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    pin(cpu_a);
    if (mech != SHM) close(fds[1]);
    char *buf = page_buffer(size);
    memset(buf, 'X', size);
    if (mech == SHM) shm_send(&ring, buf, size, msgs);
    else fd_send(mech, fds[0], buf, size, msgs);
    _exit(0);
  }

  pin(cpu_b);
  char *buf = NULL;
  if (mech != SHM) {
    close(fds[0]);
    buf = page_buffer(size);
  }
  uint32_t tail = 0;
  uint64_t total = 0, first_n = 0, receives = 0;
  double first = 0, last = 0;
  for (;;) {
    uint64_t n = mech == SHM ? shm_receive(&ring, &tail, size) : fd_receive(mech, fds[1], buf, size);
    if (n == 0) break;
    last = now();
    if (receives++ == 0) first = last, first_n = n;
    total += n;
  }

  int status;
  if (waitpid(child, &status, 0) < 0) die("waitpid");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "ipc_ref: the sender failed (wait status %#x)\n", status);
    return 1;
  }
  if (total != msgs * size) {
    fprintf(stderr, "ipc_ref: received %llu bytes, expected %llu\n", (unsigned long long)total,
            (unsigned long long)(msgs * size));
    return 1;
  }
  if (receives < 2 || last <= first) {
    fprintf(stderr, "ipc_ref: %llu bytes came in %llu receive(s): too few to time\n",
            (unsigned long long)total, (unsigned long long)receives);
    return 1;
  }
  printf("%.6f GiB/s\n", (total - first_n) / (last - first) / (1 << 30));
  return 0;
}
