/*
 * WAL files (spec section 2.6): frame pages are encrypted like database pages, and frame checksums cover
 * the ciphertext ("mode B"), as in SQLCipher, so a hot WAL left by either implementation is recovered
 * by the other.
 *
 * Layout: a 32-byte header (magic, version, page size, checkpoint sequence, salt-1, salt-2, checksum-1,
 * checksum-2), then frames of a 24-byte header (page number, commit size, salt-1, salt-2, checksum-1,
 * checksum-2) and one 4096-byte page. Headers stay clear. Checksums chain from the previous frame (the
 * first from the WAL header): for each pair of 32-bit words (x0, x1) over the frame header's bytes 0-7
 * and then the page, s1 += x0 + s2; s2 += x1 + s1; words are little-endian when the magic is 0x377f0682
 * and big-endian for 0x377f0683; the sums are stored big-endian.
 *
 * SQLite writes a frame as its header (24 bytes) and then its page (4096 bytes at frame + 24), and may
 * later rewrite a page in place or rewrite only headers (walRewriteChecksums) after reading whole
 * frames. So: a page write is encrypted under the page number already in its frame header on disk, and
 * this frame's checksum is recomputed over the ciphertext; reads of a frame's page are decrypted; every
 * other read (WAL header, whole frames during recovery or checksum rewrites) returns the stored bytes,
 * so SQLite itself verifies the ciphertext checksums. SQLite's own running checksum in the -shm header
 * stays plaintext-based (accepted residual, spec 2.6).
 *
 * Checkpoints: between SQLITE_FCNTL_CKPT_START and _DONE SQLite only copies frame pages to the database, each
 * read and written at once; those reads return the stored bytes and the database write stores them as they are
 * (the page number checked against the frame's), so a checkpoint neither decrypts nor encrypts. The tag travels
 * with the page and is checked whenever the page is read from the database.
 *
 * Without POWERSAFE_OVERWRITE (not the unix default; "psow=0") SQLite pads a synced commit with copies
 * of the commit frame up to a sector boundary and splits the write that crosses it, so a page may come
 * in two writes; they are joined before encryption.
 */

#include <string.h>

#include "cipher_internal.h"

#define WAL_HEADER_SIZE 32
#define FRAME_HEADER_SIZE 24
#define FRAME_SIZE (FRAME_HEADER_SIZE + CC_PAGE_SIZE)
#define WAL_HEADER_CHECKSUM 24 /* checksum-1, checksum-2 in the WAL header */
#define FRAME_HEADER_CHECKSUM 16 /* checksum-1, checksum-2 in a frame header */

/// Whether `offset` is where the page of a frame starts (32 + k * 4120 + 24); sets k.
static int frame_page_at(sqlite3_int64 offset, sqlite3_int64 *frame) {
    sqlite3_int64 relative = offset - WAL_HEADER_SIZE - FRAME_HEADER_SIZE;
    if (relative < 0 || relative % FRAME_SIZE != 0) return 0;
    *frame = relative / FRAME_SIZE;
    return 1;
}

static sqlite3_int64 frame_offset(sqlite3_int64 frame) {
    return WAL_HEADER_SIZE + frame * FRAME_SIZE;
}

static uint32_t get_le32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/// Continues the running checksum `sums` over `data` (a multiple of 8 bytes).
static void wal_checksum(int big_endian, const uint8_t *data, size_t length, uint32_t sums[2]) {
    uint32_t s1 = sums[0], s2 = sums[1];
    for (size_t i = 0; i < length; i += 8) {
        uint32_t x0 = big_endian ? cc_get_be32(data + i) : get_le32(data + i);
        uint32_t x1 = big_endian ? cc_get_be32(data + i + 4) : get_le32(data + i + 4);
        s1 += x0 + s2;
        s2 += x1 + s1;
    }
    sums[0] = s1;
    sums[1] = s2;
}

/// The checksum frame k continues from (the stored sums of frame k - 1, or of the WAL header for the
/// first frame) and the word order given by the WAL's magic.
static int checksum_seed(cc_file *f, sqlite3_int64 frame, uint32_t sums[2], int *big_endian) {
    uint8_t header[WAL_HEADER_SIZE];
    int rc = cc_real_read(f, header, WAL_HEADER_SIZE, 0);
    if (rc != SQLITE_OK) return rc;
    *big_endian = header[3] & 1; /* magic 0x377f0682 or 0x377f0683, stored big-endian */
    uint8_t stored[8];
    if (frame == 0) {
        memcpy(stored, header + WAL_HEADER_CHECKSUM, sizeof stored);
    } else {
        rc = cc_real_read(f, stored, sizeof stored, frame_offset(frame - 1) + FRAME_HEADER_CHECKSUM);
        if (rc != SQLITE_OK) return rc;
    }
    sums[0] = cc_get_be32(stored);
    sums[1] = cc_get_be32(stored + 4);
    return SQLITE_OK;
}

/// Stores frame k's checksum over its header bytes 0-7 and its (encrypted) page in f->page.
static int write_frame_checksum(cc_file *f, sqlite3_int64 frame, const uint8_t header[FRAME_HEADER_SIZE]) {
    uint32_t sums[2];
    int big_endian = 0;
    int rc = checksum_seed(f, frame, sums, &big_endian);
    if (rc != SQLITE_OK) return rc;
    wal_checksum(big_endian, header, 8, sums);
    wal_checksum(big_endian, f->page, CC_PAGE_SIZE, sums);
    uint8_t stored[8];
    cc_put_be32(stored, sums[0]);
    cc_put_be32(stored + 4, sums[1]);
    return cc_real_write(f, stored, sizeof stored, frame_offset(frame) + FRAME_HEADER_CHECKSUM);
}

static int write_frame_page(cc_file *f, const uint8_t *plain, sqlite3_int64 frame) {
    uint8_t header[FRAME_HEADER_SIZE];
    int rc = cc_real_read(f, header, FRAME_HEADER_SIZE, frame_offset(frame));
    if (rc != SQLITE_OK) return rc == SQLITE_IOERR_SHORT_READ ? SQLITE_IOERR_WRITE : rc;
    uint32_t pgno = cc_get_be32(header);
    if (pgno == 0) return SQLITE_IOERR_WRITE;
    rc = cc_key_encrypt_page(f->key, pgno, plain, f->page);
    if (rc == SQLITE_OK) rc = cc_real_write(f, f->page, CC_PAGE_SIZE, frame_offset(frame) + FRAME_HEADER_SIZE);
    if (rc == SQLITE_OK) rc = write_frame_checksum(f, frame, header);
    return rc;
}

/// Holds the first part of a page write split at a sync point. SQLite syncs between the two parts, so
/// these bytes reach the disk only after that sync; that is harmless because SQLite places sync points
/// after the commit frame and splits only the padding frames (copies of the commit frame) it writes
/// up to the next sector boundary.
static int hold_first_part(cc_file *f, const void *buffer, int amount, sqlite3_int64 frame) {
    memcpy(f->wal.held, buffer, (size_t)amount);
    f->wal.held_length = amount;
    f->wal.held_frame = frame;
    return SQLITE_OK;
}

static int completes_held_page(const cc_wal_state *wal, int amount, sqlite3_int64 offset) {
    return wal->held_length > 0 && amount == CC_PAGE_SIZE - wal->held_length
        && offset == frame_offset(wal->held_frame) + FRAME_HEADER_SIZE + wal->held_length;
}

static int write_held_page(cc_file *f, const void *buffer, int amount) {
    memcpy(f->wal.held + f->wal.held_length, buffer, (size_t)amount);
    f->wal.held_length = 0;
    return write_frame_page(f, f->wal.held, f->wal.held_frame);
}

int cc_wal_write(cc_file *f, const void *buffer, int amount, sqlite3_int64 offset) {
    sqlite3_int64 frame = 0;
    if (completes_held_page(&f->wal, amount, offset)) return write_held_page(f, buffer, amount);
    f->wal.held_length = 0;
    if (frame_page_at(offset, &frame) && amount == CC_PAGE_SIZE) return write_frame_page(f, buffer, frame);
    if (frame_page_at(offset, &frame) && amount < CC_PAGE_SIZE) return hold_first_part(f, buffer, amount, frame);
    /* The WAL header and frame headers (whole, or split at a sync point) are written in clear. */
    if (amount <= WAL_HEADER_SIZE) return cc_real_write(f, buffer, amount, offset);
    return SQLITE_IOERR_WRITE;
}

int cc_wal_read(cc_file *f, void *buffer, int amount, sqlite3_int64 offset) {
    sqlite3_int64 frame = 0;
    if (amount != CC_PAGE_SIZE || !frame_page_at(offset, &frame)) return cc_real_read(f, buffer, amount, offset);
    cc_key *key = f->key;
    key->checkpoint_pgno = 0;
    int rc = cc_real_read(f, f->wal.frame, FRAME_SIZE, frame_offset(frame));
    if (rc != SQLITE_OK) return rc;
    uint32_t pgno = cc_get_be32(f->wal.frame);
    if (pgno == 0) return SQLITE_CORRUPT;
    if (key->checkpointing) {
        /* The checkpoint writes this page to the database next: it gets the stored bytes (cipher_vfs.c). */
        memcpy(buffer, f->wal.frame + FRAME_HEADER_SIZE, CC_PAGE_SIZE);
        key->checkpoint_pgno = pgno;
        return SQLITE_OK;
    }
    return cc_key_decrypt_page(key, pgno, f->wal.frame + FRAME_HEADER_SIZE, buffer);
}
