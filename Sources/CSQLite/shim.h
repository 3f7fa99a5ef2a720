#ifndef COUCHETTE_CSQLITE_SHIM_H
#define COUCHETTE_CSQLITE_SHIM_H

#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro Swift cannot import: it casts -1 to a destructor pointer.
static inline sqlite3_destructor_type couchette_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
