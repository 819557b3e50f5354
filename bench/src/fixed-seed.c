/*
 * Preloaded into redis-server by the callgrind bench (src/callgrind.ts):
 * opening /dev/urandom opens the file named by HOLDFAST_BENCH_URANDOM
 * instead. Redis seeds its hash functions (command table, keyspace, script
 * cache) from /dev/urandom at start; with a random seed, how many entries a
 * lookup walks past differs from one server to the next, and so does the
 * instruction count of every command. A fixed seed makes two servers run the
 * same instructions for the same requests.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef FILE *(*open_fn)(const char *, const char *);

static FILE *redirect(const char *symbol, const char *path, const char *mode) {
  open_fn real = (open_fn)dlsym(RTLD_NEXT, symbol);
  const char *seed = getenv("HOLDFAST_BENCH_URANDOM");
  if (seed && path && strcmp(path, "/dev/urandom") == 0) path = seed;
  return real(path, mode);
}

FILE *fopen(const char *path, const char *mode) { return redirect("fopen", path, mode); }
FILE *fopen64(const char *path, const char *mode) { return redirect("fopen64", path, mode); }
