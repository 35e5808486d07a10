// A slow disk, for scripts/large-transfers: an LD_PRELOAD shim that makes write(2) to any file
// whose path contains SLOW_MARK sleep as if the disk took SLOW_BPS bytes per second (default
// 20e6). Other descriptors (sockets, pipes, other files) are untouched.
//
//   clang -shared -fPIC -O2 -o slow_write.so slow_write.c -ldl
//   SLOW_MARK=courier-download- SLOW_BPS=100e6 LD_PRELOAD=./slow_write.so PROGRAM
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static ssize_t (*real_write)(int, const void *, size_t);
static int is_slow(int fd) {
    const char *mark = getenv("SLOW_MARK");
    if (!mark || fd < 3) return 0;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = 0;
    return strstr(path, mark) != NULL;
}
ssize_t write(int fd, const void *buf, size_t count) {
    if (!real_write) real_write = dlsym(RTLD_NEXT, "write");
    if (is_slow(fd)) {
        const char *bps = getenv("SLOW_BPS");
        double rate = bps ? atof(bps) : 20e6;
        double seconds = (double)count / rate;
        struct timespec ts = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };
        nanosleep(&ts, NULL);
    }
    return real_write(fd, buf, count);
}
