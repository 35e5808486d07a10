#include "HeapStatistics.h"

#include <stdlib.h>  // defines __GLIBC__ where glibc is the C library

#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>

size_t heap_statistics_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

void heap_statistics_trim(void) { malloc_trim(0); }

#elif defined(__APPLE__)
#include <malloc/malloc.h>

size_t heap_statistics_in_use(void) {
    malloc_statistics_t statistics;
    malloc_zone_statistics(NULL, &statistics);
    return statistics.size_in_use;
}

void heap_statistics_trim(void) {}

#else
size_t heap_statistics_in_use(void) { return 0; }
void heap_statistics_trim(void) {}
#endif
