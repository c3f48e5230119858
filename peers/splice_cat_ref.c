/*
 * splice_cat_ref: `cat FILE` into a pipe with splice(2) and nothing else,
 * the speed a cat has to match for that case.
 *
 *   splice_cat_ref FILE [CHUNK]
 *
 * Opens FILE and splices it to stdout, which must be a pipe, CHUNK bytes a
 * call (default 16 KiB; digits with an optional K, M or G), until FILE
 * ends. No fallback, no pipe sizing (the pipe stays as the shell made
 * it), no options. FILE may itself be a pipe (/dev/stdin in the middle of
 * a pipeline: docs/pv.md). Exit status 0; 1 when a call fails (a message
 * names it); 2 on a bad command line. Build: peers/build.sh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: splice_cat_ref FILE [CHUNK]\n");
    return 2;
  }
  size_t chunk = (size_t)16 << 10;
  if (argc == 3) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(argv[2], &end, 10);
    int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
    if (shift) end++;
    if (end == argv[2] || *argv[2] == '-' || *end || errno || v == 0 || v > (1ull << 30) >> shift) {
      fprintf(stderr, "splice_cat_ref: CHUNK %s: not a size from 1 to 1G\n", argv[2]);
      return 2;
    }
    chunk = (size_t)(v << shift);
  }
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    fprintf(stderr, "splice_cat_ref: %s: %s\n", argv[1], strerror(errno));
    return 1;
  }
  for (;;) {
    ssize_t n = splice(fd, NULL, STDOUT_FILENO, NULL, chunk, 0);
    if (n == 0) return 0;
    if (n < 0) {
      fprintf(stderr, "splice_cat_ref: splice from %s to stdout (a pipe?): %s\n", argv[1],
              strerror(errno));
      return 1;
    }
  }
}
