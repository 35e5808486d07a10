#ifndef COURIER_ZLIB_SHIM_H
#define COURIER_ZLIB_SHIM_H
#include <zlib.h>

// inflateInit2 is a macro; Swift sees this function instead.
static inline int courier_inflate_init(z_stream *stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}
#endif
