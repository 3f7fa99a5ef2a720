#ifndef COUCHETTE_CSQLITE_SHIM_H
#define COUCHETTE_CSQLITE_SHIM_H

#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro Swift cannot import: it casts -1 to a destructor pointer.
static inline sqlite3_destructor_type couchette_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

// sqlite3_config is variadic, which Swift cannot call: turns SQLite's memory statistics off (SQLITE_MISUSE once
// SQLite has initialized).
static inline int couchette_sqlite_memory_statistics_off(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

#endif
