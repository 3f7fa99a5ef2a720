/*
 * SQLCipher 4 default page codec and key derivation (spec section 1), as pure functions.
 *
 * Stored page N (4096 bytes):
 *   page 1:  salt (16, clear) | AES-256-CBC(plaintext 16..4015) | IV (16) | HMAC-SHA512 tag (64)
 *   page N:  AES-256-CBC(plaintext 0..4015)                      | IV (16) | tag (64)
 *   tag = HMAC-SHA512(K_mac, stored bytes [start..4032) || LE32(N)), start = 16 on page 1, else 0.
 * No padding and no plaintext header: page 1's header bytes 16..23 (page size, versions, reserve) are
 * encrypted. The IV is fresh for every write. Decrypted pages carry SQLite's magic in bytes 0..15 of
 * page 1 and zeros in the 80 reserved bytes, so SQLite always sees the same plaintext for a page.
 */

#include <limits.h>
#include <pthread.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include "cipher_internal.h"

#define KDF_ROUNDS 256000
#define MAC_KDF_ROUNDS 2
#define MAC_SALT_MASK 0x3a

static const uint8_t sqlite_magic[CC_SALT_SIZE] = "SQLite format 3";

static pthread_once_t algorithms_once = PTHREAD_ONCE_INIT;
static EVP_CIPHER *aes_256_cbc;
static EVP_MAC *hmac;

/// Fetches the algorithms once: implicit fetches (EVP_aes_256_cbc()) would look them up on every page.
/// They stay referenced for the life of the process.
static void fetch_algorithms(void) {
    aes_256_cbc = EVP_CIPHER_fetch(NULL, "AES-256-CBC", NULL);
    hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
}

static int algorithms_ready(void) {
    pthread_once(&algorithms_once, fetch_algorithms);
    return aes_256_cbc != NULL && hmac != NULL;
}

/// Where the encrypted (and authenticated) region of a page starts: page 1 keeps its salt in bytes 0..15.
static size_t region_start(uint32_t pgno) {
    return pgno == 1 ? CC_SALT_SIZE : 0;
}

int cc_key_length_valid(cc_key_kind kind, size_t length) {
    switch (kind) {
    case CC_KEY_PASSPHRASE:
        return length >= 1 && length <= INT_MAX;
    case CC_KEY_RAW:
        return length == CC_KEY_SIZE;
    case CC_KEY_RAW_SALT:
        return length == CC_KEY_SIZE + CC_SALT_SIZE;
    }
    return 0;
}

int cc_codec_derive_kenc(
    cc_key_kind kind, const uint8_t *bytes, size_t length, const uint8_t salt[CC_SALT_SIZE],
    uint8_t kenc[CC_KEY_SIZE]) {
    if (bytes == NULL || salt == NULL || !cc_key_length_valid(kind, length)) return SQLITE_MISUSE;
    if (kind != CC_KEY_PASSPHRASE) {
        /* Raw keys are K_enc itself (a raw key + salt carries its salt after the key). */
        memcpy(kenc, bytes, CC_KEY_SIZE);
        return SQLITE_OK;
    }
    int ok = PKCS5_PBKDF2_HMAC(
        (const char *)bytes, (int)length, salt, CC_SALT_SIZE, KDF_ROUNDS, EVP_sha512(), CC_KEY_SIZE, kenc);
    return ok == 1 ? SQLITE_OK : SQLITE_ERROR;
}

int cc_codec_derive_kmac(const uint8_t kenc[CC_KEY_SIZE], const uint8_t salt[CC_SALT_SIZE], uint8_t kmac[CC_KEY_SIZE]) {
    uint8_t mac_salt[CC_SALT_SIZE];
    for (int i = 0; i < CC_SALT_SIZE; i++) mac_salt[i] = salt[i] ^ MAC_SALT_MASK;
    int ok = PKCS5_PBKDF2_HMAC(
        (const char *)kenc, CC_KEY_SIZE, mac_salt, CC_SALT_SIZE, MAC_KDF_ROUNDS, EVP_sha512(), CC_KEY_SIZE, kmac);
    return ok == 1 ? SQLITE_OK : SQLITE_ERROR;
}

/*
 * Keyed contexts, one set per thread: setting a key up (HMAC's inner and outer pads, an AES key schedule) and
 * creating OpenSSL contexts cost more than the work on one page, so a thread keeps its last keyed contexts and only
 * resets them (HMAC) or sets a new IV (AES) when the next page uses the same key. Freed and zeroed when the thread
 * ends.
 */
typedef struct {
    EVP_MAC_CTX *mac;
    uint8_t mac_key[CC_KEY_SIZE];
    EVP_CIPHER_CTX *cipher[2]; /* [0] decrypts, [1] encrypts: their key schedules differ */
    uint8_t cipher_key[2][CC_KEY_SIZE];
    int cipher_keyed[2];
    uint8_t random[1024]; /* IVs to hand out: one RAND_bytes call per 64 pages instead of one per page */
    size_t random_left;
} codec_contexts;

static pthread_key_t contexts_key;
static pthread_once_t contexts_once = PTHREAD_ONCE_INIT;

static void free_contexts(void *pointer) {
    codec_contexts *contexts = pointer;
    EVP_MAC_CTX_free(contexts->mac);
    EVP_CIPHER_CTX_free(contexts->cipher[0]);
    EVP_CIPHER_CTX_free(contexts->cipher[1]);
    OPENSSL_cleanse(contexts, sizeof *contexts);
    OPENSSL_free(contexts);
}

static void make_contexts_key(void) {
    (void)pthread_key_create(&contexts_key, free_contexts);
}

/// This thread's contexts, made on first use; NULL when memory runs out.
static codec_contexts *thread_contexts(void) {
    pthread_once(&contexts_once, make_contexts_key);
    codec_contexts *contexts = pthread_getspecific(contexts_key);
    if (contexts != NULL) return contexts;
    contexts = OPENSSL_zalloc(sizeof *contexts);
    if (contexts == NULL) return NULL;
    contexts->cipher[0] = EVP_CIPHER_CTX_new();
    contexts->cipher[1] = EVP_CIPHER_CTX_new();
    if (contexts->cipher[0] == NULL || contexts->cipher[1] == NULL || pthread_setspecific(contexts_key, contexts) != 0) {
        free_contexts(contexts);
        return NULL;
    }
    return contexts;
}

/// A fresh random IV from this thread's buffer of OpenSSL randomness (IVs are stored in clear, so the buffer holds
/// nothing secret); 1 on success.
static int fresh_iv(uint8_t iv[CC_IV_SIZE]) {
    codec_contexts *contexts = thread_contexts();
    if (contexts == NULL) return 0;
    if (contexts->random_left < CC_IV_SIZE) {
        if (RAND_bytes(contexts->random, sizeof contexts->random) != 1) return 0;
        contexts->random_left = sizeof contexts->random;
    }
    contexts->random_left -= CC_IV_SIZE;
    uint8_t *next = contexts->random + contexts->random_left;
    memcpy(iv, next, CC_IV_SIZE);
    memset(next, 0, CC_IV_SIZE); /* never handed out twice */
    return 1;
}

/// HMAC-SHA512(K_mac, page[start..4032) || LE32(pgno)); 1 on success.
static int page_tag(const uint8_t kmac[CC_KEY_SIZE], const uint8_t *page, uint32_t pgno, uint8_t tag[CC_TAG_SIZE]) {
    codec_contexts *contexts = thread_contexts();
    if (contexts == NULL) return 0;
    size_t start = region_start(pgno);
    uint8_t pgno_le[4] = {(uint8_t)pgno, (uint8_t)(pgno >> 8), (uint8_t)(pgno >> 16), (uint8_t)(pgno >> 24)};
    int keyed = contexts->mac != NULL && CRYPTO_memcmp(contexts->mac_key, kmac, CC_KEY_SIZE) == 0;
    if (keyed) {
        if (!EVP_MAC_init(contexts->mac, NULL, 0, NULL)) return 0; /* same key: only reset */
    } else {
        char digest[] = "SHA512";
        OSSL_PARAM params[] = {
            OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
            OSSL_PARAM_construct_end(),
        };
        if (contexts->mac == NULL && (contexts->mac = EVP_MAC_CTX_new(hmac)) == NULL) return 0;
        OPENSSL_cleanse(contexts->mac_key, CC_KEY_SIZE);
        if (!EVP_MAC_init(contexts->mac, kmac, CC_KEY_SIZE, params)) {
            EVP_MAC_CTX_free(contexts->mac);
            contexts->mac = NULL;
            return 0;
        }
        memcpy(contexts->mac_key, kmac, CC_KEY_SIZE);
    }
    size_t length = 0;
    return EVP_MAC_update(contexts->mac, page + start, CC_USABLE_SIZE + CC_IV_SIZE - start)
        && EVP_MAC_update(contexts->mac, pgno_le, sizeof pgno_le)
        && EVP_MAC_final(contexts->mac, tag, &length, CC_TAG_SIZE) && length == CC_TAG_SIZE;
}

/// AES-256-CBC without padding over `length` bytes (a multiple of 16); `in` may equal `out`. 1 on success.
static int cbc(int encrypt, const uint8_t key[CC_KEY_SIZE], const uint8_t iv[CC_IV_SIZE], const uint8_t *in, uint8_t *out, int length) {
    codec_contexts *contexts = thread_contexts();
    if (contexts == NULL) return 0;
    int side = encrypt ? 1 : 0;
    EVP_CIPHER_CTX *ctx = contexts->cipher[side];
    int keyed = contexts->cipher_keyed[side] && CRYPTO_memcmp(contexts->cipher_key[side], key, CC_KEY_SIZE) == 0;
    int written = 0, tail = 0;
    int ok = keyed ? EVP_CipherInit_ex2(ctx, NULL, NULL, iv, encrypt, NULL) /* same key: only the IV */
                   : EVP_CipherInit_ex2(ctx, aes_256_cbc, key, iv, encrypt, NULL);
    if (!keyed) {
        contexts->cipher_keyed[side] = ok;
        if (ok) memcpy(contexts->cipher_key[side], key, CC_KEY_SIZE);
    }
    return ok && EVP_CIPHER_CTX_set_padding(ctx, 0) && EVP_CipherUpdate(ctx, out, &written, in, length)
        && EVP_CipherFinal_ex(ctx, out + written, &tail) && written + tail == length;
}

int cc_encrypt_page(
    const uint8_t kenc[32], const uint8_t kmac[32], uint32_t pgno, const uint8_t salt[16], const uint8_t *iv,
    const uint8_t in[4096], uint8_t out[4096]) {
    if (pgno == 0 || (pgno == 1 && salt == NULL) || !algorithms_ready()) return SQLITE_ERROR;
    uint8_t page_iv[CC_IV_SIZE];
    if (iv != NULL) {
        memcpy(page_iv, iv, CC_IV_SIZE);
    } else if (!fresh_iv(page_iv)) {
        return SQLITE_ERROR;
    }
    size_t start = region_start(pgno);
    if (!cbc(1, kenc, page_iv, in + start, out + start, (int)(CC_USABLE_SIZE - start))) return SQLITE_ERROR;
    memcpy(out + CC_USABLE_SIZE, page_iv, CC_IV_SIZE);
    if (!page_tag(kmac, out, pgno, out + CC_USABLE_SIZE + CC_IV_SIZE)) return SQLITE_ERROR;
    if (pgno == 1) memcpy(out, salt, CC_SALT_SIZE);
    return SQLITE_OK;
}

int cc_decrypt_page(
    const uint8_t kenc[32], const uint8_t kmac[32], uint32_t pgno, const uint8_t in[4096], uint8_t out[4096]) {
    if (pgno == 0 || !algorithms_ready()) return SQLITE_ERROR;
    /* Authenticate before decrypting; a bad page 1 means a wrong key (or not an encrypted file at all). */
    uint8_t tag[CC_TAG_SIZE];
    if (!page_tag(kmac, in, pgno, tag)) return SQLITE_ERROR;
    if (CRYPTO_memcmp(tag, in + CC_USABLE_SIZE + CC_IV_SIZE, CC_TAG_SIZE) != 0) {
        return pgno == 1 ? SQLITE_NOTADB : SQLITE_CORRUPT;
    }
    uint8_t iv[CC_IV_SIZE];
    memcpy(iv, in + CC_USABLE_SIZE, CC_IV_SIZE); /* copied first: `out` may be `in` */
    size_t start = region_start(pgno);
    if (!cbc(0, kenc, iv, in + start, out + start, (int)(CC_USABLE_SIZE - start))) return SQLITE_ERROR;
    memset(out + CC_USABLE_SIZE, 0, CC_RESERVE_BYTES);
    if (pgno == 1) memcpy(out, sqlite_magic, CC_SALT_SIZE);
    return SQLITE_OK;
}

void cc_zero(void *pointer, size_t length) {
    if (pointer != NULL) OPENSSL_cleanse(pointer, length);
}
