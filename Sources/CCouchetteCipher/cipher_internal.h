#ifndef CCOUCHETTE_CIPHER_INTERNAL_H
#define CCOUCHETTE_CIPHER_INTERNAL_H

/*
 * Private declarations shared by the cipher sources (not part of the module's public header).
 *
 *   cipher_codec.c    KDF and the SQLCipher 4 page codec (pure functions over byte buffers).
 *   cipher_keys.c     Staged one-time key tokens, the derived-key cache, and the per-connection key.
 *   cipher_vfs.c      The VFS: open/classify files, forwarding, main database pages, file controls.
 *   cipher_wal.c      WAL frames: page encryption and frame checksums over ciphertext.
 *   cipher_journal.c  Rollback journal records: page encryption and checksums over ciphertext.
 *   cipher_parallel.c A pool of threads that encrypt a commit's pages beside the calling thread.
 */

#include <sqlite3.h>
#include <stdint.h>

#include "CCouchetteCipher.h"

#define CC_SALT_SIZE 16
#define CC_KEY_SIZE 32
#define CC_IV_SIZE 16
#define CC_TAG_SIZE 64
/// Bytes of a page SQLite may use; the rest (IV and tag) is the reserve.
#define CC_USABLE_SIZE (CC_PAGE_SIZE - CC_RESERVE_BYTES)

/// xFileControl opcode returning the cc_key_info of a main database handle (handled under the db mutex).
#define CC_FCNTL_KEYINFO 0x43430001

static inline uint32_t cc_get_be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static inline void cc_put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* ---- cipher_codec.c ---------------------------------------------------------------------------- */

/// K_enc from the secret without any cache (PBKDF2 for passphrases); SQLITE_OK or SQLITE_MISUSE.
int cc_codec_derive_kenc(
    cc_key_kind kind, const uint8_t *bytes, size_t length, const uint8_t salt[CC_SALT_SIZE],
    uint8_t kenc[CC_KEY_SIZE]);

/// K_mac = PBKDF2-HMAC-SHA512(K_enc, salt XOR 0x3a, 2 rounds, 32 bytes).
int cc_codec_derive_kmac(const uint8_t kenc[CC_KEY_SIZE], const uint8_t salt[CC_SALT_SIZE], uint8_t kmac[CC_KEY_SIZE]);

/// Whether the length suits the kind (passphrase >= 1, raw 32, raw + salt 48).
int cc_key_length_valid(cc_key_kind kind, size_t length);

/* ---- cipher_keys.c ----------------------------------------------------------------------------- */

/// The key of one connection's database file, shared (by reference) by its WAL and journal handles.
/// Only used under that connection's mutex, so the fields need no lock; the count is atomic anyway.
typedef struct cc_key {
    int refs;
    cc_key_kind kind;
    uint8_t *secret; /* copy of the staged bytes while the salt may change; NULL once it is fixed */
    size_t length;
    uint8_t salt[CC_SALT_SIZE];
    uint8_t kenc[CC_KEY_SIZE];
    uint8_t kmac[CC_KEY_SIZE];
    /// 0 while the salt is a guess for a file that was empty at open: the first page 1 found on disk
    /// (written by another connection) replaces it. 1 once read from the file, given by the key, or written.
    int salt_fixed;
    /// Between SQLITE_FCNTL_CKPT_START and _DONE on the database file: SQLite's checkpoint copy loop, which reads each
    /// frame's page from the WAL and writes it unchanged to the database. The stored bytes then travel as they are
    /// (no check, no decryption, no encryption): the page's tag goes with them and every later read of the page
    /// from the database checks it. `checkpoint_pgno` is the page number of the frame just read (0: none).
    int checkpointing;
    uint32_t checkpoint_pgno;
    /// The connection's open WAL handle (NULL when none): its gathered frames are written out before the connection
    /// gives up the WAL write lock (cipher_vfs.c, cc_shm_lock), so frames of a transaction that rolled back can never
    /// be written later over another connection's.
    struct cc_file *wal_file;
} cc_key;

/// Takes the staged key named by `token` out of the table; NULL when unknown (or already consumed).
cc_key *cc_key_take_staged(const char *token);

/// Sets the salt (fixed or provisional) and derives K_enc / K_mac for it. SQLite result code.
int cc_key_bind_salt(cc_key *key, const uint8_t salt[CC_SALT_SIZE], int fixed);

cc_key *cc_key_retain(cc_key *key);
void cc_key_release(cc_key *key);

/// K_enc and K_mac for a secret and salt, through the in-process cache of PBKDF2 results.
int cc_derive_cached(
    cc_key_kind kind, const uint8_t *bytes, size_t length, const uint8_t salt[CC_SALT_SIZE],
    uint8_t kenc[CC_KEY_SIZE], uint8_t kmac[CC_KEY_SIZE]);

/// Encrypts plaintext page `pgno` with the key (fixes a provisional salt). Page 1 must carry SQLite's
/// header with page size 4096 and 80 reserved bytes, else SQLITE_IOERR_WRITE (a file created without
/// cc_prepare_connection would lose the last 80 bytes of every page).
int cc_key_encrypt_page(cc_key *key, uint32_t pgno, const uint8_t *in, uint8_t *out);

/// Verifies and decrypts stored page `pgno` (in and out may be the same buffer). Page 1: a different
/// stored salt is adopted while the salt is provisional, else SQLITE_NOTADB; a bad tag or a header that
/// is not page size 4096 with 80 reserved bytes is SQLITE_NOTADB. Other pages: bad tag = SQLITE_CORRUPT.
int cc_key_decrypt_page(cc_key *key, uint32_t pgno, const uint8_t *in, uint8_t *out);

/// Encrypts plaintext page `pgno` under a key whose salt is fixed, changing nothing in the key, so that several
/// threads may use it at once (page 1 is checked as by cc_key_encrypt_page). SQLITE_OK or SQLITE_IOERR_WRITE.
int cc_key_encrypt_page_shared(const cc_key *key, uint32_t pgno, const uint8_t *in, uint8_t *out);

/* ---- cipher_vfs.c ------------------------------------------------------------------------------ */

typedef enum {
    CC_FILE_DB = 1, /* main database: every page encrypted */
    CC_FILE_WAL,    /* write-ahead log: frame pages encrypted */
    CC_FILE_JOURNAL, /* rollback journal: record pages encrypted */
    CC_FILE_PLAIN,  /* super-journal: file names only, passed through */
} cc_file_kind;

/// Where the rollback journal codec is within SQLite's record sequence (4-byte page number write or read,
/// 4096-byte page at the next offset, 4-byte checksum after it), separately for writes and reads.
/// Offsets are -1 when nothing is expected. The checksum nonce is never needed: see cipher_journal.c.
typedef struct cc_journal_state {
    sqlite3_int64 wpgno_off; /* offset of the last 4-byte write, taken as a record's page number */
    uint32_t wpgno;
    sqlite3_int64 wsum_off;  /* where the checksum of the last encrypted page goes */
    uint32_t wdelta;         /* what to add to SQLite's checksum for that page */
    sqlite3_int64 rpgno_off; /* offset of the last 4-byte read, taken as a record's page number */
    uint32_t rpgno;
    sqlite3_int64 rsum_off;  /* where the checksum of the last decrypted page is */
    uint32_t rdelta;         /* what to add to the stored checksum for that page */
} cc_journal_state;

/// What a WAL handle keeps between SQLite's writes (cipher_wal.c).
///
/// A WAL page write SQLite split in two at a sync point (only without POWERSAFE_OVERWRITE): the first
/// part is held until the second arrives, since only whole pages can be encrypted.
///
/// The frames SQLite appends (header, then page) are gathered in `batch` until the transaction's commit frame, a full
/// batch, or any other use of the file; then their pages are encrypted together, on several threads, and written with
/// one write.
typedef struct cc_wal_state {
    sqlite3_int64 held_frame;
    int held_length; /* 0 = nothing held */
    uint8_t held[CC_PAGE_SIZE];
    uint8_t frame[24 + CC_PAGE_SIZE]; /* a frame's header and stored page, read at once */
    uint8_t *batch;             /* CC_WAL_BATCH_FRAMES frames (header and plaintext page), allocated on first use */
    sqlite3_int64 batch_first;  /* the frame number of batch[0] */
    int batch_count;            /* frames whose header is in the batch */
    int batch_last_complete;    /* whether the last of them has its page too */
} cc_wal_state;

/// The most frames gathered before they are encrypted and written.
#define CC_WAL_BATCH_FRAMES 256

typedef struct cc_file {
    sqlite3_file base;
    sqlite3_file *real; /* the wrapped file, stored right after this struct */
    cc_file_kind kind;
    cc_key *key;        /* NULL for CC_FILE_PLAIN */
    cc_journal_state journal;
    cc_wal_state wal;
    uint8_t page[CC_PAGE_SIZE]; /* scratch: one stored or plaintext page */
} cc_file;

/// Real reads and writes of the wrapped file.
int cc_real_read(cc_file *f, void *buffer, int amount, sqlite3_int64 offset);
int cc_real_write(cc_file *f, const void *buffer, int amount, sqlite3_int64 offset);

/* ---- cipher_wal.c / cipher_journal.c ----------------------------------------------------------- */

int cc_wal_read(cc_file *f, void *buffer, int amount, sqlite3_int64 offset);
int cc_wal_write(cc_file *f, const void *buffer, int amount, sqlite3_int64 offset);
/// Encrypts and writes the frames gathered so far (before any other use of the WAL file); SQLite result code.
int cc_wal_flush(cc_file *f);
/// Frees the batch buffer (zeroed first: it holds plaintext pages).
void cc_wal_release(cc_file *f);

/// Calls `work(context, i)` for every i in 0..<count, on the calling thread and the pool's (cipher_parallel.c);
/// returns when all are done.
void cc_parallel_run(int count, void (*work)(void *context, int index), void *context);

void cc_journal_reset(cc_journal_state *state);
int cc_journal_read(cc_file *f, void *buffer, int amount, sqlite3_int64 offset);
int cc_journal_write(cc_file *f, const void *buffer, int amount, sqlite3_int64 offset);

#endif
