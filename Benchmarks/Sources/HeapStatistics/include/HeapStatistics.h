// The allocator's own view of the heap, for LoadCheck's memory check. A C target because Swift's
// Glibc module does not surface mallinfo2/malloc_trim once Foundation is imported.
#ifndef HEAP_STATISTICS_H
#define HEAP_STATISTICS_H

#include <stddef.h>

/// Bytes handed out by malloc and not yet freed (0 where the platform offers no count).
size_t heap_statistics_in_use(void);

/// Returns free memory to the system where the allocator can (glibc's malloc_trim); else nothing.
void heap_statistics_trim(void);

#endif
