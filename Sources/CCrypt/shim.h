#ifndef COUCHETTE_CCRYPT_SHIM_H
#define COUCHETTE_CCRYPT_SHIM_H

// libxcrypt: crypt_gensalt_rn and crypt_rn, used for bcrypt password hashes.
#include <crypt.h>

#endif
