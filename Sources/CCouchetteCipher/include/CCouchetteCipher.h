#ifndef CCOUCHETTE_CIPHER_H
#define CCOUCHETTE_CIPHER_H

/*
 * Page encryption of SQLite databases in SQLCipher 4's default format, as a VFS over the system SQLite
 * (docs/encryption.md; ../shared/spec/encryption-format.md): AES-256-CBC per 4096-byte page with a fresh
 * IV per write, HMAC-SHA512 over ciphertext, IV and page number, 80 reserved bytes per page, the KDF salt
 * in the file's first 16 bytes, PBKDF2-HMAC-SHA512 (256,000 rounds) for passphrases. The main database,
 * its WAL and its rollback journal are encrypted; temporary files are refused (temp_store = MEMORY).
 *
 * Opening: cc_register(); cc_stage_key(...) gives a one-time token; sqlite3_open_v2 on
 * "file:<path>?cckey=<token>" with SQLITE_OPEN_URI and the VFS CC_VFS_NAME; cc_unstage_key(token);
 * cc_prepare_connection(db, "main") before the first write (and before journal_mode = WAL).
 * A wrong key fails with SQLITE_NOTADB, a tampered page other than page 1 with SQLITE_CORRUPT.
 */

#include <stddef.h>
#include <stdint.h>

struct sqlite3;

#define CC_VFS_NAME "couchette-cipher"
#define CC_URI_KEY_PARAM "cckey"
#define CC_PAGE_SIZE 4096
#define CC_RESERVE_BYTES 80

/// How the bytes given to cc_stage_key / cc_derive_keys are a key.
typedef enum {
    /// A passphrase: its bytes go through PBKDF2-HMAC-SHA512, 256,000 rounds, with the file's salt.
    CC_KEY_PASSPHRASE = 1,
    /// A raw 32-byte AES key (SQLCipher's x'<64 hex>'), no KDF.
    CC_KEY_RAW = 2,
    /// A raw 32-byte key followed by the 16-byte salt to use for a new file (x'<96 hex>').
    CC_KEY_RAW_SALT = 3,
} cc_key_kind;

/// What an open encrypted database's key is: its salt and AES key (for keys derived from it).
typedef struct {
    uint8_t salt[16];
    uint8_t kenc[32];
} cc_key_info;

/// Registers the VFS (not as the default); idempotent and thread-safe. Returns SQLITE_OK.
int cc_register(void);

/// Copies a key and writes a one-time token (32 hex digits and a NUL) naming it; opening
/// "file:...?cckey=<token>" through the VFS consumes it. Returns SQLITE_OK, SQLITE_MISUSE for a bad length
/// (raw: 32 bytes, raw + salt: 48, passphrase: at least 1) or SQLITE_NOMEM.
int cc_stage_key(cc_key_kind kind, const uint8_t *bytes, size_t length, char token[33]);

/// Forgets a staged key that was not consumed (after a failed open); zeroes it. No-op otherwise.
void cc_unstage_key(const char *token);

/// Sets up a connection opened through the VFS: reserve 80 bytes per page (for a new file), page size 4096,
/// temp_store = MEMORY. Call before the first write. Returns an SQLite result code.
int cc_prepare_connection(struct sqlite3 *db, const char *schema);

/// The salt and AES key of an encrypted database; SQLITE_NOTFOUND when `schema` is not encrypted.
int cc_key_info_of(struct sqlite3 *db, const char *schema, cc_key_info *out);

/// The page keys for `salt`: K_enc (32 bytes) and K_mac (32 bytes). Returns SQLITE_OK or SQLITE_MISUSE.
int cc_derive_keys(
    cc_key_kind kind, const uint8_t *bytes, size_t length, const uint8_t salt[16], uint8_t kenc[32],
    uint8_t kmac[32]);

/// Encrypts one plaintext page `pgno` into `out` (4096 bytes each); `iv` NULL means a random IV; for page 1,
/// `salt` goes into bytes 0-15. Returns SQLITE_OK or SQLITE_ERROR.
int cc_encrypt_page(
    const uint8_t kenc[32], const uint8_t kmac[32], uint32_t pgno, const uint8_t salt[16], const uint8_t *iv,
    const uint8_t in[4096], uint8_t out[4096]);

/// Verifies and decrypts one stored page: SQLITE_OK, SQLITE_NOTADB (bad tag on page 1) or SQLITE_CORRUPT.
int cc_decrypt_page(
    const uint8_t kenc[32], const uint8_t kmac[32], uint32_t pgno, const uint8_t in[4096], uint8_t out[4096]);

/// Zeroes memory in a way the compiler keeps (OPENSSL_cleanse).
void cc_zero(void *pointer, size_t length);

#endif
