/* frame.h -- internal: compressed values, their frames and frame tables.
 *
 * A value is compressed by cutting it into frames of FRAME_SIZE original
 * bytes (the last one shorter) and compressing each on its own with zstd
 * (level FRAME_LEVEL), so any byte is reached by decoding one frame. A
 * frame that does not shrink is kept raw. The frames' stored bytes, one
 * after the other, form the value's stream, which is written like an
 * uncompressed value: chunks of one page, each behind its CRC-32C, at data
 * keys version|idx with idx < FRAME_ROW_BASE. Then come the frame tables:
 * rows at version|FRAME_ROW_BASE+j, each covering FRAME_PER_ROW frames and
 * small enough for one page, again behind a CRC-32C:
 *
 *   crc32c(le32) magic(le32 "OFZ1") frame_size(le32) count(le32)
 *   first_frame(le32) original_size(le64) stream_len(le64)
 *   stream_off(le64: where this row's first frame starts in the stream)
 *   count x le32: bit 31 set = raw, bits 0-30 = stored length
 *
 * A version without table rows is stored raw (the format-1 layout): a value
 * that would not shrink at all, an empty one, and every value written with
 * compression off or before it existed. So whether a version is compressed
 * is one lookup of its row FRAME_ROW_BASE.
 *
 * Why 64 KiB frames: on real text (headers, docs, dpkg status, logs; see
 * scripts/bench/framesize.c and doc/benchmark.md) zstd -1 gets 5.9x with
 * 64 KiB frames, 6.1x with 128 KiB and 6.5x with 1 MiB, but a 4 KiB read
 * then decodes 64 KiB (about 60 us) instead of 1 MiB (about 430 us);
 * 16 KiB frames lose 8% of the ratio. FUSE reads are at most 128 KiB, two
 * whole frames. Level 1: within 3% of level 3's ratio at 64 KiB, faster.
 */
#ifndef OFFLOADFS_STORE_FRAME_H
#define OFFLOADFS_STORE_FRAME_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

#define FRAME_SIZE (64u << 10)
#define FRAME_LEVEL 1
#define FRAME_MAGIC 0x315a464fu /* "OFZ1" */
#define FRAME_ROW_BASE 0x80000000u /* data idx of the first table row */
#define FRAME_PER_ROW 1000u
#define FRAME_ROW_HDR 40u /* bytes before the entries, after the CRC */
#define FRAME_ROW_MAX (FRAME_ROW_HDR + 4u * FRAME_PER_ROW)
#define FRAME_RAW 0x80000000u
#define FRAME_MIN_INPUT 64u /* shorter values are never worth a table */

/* A value compressed for writing: STREAM (STREAM_LEN bytes) then NROWS
 * table rows of ROW_LEN[i] bytes at ROWS + i * FRAME_ROW_MAX (without the
 * CRC, which the writer puts in front). */
typedef struct frame_packed {
    unsigned char *stream;
    size_t stream_len;
    unsigned char *rows;
    size_t nrows;
    size_t *row_len;
    uint64_t stored; /* stream_len + all row_len: what the value occupies */
} frame_packed;

/* Compresses LEN bytes of DATA. Returns 0 with *P filled (release it with
 * store_frame_packed_free()), 1 when the value should be stored raw (too short,
 * or no frame shrank: *P holds nothing), ENOMEM. */
int store_frame_pack(const void *data, size_t len, frame_packed *p);
void store_frame_packed_free(frame_packed *p);

/* One decoded table row. */
typedef struct frame_row {
    uint32_t frame_size, count, first;
    uint64_t original_size, stream_len, stream_off;
    const unsigned char *entries; /* COUNT le32, inside the row's buffer */
} frame_row;

/* Decodes and checks table row J (LEN bytes at BUF, CRC included): the CRC,
 * the magic, a frame size that is a power of two of 4 KiB to 1 MiB, the
 * count and first frame that row J of a value of that size must have,
 * every raw entry exactly its frame's length, every compressed one shorter,
 * and the row's frames inside the stream. Returns 0 or STORE_ECORRUPT. */
int store_frame_row_decode(const void *buf, size_t len, uint32_t j, frame_row *r);

/* Where frame I (a frame of row R) lies: *OFF and *LEN in the stream, *RAW,
 * and *OLEN its original length. */
void store_frame_locate(const frame_row *r, uint32_t i, uint64_t *off, uint32_t *len,
                        int *raw, uint32_t *olen);

/* store_frame_locate() of frame I when frame I - 1, of the same row, ends at
 * START in the stream: no sum over the row (a read walks frames in order). */
void store_frame_next(const frame_row *r, uint32_t i, uint64_t start, uint64_t *off, uint32_t *len,
                      int *raw, uint32_t *olen);

/* Decodes one compressed frame: SRC (SLEN bytes) must decode to exactly
 * DLEN bytes into DST. CTX is a ZSTD_DCtx (see store_frame_dctx_new()).
 * Returns 0 or STORE_ECORRUPT; never writes past DST + DLEN. */
int store_frame_decode(void *ctx, const void *src, size_t slen, void *dst, size_t dlen);
void *store_frame_dctx_new(void);
void store_frame_dctx_free(void *ctx);

#pragma GCC visibility pop

#endif
