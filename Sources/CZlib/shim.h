#ifndef COUCHETTE_CZLIB_SHIM_H
#define COUCHETTE_CZLIB_SHIM_H

// zlib's CRC-32 for BLIP's running frame checksums (deflate itself goes through CompressNIO).
#include <zlib.h>

#endif
