#ifndef COURIER_ZLIB_SHIM_H
#define COURIER_ZLIB_SHIM_H
#include <zlib.h>

// inflateInit2 is a macro; Swift sees this function instead.
static inline int courier_inflate_init(z_stream *stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}

// deflateInit2 is a macro too (the tests compress with it).
static inline int courier_deflate_init(z_stream *stream, int window_bits) {
    return deflateInit2(stream, Z_BEST_COMPRESSION, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY);
}
#endif
