/*
 * The "couchette-cipher" VFS: wraps the default VFS ("unix") and encrypts page content on its way to disk.
 *
 * Files by xOpen type:
 *   main database   every page encrypted (below); the key comes from the staged token in the URI
 *                   parameter "cckey", consumed here. No token: SQLITE_CANTOPEN (fail closed, also for
 *                   ATTACH or VACUUM INTO targets without a key of their own).
 *   WAL, journal    page images encrypted (cipher_wal.c, cipher_journal.c) with the key of their
 *                   database, found through sqlite3_database_file_object().
 *   super-journal   passed through (it holds file names only). The -shm file is reached through the
 *                   database handle's xShm* methods and stays clear, as with SQLCipher.
 *   temp files      refused (SQLITE_CANTOPEN) so nothing is ever written in clear; connections run with
 *                   temp_store = MEMORY, under which SQLite opens none.
 *
 * The io_methods are version 2 (no xFetch/xUnfetch), so SQLite never memory-maps the database and every
 * page goes through xRead. Sizes are not translated: a stored page is 4096 bytes like the plaintext one.
 */

#include <pthread.h>
#include <string.h>

#include <openssl/rand.h>

#include "cipher_internal.h"

static sqlite3_vfs cc_vfs;
static const sqlite3_io_methods cc_io_methods;

static sqlite3_vfs *real_vfs(sqlite3_vfs *vfs) {
    return (sqlite3_vfs *)vfs->pAppData;
}

static cc_file *as_cc_file(sqlite3_file *file) {
    return (cc_file *)file;
}

int cc_real_read(cc_file *f, void *buffer, int amount, sqlite3_int64 offset) {
    return f->real->pMethods->xRead(f->real, buffer, amount, offset);
}

int cc_real_write(cc_file *f, const void *buffer, int amount, sqlite3_int64 offset) {
    return f->real->pMethods->xWrite(f->real, buffer, amount, offset);
}

/* ---- main database pages ----------------------------------------------------------------------- */

static int file_is_empty(cc_file *f) {
    sqlite3_int64 size = 0;
    return f->real->pMethods->xFileSize(f->real, &size) == SQLITE_OK && size == 0;
}

/// Reads stored page `pgno` and decrypts it into `out` (4096 bytes). A page past the end of the file is a short
/// read (SQLite zero-fills; no tag to check), except page 1 of a non-empty file: too short to be ours.
static int db_read_page(cc_file *f, uint32_t pgno, uint8_t *out) {
    int rc = cc_real_read(f, out, CC_PAGE_SIZE, (sqlite3_int64)(pgno - 1) * CC_PAGE_SIZE);
    if (rc == SQLITE_IOERR_SHORT_READ) return pgno == 1 && !file_is_empty(f) ? SQLITE_NOTADB : rc;
    if (rc != SQLITE_OK) return rc;
    return cc_key_decrypt_page(f->key, pgno, out, out);
}

/// Any range: every page it overlaps is read whole, verified and decrypted, and the overlap copied.
/// SQLite reads 100 bytes at offset 0 when opening and 16 bytes at offset 24 per rollback-mode read
/// transaction; everything else is whole pages.
static int db_read(cc_file *f, void *buffer, int amount, sqlite3_int64 offset) {
    uint8_t *out = buffer;
    int short_read = 0;
    while (amount > 0) {
        sqlite3_int64 index = offset / CC_PAGE_SIZE;
        int within = (int)(offset % CC_PAGE_SIZE);
        int n = CC_PAGE_SIZE - within < amount ? CC_PAGE_SIZE - within : amount;
        if (index >= UINT32_MAX) return SQLITE_IOERR_READ;
        int whole = within == 0 && n == CC_PAGE_SIZE;
        int rc = db_read_page(f, (uint32_t)index + 1, whole ? out : f->page);
        if (rc == SQLITE_IOERR_SHORT_READ) {
            memset(out, 0, (size_t)n);
            short_read = 1;
        } else if (rc != SQLITE_OK) {
            return rc;
        } else if (!whole) {
            memcpy(out, f->page + within, (size_t)n);
        }
        out += n;
        offset += n;
        amount -= n;
    }
    return short_read ? SQLITE_IOERR_SHORT_READ : SQLITE_OK;
}

/// SQLite writes whole, aligned pages to the database file; anything else cannot be encrypted.
static int db_write(cc_file *f, const void *buffer, int amount, sqlite3_int64 offset) {
    if (amount != CC_PAGE_SIZE || offset % CC_PAGE_SIZE != 0 || offset / CC_PAGE_SIZE >= UINT32_MAX) {
        return SQLITE_IOERR_WRITE;
    }
    uint32_t pgno = (uint32_t)(offset / CC_PAGE_SIZE) + 1;
    cc_key *key = f->key;
    if (key->checkpointing) {
        /* The checkpoint copies the frame it just read: stored bytes already, for this very page. */
        int copies_frame = key->checkpoint_pgno == pgno;
        key->checkpoint_pgno = 0;
        return copies_frame ? cc_real_write(f, buffer, CC_PAGE_SIZE, offset) : SQLITE_IOERR_WRITE;
    }
    int rc = cc_key_encrypt_page(key, pgno, buffer, f->page);
    if (rc != SQLITE_OK) return rc;
    return cc_real_write(f, f->page, CC_PAGE_SIZE, offset);
}

/* ---- io methods -------------------------------------------------------------------------------- */

/// Writes a WAL handle's gathered frames out before any use of the file other than SQLite's frame writes.
static int flush_wal(cc_file *f) {
    return f->kind == CC_FILE_WAL ? cc_wal_flush(f) : SQLITE_OK;
}

static int cc_close(sqlite3_file *file) {
    cc_file *f = as_cc_file(file);
    int flushed = flush_wal(f);
    cc_wal_release(f);
    if (f->key != NULL && f->key->wal_file == f) f->key->wal_file = NULL;
    int rc = f->real->pMethods->xClose(f->real);
    if (rc == SQLITE_OK) rc = flushed;
    cc_key_release(f->key);
    f->key = NULL;
    cc_zero(f->page, sizeof f->page);
    cc_zero(f->wal.held, sizeof f->wal.held);
    return rc;
}

static int cc_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    cc_file *f = as_cc_file(file);
    switch (f->kind) {
    case CC_FILE_DB:
        return db_read(f, buffer, amount, offset);
    case CC_FILE_WAL:
        return cc_wal_read(f, buffer, amount, offset);
    case CC_FILE_JOURNAL:
        return cc_journal_read(f, buffer, amount, offset);
    case CC_FILE_PLAIN:
        break;
    }
    return cc_real_read(f, buffer, amount, offset);
}

static int cc_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    cc_file *f = as_cc_file(file);
    switch (f->kind) {
    case CC_FILE_DB:
        return db_write(f, buffer, amount, offset);
    case CC_FILE_WAL:
        return cc_wal_write(f, buffer, amount, offset);
    case CC_FILE_JOURNAL:
        return cc_journal_write(f, buffer, amount, offset);
    case CC_FILE_PLAIN:
        break;
    }
    return cc_real_write(f, buffer, amount, offset);
}

static int cc_truncate(sqlite3_file *file, sqlite3_int64 size) {
    int rc = flush_wal(as_cc_file(file));
    sqlite3_file *real = as_cc_file(file)->real;
    return rc != SQLITE_OK ? rc : real->pMethods->xTruncate(real, size);
}

static int cc_sync(sqlite3_file *file, int flags) {
    int rc = flush_wal(as_cc_file(file));
    sqlite3_file *real = as_cc_file(file)->real;
    return rc != SQLITE_OK ? rc : real->pMethods->xSync(real, flags);
}

static int cc_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    int rc = flush_wal(as_cc_file(file));
    sqlite3_file *real = as_cc_file(file)->real;
    return rc != SQLITE_OK ? rc : real->pMethods->xFileSize(real, size);
}

static int cc_lock(sqlite3_file *file, int level) {
    sqlite3_file *real = as_cc_file(file)->real;
    return real->pMethods->xLock(real, level);
}

static int cc_unlock(sqlite3_file *file, int level) {
    sqlite3_file *real = as_cc_file(file)->real;
    return real->pMethods->xUnlock(real, level);
}

static int cc_check_reserved_lock(sqlite3_file *file, int *out) {
    sqlite3_file *real = as_cc_file(file)->real;
    return real->pMethods->xCheckReservedLock(real, out);
}

/// Pragmas that must not reach SQLite on an encrypted database; NULL when `name = value` is fine.
/// page_size: any size but 4096 would make `VACUUM` rebuild the file in pages this format cannot hold.
/// temp_store: anything but MEMORY would let SQLite write temporary files, which this VFS refuses.
/// key, rekey, cipher_*: SQLCipher's pragmas; plain SQLite would silently ignore them.
static const char *refused_pragma(const char *name, const char *value) {
    if (sqlite3_stricmp(name, "page_size") == 0) {
        return value != NULL && strcmp(value, "4096") != 0 ? "an encrypted database has 4096-byte pages" : NULL;
    }
    if (sqlite3_stricmp(name, "temp_store") == 0) {
        int memory = value == NULL || strcmp(value, "2") == 0 || sqlite3_stricmp(value, "memory") == 0;
        return memory ? NULL : "an encrypted database keeps temporary data in memory (temp_store = MEMORY)";
    }
    static const char *const key_pragmas[] = {"key", "rekey", "hexkey", "hexrekey", "textkey", "textrekey"};
    for (size_t i = 0; i < sizeof key_pragmas / sizeof key_pragmas[0]; i++) {
        if (sqlite3_stricmp(name, key_pragmas[i]) == 0) return "keys are given when opening and changed with changeEncryptionKey";
    }
    if (sqlite3_strnicmp(name, "cipher", 6) == 0) return "SQLCipher's pragmas are not supported";
    return NULL;
}

/// SQLITE_FCNTL_PRAGMA: args[1] = name, args[2] = value or NULL, args[0] = our error message.
static int check_pragma(char **args) {
    const char *reason = refused_pragma(args[1], args[2]);
    if (reason == NULL) return SQLITE_NOTFOUND;
    args[0] = sqlite3_mprintf("PRAGMA %s: %s", args[1], reason);
    return SQLITE_ERROR;
}

static int cc_file_control(sqlite3_file *file, int op, void *arg) {
    cc_file *f = as_cc_file(file);
    int flushed = flush_wal(f);
    if (flushed != SQLITE_OK) return flushed;
    if (f->kind == CC_FILE_DB && op == SQLITE_FCNTL_PRAGMA) {
        int rc = check_pragma((char **)arg);
        if (rc != SQLITE_NOTFOUND) return rc;
    }
    if (f->kind == CC_FILE_DB && (op == SQLITE_FCNTL_CKPT_START || op == SQLITE_FCNTL_CKPT_DONE)) {
        /* Around SQLite's checkpoint copy loop (cipher_internal.h, cc_key.checkpointing); sent even when the loop
         * fails. */
        f->key->checkpointing = op == SQLITE_FCNTL_CKPT_START;
        f->key->checkpoint_pgno = 0;
    }
    if (f->kind == CC_FILE_DB && op == CC_FCNTL_KEYINFO) {
        cc_key_info *info = arg;
        memcpy(info->salt, f->key->salt, CC_SALT_SIZE);
        memcpy(info->kenc, f->key->kenc, CC_KEY_SIZE);
        return SQLITE_OK;
    }
    return f->real->pMethods->xFileControl(f->real, op, arg);
}

static int cc_sector_size(sqlite3_file *file) {
    sqlite3_file *real = as_cc_file(file)->real;
    return real->pMethods->xSectorSize(real);
}

static int cc_device_characteristics(sqlite3_file *file) {
    sqlite3_file *real = as_cc_file(file)->real;
    return real->pMethods->xDeviceCharacteristics(real);
}

static int cc_shm_map(sqlite3_file *file, int region, int size, int extend, void volatile **out) {
    sqlite3_file *real = as_cc_file(file)->real;
    return real->pMethods->xShmMap(real, region, size, extend, out);
}

/// SQLite's WAL write lock is shm lock 0.
#define WAL_WRITE_LOCK 0

static int cc_shm_lock(sqlite3_file *file, int offset, int n, int flags) {
    cc_file *f = as_cc_file(file);
    int flushed = SQLITE_OK;
    int releases_write_lock = (flags & SQLITE_SHM_UNLOCK) && offset <= WAL_WRITE_LOCK && WAL_WRITE_LOCK < offset + n;
    if (releases_write_lock && f->key != NULL && f->key->wal_file != NULL) {
        /* Only frames of a transaction that rolled back can be left (a commit writes its frames out): they go to
         * disk now, as unbatched writes would have, while no other connection can write the WAL. */
        flushed = cc_wal_flush(f->key->wal_file);
    }
    int rc = f->real->pMethods->xShmLock(f->real, offset, n, flags);
    return rc != SQLITE_OK ? rc : flushed;
}

static void cc_shm_barrier(sqlite3_file *file) {
    sqlite3_file *real = as_cc_file(file)->real;
    real->pMethods->xShmBarrier(real);
}

static int cc_shm_unmap(sqlite3_file *file, int delete_flag) {
    sqlite3_file *real = as_cc_file(file)->real;
    return real->pMethods->xShmUnmap(real, delete_flag);
}

static const sqlite3_io_methods cc_io_methods = {
    .iVersion = 2,
    .xClose = cc_close,
    .xRead = cc_read,
    .xWrite = cc_write,
    .xTruncate = cc_truncate,
    .xSync = cc_sync,
    .xFileSize = cc_file_size,
    .xLock = cc_lock,
    .xUnlock = cc_unlock,
    .xCheckReservedLock = cc_check_reserved_lock,
    .xFileControl = cc_file_control,
    .xSectorSize = cc_sector_size,
    .xDeviceCharacteristics = cc_device_characteristics,
    .xShmMap = cc_shm_map,
    .xShmLock = cc_shm_lock,
    .xShmBarrier = cc_shm_barrier,
    .xShmUnmap = cc_shm_unmap,
};

/* ---- opening files ----------------------------------------------------------------------------- */

/// What a file is, from its open flags; SQLITE_CANTOPEN for the temporary kinds (and nameless files).
static int classify(const char *name, int flags, cc_file_kind *kind) {
    if (name == NULL) return SQLITE_CANTOPEN;
    if (flags & SQLITE_OPEN_MAIN_DB) {
        *kind = CC_FILE_DB;
    } else if (flags & SQLITE_OPEN_WAL) {
        *kind = CC_FILE_WAL;
    } else if (flags & SQLITE_OPEN_MAIN_JOURNAL) {
        *kind = CC_FILE_JOURNAL;
    } else if (flags & SQLITE_OPEN_SUPER_JOURNAL) {
        *kind = CC_FILE_PLAIN;
    } else {
        return SQLITE_CANTOPEN; /* TEMP_DB, TRANSIENT_DB, TEMP_JOURNAL, SUBJOURNAL */
    }
    return SQLITE_OK;
}

/// The key a file is opened with: the staged key for a database, its database's key for a WAL or
/// journal, none for a super-journal.
static int key_for_open(const char *name, cc_file_kind kind, cc_key **key) {
    *key = NULL;
    if (kind == CC_FILE_PLAIN) return SQLITE_OK;
    if (kind == CC_FILE_DB) {
        *key = cc_key_take_staged(sqlite3_uri_parameter(name, CC_URI_KEY_PARAM));
        return *key != NULL ? SQLITE_OK : SQLITE_CANTOPEN;
    }
    sqlite3_file *db = sqlite3_database_file_object(name);
    if (db == NULL || db->pMethods != &cc_io_methods || as_cc_file(db)->kind != CC_FILE_DB) return SQLITE_CANTOPEN;
    *key = cc_key_retain(as_cc_file(db)->key);
    return SQLITE_OK;
}

/// The salt of a database just opened: stored bytes 0-15 of an existing file; for an empty file the salt
/// of a raw key + salt, else a random one that stays provisional until page 1 is written or found on
/// disk. A raw key + salt on an existing file keeps its own salt: a file with another salt is NOTADB.
static int bind_database_salt(cc_file *f, cc_key *key) {
    uint8_t salt[CC_SALT_SIZE];
    int fixed = 1;
    if (key->kind == CC_KEY_RAW_SALT) {
        memcpy(salt, key->secret + CC_KEY_SIZE, CC_SALT_SIZE);
    } else if (!file_is_empty(f)) {
        int rc = cc_real_read(f, salt, CC_SALT_SIZE, 0);
        if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ) return rc; /* too short: NOTADB on first read */
    } else if (RAND_bytes(salt, CC_SALT_SIZE) == 1) {
        fixed = 0;
    } else {
        return SQLITE_ERROR;
    }
    int rc = cc_key_bind_salt(key, salt, fixed);
    cc_zero(salt, sizeof salt);
    return rc;
}

static int cc_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags) {
    cc_file *f = as_cc_file(file);
    memset(f, 0, sizeof *f);
    f->real = (sqlite3_file *)(f + 1);
    cc_file_kind kind = CC_FILE_PLAIN;
    cc_key *key = NULL;
    int rc = classify(name, flags, &kind);
    if (rc == SQLITE_OK) rc = key_for_open(name, kind, &key);
    if (rc != SQLITE_OK) return rc;

    rc = real_vfs(vfs)->xOpen(real_vfs(vfs), name, f->real, flags, out_flags);
    f->kind = kind;
    if (rc == SQLITE_OK && kind == CC_FILE_DB) rc = bind_database_salt(f, key);
    if (rc != SQLITE_OK) {
        if (f->real->pMethods != NULL) f->real->pMethods->xClose(f->real);
        cc_key_release(key);
        return rc;
    }
    f->key = key;
    if (kind == CC_FILE_WAL) key->wal_file = f;
    cc_journal_reset(&f->journal);
    f->base.pMethods = &cc_io_methods;
    return SQLITE_OK;
}

/* ---- VFS methods other than xOpen: forwarded ---------------------------------------------------- */

static int cc_delete(sqlite3_vfs *vfs, const char *name, int sync_dir) {
    return real_vfs(vfs)->xDelete(real_vfs(vfs), name, sync_dir);
}

static int cc_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    return real_vfs(vfs)->xAccess(real_vfs(vfs), name, flags, out);
}

static int cc_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    return real_vfs(vfs)->xFullPathname(real_vfs(vfs), name, size, out);
}

static void *cc_dl_open(sqlite3_vfs *vfs, const char *name) {
    return real_vfs(vfs)->xDlOpen(real_vfs(vfs), name);
}

static void cc_dl_error(sqlite3_vfs *vfs, int size, char *out) {
    real_vfs(vfs)->xDlError(real_vfs(vfs), size, out);
}

static void (*cc_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    return real_vfs(vfs)->xDlSym(real_vfs(vfs), handle, symbol);
}

static void cc_dl_close(sqlite3_vfs *vfs, void *handle) {
    real_vfs(vfs)->xDlClose(real_vfs(vfs), handle);
}

static int cc_randomness(sqlite3_vfs *vfs, int size, char *out) {
    return real_vfs(vfs)->xRandomness(real_vfs(vfs), size, out);
}

static int cc_sleep(sqlite3_vfs *vfs, int microseconds) {
    return real_vfs(vfs)->xSleep(real_vfs(vfs), microseconds);
}

static int cc_current_time(sqlite3_vfs *vfs, double *out) {
    return real_vfs(vfs)->xCurrentTime(real_vfs(vfs), out);
}

static int cc_get_last_error(sqlite3_vfs *vfs, int size, char *out) {
    return real_vfs(vfs)->xGetLastError(real_vfs(vfs), size, out);
}

static int cc_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    return real_vfs(vfs)->xCurrentTimeInt64(real_vfs(vfs), out);
}

/* ---- public API -------------------------------------------------------------------------------- */

static pthread_once_t register_once = PTHREAD_ONCE_INIT;
static int register_rc = SQLITE_ERROR;

static void register_vfs(void) {
    sqlite3_vfs *real = sqlite3_vfs_find(NULL);
    if (real == NULL || real->iVersion < 2) return;
    cc_vfs = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(cc_file) + real->szOsFile,
        .mxPathname = real->mxPathname,
        .zName = CC_VFS_NAME,
        .pAppData = real,
        .xOpen = cc_open,
        .xDelete = cc_delete,
        .xAccess = cc_access,
        .xFullPathname = cc_full_pathname,
        .xDlOpen = cc_dl_open,
        .xDlError = cc_dl_error,
        .xDlSym = cc_dl_sym,
        .xDlClose = cc_dl_close,
        .xRandomness = cc_randomness,
        .xSleep = cc_sleep,
        .xCurrentTime = cc_current_time,
        .xGetLastError = cc_get_last_error,
        .xCurrentTimeInt64 = cc_current_time_int64,
    };
    register_rc = sqlite3_vfs_register(&cc_vfs, 0);
}

int cc_register(void) {
    pthread_once(&register_once, register_vfs);
    return register_rc;
}

int cc_prepare_connection(struct sqlite3 *db, const char *schema) {
    if (db == NULL || schema == NULL) return SQLITE_MISUSE;
    char *sql = sqlite3_mprintf("PRAGMA \"%w\".page_size = %d; PRAGMA temp_store = MEMORY;", schema, CC_PAGE_SIZE);
    if (sql == NULL) return SQLITE_NOMEM;
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_free(sql);
    if (rc != SQLITE_OK) return rc;
    /* After the page size: PRAGMA page_size resets the requested reserve to the file's current one. The request
     * takes effect when a new file gets its first page, and for the copy VACUUM INTO writes. */
    int reserve = CC_RESERVE_BYTES;
    return sqlite3_file_control(db, schema, SQLITE_FCNTL_RESERVE_BYTES, &reserve);
}

int cc_key_info_of(struct sqlite3 *db, const char *schema, cc_key_info *out) {
    if (db == NULL || schema == NULL || out == NULL) return SQLITE_MISUSE;
    /* The file control runs under the connection's mutex, like every other use of its key. */
    int rc = sqlite3_file_control(db, schema, CC_FCNTL_KEYINFO, out);
    return rc == SQLITE_OK ? SQLITE_OK : SQLITE_NOTFOUND;
}
