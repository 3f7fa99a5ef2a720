/*
 * Rollback journals (spec section 2.5, "mode B"): record pages are encrypted like database pages and
 * record checksums cover the ciphertext, as in SQLCipher, so a hot journal left by either
 * implementation is rolled back by the other.
 *
 * Layout: headers (magic, record count, checksum nonce, original page count, sector size, page size;
 * padded to the sector size) stay clear. A record is three writes: its page number (4 bytes, big-endian),
 * the page (4096 bytes, at the next offset), and its checksum (4 bytes, right after the page) =
 * nonce + the sum of page bytes 3896, 3696, ..., 96 (every 200th byte). SQLite reads a record back in
 * the same order. Any other access (headers, the super-journal name, the byte SQLite reads to test for a
 * hot journal) passes through unchanged.
 *
 * Checksums are translated without knowing the nonce. SQLite computes nonce + sum(plaintext); we store
 * that - sum(plaintext) + sum(ciphertext) = nonce + sum(ciphertext). On reading we return
 * stored - sum(ciphertext) + sum(plaintext), which equals SQLite's expectation exactly when the stored
 * value is nonce + sum(ciphertext) for the nonce SQLite has: SQLite's own comparison then stops playback
 * at a torn or stale record just as it would natively. A page whose tag fails is returned as zeros with
 * a checksum off by one, so SQLite stops there too instead of restoring it.
 */

#include <string.h>

#include "cipher_internal.h"

#define CHECKSUM_SIZE 4
#define PGNO_SIZE 4
#define SAMPLE_STEP 200

/// The part of SQLite's journal checksum that depends on the page (pager_cksum without the nonce).
static uint32_t sampled_sum(const uint8_t *page) {
    uint32_t sum = 0;
    for (int i = CC_PAGE_SIZE - SAMPLE_STEP; i > 0; i -= SAMPLE_STEP) sum += page[i];
    return sum;
}

void cc_journal_reset(cc_journal_state *state) {
    memset(state, 0, sizeof *state);
    state->wpgno_off = state->wsum_off = state->rpgno_off = state->rsum_off = -1;
}

/* ---- writing ----------------------------------------------------------------------------------- */

static int write_record_page(cc_file *f, const uint8_t *plain, sqlite3_int64 offset) {
    cc_journal_state *s = &f->journal;
    s->wpgno_off = -1;
    int rc = cc_key_encrypt_page(f->key, s->wpgno, plain, f->page);
    if (rc == SQLITE_OK) rc = cc_real_write(f, f->page, CC_PAGE_SIZE, offset);
    if (rc != SQLITE_OK) return rc;
    s->wsum_off = offset + CC_PAGE_SIZE;
    s->wdelta = sampled_sum(f->page) - sampled_sum(plain);
    return SQLITE_OK;
}

static int write_record_checksum(cc_file *f, const uint8_t *checksum, sqlite3_int64 offset) {
    cc_journal_state *s = &f->journal;
    s->wsum_off = -1;
    uint8_t stored[CHECKSUM_SIZE];
    cc_put_be32(stored, cc_get_be32(checksum) + s->wdelta);
    return cc_real_write(f, stored, CHECKSUM_SIZE, offset);
}

int cc_journal_write(cc_file *f, const void *buffer, int amount, sqlite3_int64 offset) {
    cc_journal_state *s = &f->journal;
    if (amount == CC_PAGE_SIZE && s->wpgno_off >= 0 && offset == s->wpgno_off + PGNO_SIZE) {
        return write_record_page(f, buffer, offset);
    }
    if (amount == CHECKSUM_SIZE && s->wsum_off >= 0 && offset == s->wsum_off) {
        return write_record_checksum(f, buffer, offset);
    }
    s->wsum_off = -1;
    s->wpgno_off = -1;
    if (amount == PGNO_SIZE) {
        s->wpgno_off = offset; /* a record's page number, if a page follows at the next offset */
        s->wpgno = cc_get_be32(buffer);
    }
    return cc_real_write(f, buffer, amount, offset);
}

/* ---- reading ----------------------------------------------------------------------------------- */

static int read_record_page(cc_file *f, uint8_t *out, sqlite3_int64 offset) {
    cc_journal_state *s = &f->journal;
    s->rpgno_off = -1;
    int rc = cc_real_read(f, f->page, CC_PAGE_SIZE, offset);
    if (rc != SQLITE_OK) {
        memcpy(out, f->page, CC_PAGE_SIZE); /* zero-filled on a short read */
        return rc;
    }
    int intact = cc_key_decrypt_page(f->key, s->rpgno, f->page, out) == SQLITE_OK;
    if (!intact) memset(out, 0, CC_PAGE_SIZE);
    s->rsum_off = offset + CC_PAGE_SIZE;
    s->rdelta = sampled_sum(out) - sampled_sum(f->page) + (intact ? 0 : 1);
    return SQLITE_OK;
}

static int read_record_checksum(cc_file *f, uint8_t *out, sqlite3_int64 offset) {
    cc_journal_state *s = &f->journal;
    s->rsum_off = -1;
    int rc = cc_real_read(f, out, CHECKSUM_SIZE, offset);
    if (rc == SQLITE_OK) cc_put_be32(out, cc_get_be32(out) + s->rdelta);
    return rc;
}

int cc_journal_read(cc_file *f, void *buffer, int amount, sqlite3_int64 offset) {
    cc_journal_state *s = &f->journal;
    if (amount == CC_PAGE_SIZE && s->rpgno_off >= 0 && offset == s->rpgno_off + PGNO_SIZE) {
        return read_record_page(f, buffer, offset);
    }
    if (amount == CHECKSUM_SIZE && s->rsum_off >= 0 && offset == s->rsum_off) {
        return read_record_checksum(f, buffer, offset);
    }
    s->rsum_off = -1;
    s->rpgno_off = -1;
    int rc = cc_real_read(f, buffer, amount, offset);
    if (rc == SQLITE_OK && amount == PGNO_SIZE) {
        s->rpgno_off = offset; /* a record's page number, if the page is read next */
        s->rpgno = cc_get_be32(buffer);
    }
    return rc;
}
