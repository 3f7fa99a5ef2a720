/*
 * Key material: one-time tokens for staged keys, the in-process cache of PBKDF2 results, and the key
 * object a database handle and its WAL / journal handles share.
 *
 * Key bytes never travel in the URI: the caller stages a copy under a random token, the database file's
 * xOpen takes it out of the table (so a token opens one file once), and the key object owns it from
 * then on. Every copy is zeroed when freed.
 *
 * PBKDF2-HMAC-SHA512 with 256,000 rounds costs about 0.2 s, and every connection (and every reopen)
 * needs K_enc for the same passphrase and salt, so passphrase results are cached per (secret, salt).
 * An entry is identified by HMAC-SHA256 under a random per-process key rather than a plain hash of the
 * passphrase, so the cache holds no fast-to-test fingerprint of it. Raw keys need no cache (K_mac is 2
 * rounds). The table and the cache are under one mutex; PBKDF2 runs outside it.
 */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "cipher_internal.h"

#define TOKEN_BYTES 16
#define CACHE_SLOTS 8
#define CACHE_ID_SIZE 32

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- key objects ------------------------------------------------------------------------------- */

static cc_key *key_new(cc_key_kind kind, const uint8_t *bytes, size_t length) {
    cc_key *key = calloc(1, sizeof *key);
    uint8_t *secret = malloc(length);
    if (key == NULL || secret == NULL) {
        free(key);
        free(secret);
        return NULL;
    }
    memcpy(secret, bytes, length);
    key->refs = 1;
    key->kind = kind;
    key->secret = secret;
    key->length = length;
    return key;
}

cc_key *cc_key_retain(cc_key *key) {
    __atomic_add_fetch(&key->refs, 1, __ATOMIC_RELAXED);
    return key;
}

static void forget_secret(cc_key *key) {
    cc_zero(key->secret, key->length);
    free(key->secret);
    key->secret = NULL;
    key->length = 0;
}

void cc_key_release(cc_key *key) {
    if (key == NULL || __atomic_sub_fetch(&key->refs, 1, __ATOMIC_ACQ_REL) > 0) return;
    forget_secret(key);
    cc_zero(key, sizeof *key);
    free(key);
}

/// The salt is final: the secret was only kept to re-derive for another salt, so it goes now.
static void fix_salt(cc_key *key) {
    key->salt_fixed = 1;
    forget_secret(key);
}

/* ---- staged keys ------------------------------------------------------------------------------- */

typedef struct staged_key {
    struct staged_key *next;
    char token[2 * TOKEN_BYTES + 1];
    cc_key *key;
} staged_key;

static staged_key *staged_keys;

static int new_token(char token[2 * TOKEN_BYTES + 1]) {
    static const char hex[] = "0123456789abcdef";
    uint8_t random[TOKEN_BYTES];
    if (RAND_bytes(random, sizeof random) != 1) return 0;
    for (int i = 0; i < TOKEN_BYTES; i++) {
        token[2 * i] = hex[random[i] >> 4];
        token[2 * i + 1] = hex[random[i] & 15];
    }
    token[2 * TOKEN_BYTES] = '\0';
    return 1;
}

/// Unlinks and returns the entry for `token`; call with the lock held.
static staged_key *unlink_staged(const char *token) {
    for (staged_key **link = &staged_keys; *link != NULL; link = &(*link)->next) {
        staged_key *entry = *link;
        if (strcmp(entry->token, token) == 0) {
            *link = entry->next;
            return entry;
        }
    }
    return NULL;
}

int cc_stage_key(cc_key_kind kind, const uint8_t *bytes, size_t length, char token[33]) {
    if (bytes == NULL || token == NULL || !cc_key_length_valid(kind, length)) return SQLITE_MISUSE;
    staged_key *entry = calloc(1, sizeof *entry);
    cc_key *key = key_new(kind, bytes, length);
    if (entry == NULL || key == NULL || !new_token(entry->token)) {
        free(entry);
        cc_key_release(key);
        return SQLITE_NOMEM;
    }
    entry->key = key;
    memcpy(token, entry->token, sizeof entry->token);
    pthread_mutex_lock(&lock);
    entry->next = staged_keys;
    staged_keys = entry;
    pthread_mutex_unlock(&lock);
    return SQLITE_OK;
}

cc_key *cc_key_take_staged(const char *token) {
    if (token == NULL) return NULL;
    pthread_mutex_lock(&lock);
    staged_key *entry = unlink_staged(token);
    pthread_mutex_unlock(&lock);
    if (entry == NULL) return NULL;
    cc_key *key = entry->key;
    free(entry);
    return key;
}

void cc_unstage_key(const char *token) {
    cc_key_release(cc_key_take_staged(token));
}

/* ---- derived-key cache ------------------------------------------------------------------------- */

typedef struct cache_entry {
    uint64_t last_use; /* 0 = empty */
    uint8_t id[CACHE_ID_SIZE];
    uint8_t salt[CC_SALT_SIZE];
    uint8_t kenc[CC_KEY_SIZE];
} cache_entry;

static cache_entry cache[CACHE_SLOTS];
static uint64_t cache_clock;
static uint8_t cache_id_key[32];
static pthread_once_t cache_id_key_once = PTHREAD_ONCE_INIT;
static int cache_id_key_ready;

static void make_cache_id_key(void) {
    cache_id_key_ready = RAND_bytes(cache_id_key, sizeof cache_id_key) == 1;
}

/// HMAC-SHA256(per-process key, passphrase); 1 on success.
static int cache_id(const uint8_t *bytes, size_t length, uint8_t id[CACHE_ID_SIZE]) {
    pthread_once(&cache_id_key_once, make_cache_id_key);
    unsigned int id_length = 0;
    return cache_id_key_ready
        && HMAC(EVP_sha256(), cache_id_key, sizeof cache_id_key, bytes, length, id, &id_length) != NULL
        && id_length == CACHE_ID_SIZE;
}

/// The cached K_enc for (id, salt); 1 when found. Call with the lock held.
static int cache_lookup(const uint8_t id[CACHE_ID_SIZE], const uint8_t salt[CC_SALT_SIZE], uint8_t kenc[CC_KEY_SIZE]) {
    for (int i = 0; i < CACHE_SLOTS; i++) {
        cache_entry *entry = &cache[i];
        if (entry->last_use != 0 && memcmp(entry->id, id, CACHE_ID_SIZE) == 0
            && memcmp(entry->salt, salt, CC_SALT_SIZE) == 0) {
            entry->last_use = ++cache_clock;
            memcpy(kenc, entry->kenc, CC_KEY_SIZE);
            return 1;
        }
    }
    return 0;
}

/// Stores K_enc for (id, salt) in an empty or the least recently used slot. Call with the lock held.
static void cache_store(const uint8_t id[CACHE_ID_SIZE], const uint8_t salt[CC_SALT_SIZE], const uint8_t kenc[CC_KEY_SIZE]) {
    cache_entry *victim = &cache[0];
    for (int i = 1; i < CACHE_SLOTS; i++) {
        if (cache[i].last_use < victim->last_use) victim = &cache[i];
    }
    cc_zero(victim, sizeof *victim);
    memcpy(victim->id, id, CACHE_ID_SIZE);
    memcpy(victim->salt, salt, CC_SALT_SIZE);
    memcpy(victim->kenc, kenc, CC_KEY_SIZE);
    victim->last_use = ++cache_clock;
}

/// Zeroes the cache when the process exits (or the library is unloaded). Only tries the lock: a forked
/// child may have inherited it locked, and nothing can be waiting for the cache at this point anyway.
__attribute__((destructor)) static void wipe_cache(void) {
    int locked = pthread_mutex_trylock(&lock) == 0;
    cc_zero(cache, sizeof cache);
    if (locked) pthread_mutex_unlock(&lock);
}

/// K_enc of a passphrase for a salt: from the cache, else PBKDF2 (outside the lock) and cached.
static int passphrase_kenc(const uint8_t *bytes, size_t length, const uint8_t salt[CC_SALT_SIZE], uint8_t kenc[CC_KEY_SIZE]) {
    uint8_t id[CACHE_ID_SIZE];
    int have_id = cache_id(bytes, length, id);
    int found = 0;
    if (have_id) {
        pthread_mutex_lock(&lock);
        found = cache_lookup(id, salt, kenc);
        pthread_mutex_unlock(&lock);
    }
    int rc = found ? SQLITE_OK : cc_codec_derive_kenc(CC_KEY_PASSPHRASE, bytes, length, salt, kenc);
    if (rc == SQLITE_OK && have_id && !found) {
        pthread_mutex_lock(&lock);
        cache_store(id, salt, kenc);
        pthread_mutex_unlock(&lock);
    }
    cc_zero(id, sizeof id);
    return rc;
}

int cc_derive_cached(
    cc_key_kind kind, const uint8_t *bytes, size_t length, const uint8_t salt[CC_SALT_SIZE],
    uint8_t kenc[CC_KEY_SIZE], uint8_t kmac[CC_KEY_SIZE]) {
    if (bytes == NULL || salt == NULL || !cc_key_length_valid(kind, length)) return SQLITE_MISUSE;
    int rc = kind == CC_KEY_PASSPHRASE ? passphrase_kenc(bytes, length, salt, kenc)
                                       : cc_codec_derive_kenc(kind, bytes, length, salt, kenc);
    if (rc == SQLITE_OK) rc = cc_codec_derive_kmac(kenc, salt, kmac);
    if (rc != SQLITE_OK) {
        cc_zero(kenc, CC_KEY_SIZE);
        cc_zero(kmac, CC_KEY_SIZE);
    }
    return rc;
}

int cc_derive_keys(
    cc_key_kind kind, const uint8_t *bytes, size_t length, const uint8_t salt[16], uint8_t kenc[32],
    uint8_t kmac[32]) {
    if (kenc == NULL || kmac == NULL) return SQLITE_MISUSE;
    return cc_derive_cached(kind, bytes, length, salt, kenc, kmac);
}

/* ---- pages under a key ------------------------------------------------------------------------- */

int cc_key_bind_salt(cc_key *key, const uint8_t salt[CC_SALT_SIZE], int fixed) {
    memcpy(key->salt, salt, CC_SALT_SIZE);
    int rc = cc_derive_cached(key->kind, key->secret, key->length, salt, key->kenc, key->kmac);
    if (rc != SQLITE_OK) return SQLITE_ERROR;
    if (fixed) fix_salt(key);
    return SQLITE_OK;
}

/// Page 1 as SQLite must lay it out for this format: page size 4096 (bytes 16-17, big-endian) and
/// 80 reserved bytes per page (byte 20).
static int page1_header_valid(const uint8_t *page) {
    return page[16] == (CC_PAGE_SIZE >> 8) && page[17] == (CC_PAGE_SIZE & 0xff) && page[20] == CC_RESERVE_BYTES;
}

int cc_key_encrypt_page(cc_key *key, uint32_t pgno, const uint8_t *in, uint8_t *out) {
    if (pgno == 1 && !page1_header_valid(in)) return SQLITE_IOERR_WRITE;
    if (cc_encrypt_page(key->kenc, key->kmac, pgno, key->salt, NULL, in, out) != SQLITE_OK) return SQLITE_IOERR_WRITE;
    fix_salt(key); /* pages under this salt are on disk now */
    return SQLITE_OK;
}

int cc_key_encrypt_page_shared(const cc_key *key, uint32_t pgno, const uint8_t *in, uint8_t *out) {
    if (!key->salt_fixed || (pgno == 1 && !page1_header_valid(in))) return SQLITE_IOERR_WRITE;
    return cc_encrypt_page(key->kenc, key->kmac, pgno, key->salt, NULL, in, out) == SQLITE_OK ? SQLITE_OK : SQLITE_IOERR_WRITE;
}

/// Page 1's stored salt against the key's: equal, adopted (provisional salt), or SQLITE_NOTADB.
static int match_salt(cc_key *key, const uint8_t *stored) {
    if (memcmp(stored, key->salt, CC_SALT_SIZE) == 0) return SQLITE_OK;
    if (key->salt_fixed) return SQLITE_NOTADB;
    /* Another connection created the file after we opened it empty: use its salt. */
    return cc_key_bind_salt(key, stored, 0);
}

int cc_key_decrypt_page(cc_key *key, uint32_t pgno, const uint8_t *in, uint8_t *out) {
    if (pgno == 1) {
        int rc = match_salt(key, in);
        if (rc != SQLITE_OK) return rc;
    }
    int rc = cc_decrypt_page(key->kenc, key->kmac, pgno, in, out);
    if (rc != SQLITE_OK || pgno != 1) return rc;
    if (!page1_header_valid(out)) return SQLITE_NOTADB;
    fix_salt(key);
    return SQLITE_OK;
}
