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
 * Commits: SQLite appends a transaction's frames one write at a time (header, then page) and ends with the commit
 * frame (a nonzero commit size). Those writes are gathered (cc_wal_state.batch) rather than made one by one: at the
 * commit frame, when the batch is full, or before any other use of the file (a read, a write elsewhere, a sync, a
 * size, a truncation, closing), the gathered pages are encrypted together, on the pool's threads beside this one
 * (cipher_parallel.c), their checksums chained, and everything written at once. A commit is therefore on disk when
 * SQLite's write of its commit frame returns, before SQLite publishes it in the -shm index; frames gathered for a
 * transaction that then rolls back were never committed, and are written out before the connection gives up the WAL
 * write lock (cipher_vfs.c) so that they cannot land later over another connection's frames. A page SQLite rewrites
 * in place (a frame written earlier in the same transaction) writes the batch out and goes the one-by-one way.
 *
 * Without POWERSAFE_OVERWRITE (not the unix default; "psow=0") SQLite pads a synced commit with copies
 * of the commit frame up to a sector boundary and splits the write that crosses it, so a page may come
 * in two writes; they are joined before encryption.
 */

#include <stdatomic.h>
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

/// Whether `offset` is where a frame (its header) starts (32 + k * 4120); sets k.
static int frame_header_at(sqlite3_int64 offset, sqlite3_int64 *frame) {
    sqlite3_int64 relative = offset - WAL_HEADER_SIZE;
    if (relative < 0 || relative % FRAME_SIZE != 0) return 0;
    *frame = relative / FRAME_SIZE;
    return 1;
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

/* ---- gathered frames ------------------------------------------------------------------------------ */

/// Fewer gathered pages than this are encrypted on the calling thread alone (waking the pool costs more).
#define PARALLEL_MIN_PAGES 16
/// The most bytes written to the file in one call: the unix VFS masks a write's length to 17 bits.
#define WRITE_MAX ((size_t)31 * FRAME_SIZE)

static uint8_t *batch_frame(cc_wal_state *wal, int index) {
    return wal->batch + (size_t)index * FRAME_SIZE;
}

/// Whether `frame` is the last gathered frame, still waiting for its page. (A page SQLite rewrites in place, in a frame
/// gathered or not, writes the batch out first and then takes the one-by-one path.)
static int batch_awaits_page(const cc_wal_state *wal, sqlite3_int64 frame) {
    return wal->batch_count > 0 && !wal->batch_last_complete && frame == wal->batch_first + wal->batch_count - 1;
}

/// Whether a header for `frame` continues the batch: the next frame, after a complete one, with room left.
static int batch_continues(const cc_wal_state *wal, sqlite3_int64 frame) {
    return wal->batch_count > 0 && wal->batch_last_complete && wal->batch_count < CC_WAL_BATCH_FRAMES
        && frame == wal->batch_first + wal->batch_count;
}

/// Allocates the batch buffer on first use; 0 when memory runs out (frames are then written one by one).
static int batch_allocated(cc_wal_state *wal) {
    if (wal->batch == NULL) wal->batch = sqlite3_malloc64((sqlite3_uint64)CC_WAL_BATCH_FRAMES * FRAME_SIZE);
    return wal->batch != NULL;
}

typedef struct {
    const cc_key *key;
    uint8_t *batch;
    atomic_int failed;
} encryption_job;

/// Encrypts gathered frame `index`'s page in place under the page number in its header.
static void encrypt_gathered_page(void *context, int index) {
    encryption_job *job = context;
    uint8_t *frame = job->batch + (size_t)index * FRAME_SIZE;
    uint8_t *page = frame + FRAME_HEADER_SIZE;
    if (cc_key_encrypt_page_shared(job->key, cc_get_be32(frame), page, page) != SQLITE_OK) atomic_store(&job->failed, 1);
}

int cc_wal_flush(cc_file *f) {
    cc_wal_state *wal = &f->wal;
    int count = wal->batch_count;
    if (count == 0) return SQLITE_OK;
    wal->batch_count = 0;
    int pages = wal->batch_last_complete ? count : count - 1; /* a last header without its page goes as it is */
    encryption_job job = {.key = f->key, .batch = wal->batch};
    atomic_init(&job.failed, 0);
    if (pages >= PARALLEL_MIN_PAGES) {
        cc_parallel_run(pages, encrypt_gathered_page, &job);
    } else {
        for (int index = 0; index < pages; index++) encrypt_gathered_page(&job, index);
    }
    if (atomic_load(&job.failed)) return SQLITE_IOERR_WRITE;
    uint32_t sums[2];
    int big_endian = 0;
    int rc = checksum_seed(f, wal->batch_first, sums, &big_endian);
    if (rc != SQLITE_OK) return rc;
    for (int index = 0; index < pages; index++) {
        uint8_t *frame = batch_frame(wal, index);
        wal_checksum(big_endian, frame, 8, sums);
        wal_checksum(big_endian, frame + FRAME_HEADER_SIZE, CC_PAGE_SIZE, sums);
        cc_put_be32(frame + FRAME_HEADER_CHECKSUM, sums[0]);
        cc_put_be32(frame + FRAME_HEADER_CHECKSUM + 4, sums[1]);
    }
    /* The unix VFS writes at most 128 KiB per call (it masks the length to 17 bits). */
    size_t length = (size_t)pages * FRAME_SIZE + (pages < count ? FRAME_HEADER_SIZE : 0);
    for (size_t written = 0; written < length && rc == SQLITE_OK; written += WRITE_MAX) {
        size_t part = length - written < WRITE_MAX ? length - written : WRITE_MAX;
        rc = cc_real_write(f, wal->batch + written, (int)part, frame_offset(wal->batch_first) + (sqlite3_int64)written);
    }
    return rc;
}

void cc_wal_release(cc_file *f) {
    if (f->wal.batch == NULL) return;
    cc_zero(f->wal.batch, (size_t)CC_WAL_BATCH_FRAMES * FRAME_SIZE);
    sqlite3_free(f->wal.batch);
    f->wal.batch = NULL;
    f->wal.batch_count = 0;
}

/// Takes SQLite's write of the last gathered frame's page into the batch; writes the batch out at a commit frame or
/// when it is full.
static int gather_page(cc_file *f, const void *buffer) {
    cc_wal_state *wal = &f->wal;
    uint8_t *frame = batch_frame(wal, wal->batch_count - 1);
    memcpy(frame + FRAME_HEADER_SIZE, buffer, CC_PAGE_SIZE);
    wal->batch_last_complete = 1;
    int commits = cc_get_be32(frame + 4) != 0;
    return commits || wal->batch_count == CC_WAL_BATCH_FRAMES ? cc_wal_flush(f) : SQLITE_OK;
}

/// Takes SQLite's write of a frame's header into the batch, after writing out what it does not continue.
static int gather_header(cc_file *f, const void *buffer, sqlite3_int64 frame) {
    cc_wal_state *wal = &f->wal;
    if (!batch_continues(wal, frame)) {
        int rc = cc_wal_flush(f);
        if (rc != SQLITE_OK) return rc;
        wal->batch_first = frame;
    }
    memcpy(batch_frame(wal, wal->batch_count), buffer, FRAME_HEADER_SIZE);
    wal->batch_count++;
    wal->batch_last_complete = 0;
    return SQLITE_OK;
}

int cc_wal_write(cc_file *f, const void *buffer, int amount, sqlite3_int64 offset) {
    sqlite3_int64 frame = 0;
    if (amount == CC_PAGE_SIZE && frame_page_at(offset, &frame) && batch_awaits_page(&f->wal, frame)) {
        return gather_page(f, buffer);
    }
    /* Gathering starts once page 1's salt is fixed (the first page written fixes a new database's). */
    if (amount == FRAME_HEADER_SIZE && frame_header_at(offset, &frame) && f->key->salt_fixed && batch_allocated(&f->wal)) {
        return gather_header(f, buffer, frame);
    }
    int rc = cc_wal_flush(f);
    if (rc != SQLITE_OK) return rc;
    if (completes_held_page(&f->wal, amount, offset)) return write_held_page(f, buffer, amount);
    f->wal.held_length = 0;
    if (frame_page_at(offset, &frame) && amount == CC_PAGE_SIZE) return write_frame_page(f, buffer, frame);
    if (frame_page_at(offset, &frame) && amount < CC_PAGE_SIZE) return hold_first_part(f, buffer, amount, frame);
    /* The WAL header and frame headers (whole, or split at a sync point) are written in clear. */
    if (amount <= WAL_HEADER_SIZE) return cc_real_write(f, buffer, amount, offset);
    return SQLITE_IOERR_WRITE;
}

int cc_wal_read(cc_file *f, void *buffer, int amount, sqlite3_int64 offset) {
    int rc = cc_wal_flush(f);
    if (rc != SQLITE_OK) return rc;
    sqlite3_int64 frame = 0;
    if (amount != CC_PAGE_SIZE || !frame_page_at(offset, &frame)) return cc_real_read(f, buffer, amount, offset);
    cc_key *key = f->key;
    key->checkpoint_pgno = 0;
    rc = cc_real_read(f, f->wal.frame, FRAME_SIZE, frame_offset(frame));
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
