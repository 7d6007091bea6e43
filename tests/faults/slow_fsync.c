/* An LD_PRELOAD shim for the fault matrix's slow-disk cell (tests/faults/matrix.py): every
 * fsync and fdatasync of a file under SREH_FSYNC_DELAY_DIR (the node's data dir: the slow disk)
 * waits SREH_FSYNC_DELAY_MS (default 50) milliseconds before it runs, as on a disk whose flushes
 * stall. Built by the matrix with `cc -shared -fPIC`. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void stall(int fd) {
  const char *dir = getenv("SREH_FSYNC_DELAY_DIR");
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (!dir || n <= 0)
    return;
  path[n] = 0;
  if (strncmp(path, dir, strlen(dir)) != 0)
    return;
  const char *v = getenv("SREH_FSYNC_DELAY_MS");
  long ms = v ? atol(v) : 50;
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

int fsync(int fd) {
  static int (*real)(int);
  if (!real)
    real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  stall(fd);
  return real(fd);
}

int fdatasync(int fd) {
  static int (*real)(int);
  if (!real)
    real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  stall(fd);
  return real(fd);
}
