/* frame.c -- zstd frames and frame tables of compressed values (frame.h). */
#include "store/frame.h"
#include "store/record.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* Entry K of a table row (ENTRIES as in frame_row): store_rec_get_le32(), but
 * inline, for the loops over a row that every read of a compressed value
 * runs. */
static inline uint32_t entry_at(const unsigned char *entries, uint32_t k)
{
    uint32_t v;
    memcpy(&v, entries + 4 * (size_t)k, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

void store_frame_packed_free(frame_packed *p)
{
    if (!p)
        return;
    free(p->stream);
    free(p->rows);
    free(p->row_len);
    memset(p, 0, sizeof *p);
}

/* Fills the table rows of P from the LENS of its NFRAMES frames. */
static void pack_rows(frame_packed *p, const uint32_t *lens, size_t nframes, size_t len)
{
    uint64_t off = 0;
    for (size_t j = 0; j < p->nrows; j++) {
        unsigned char *r = p->rows + j * FRAME_ROW_MAX;
        size_t first = j * FRAME_PER_ROW;
        size_t count = nframes - first < FRAME_PER_ROW ? nframes - first : FRAME_PER_ROW;
        store_rec_le32(r, FRAME_MAGIC);
        store_rec_le32(r + 4, FRAME_SIZE);
        store_rec_le32(r + 8, (uint32_t)count);
        store_rec_le32(r + 12, (uint32_t)first);
        store_rec_le64(r + 16, len);
        store_rec_le64(r + 24, p->stream_len);
        store_rec_le64(r + 32, off);
        for (size_t k = 0; k < count; k++) {
            store_rec_le32(r + FRAME_ROW_HDR + 4 * k, lens[first + k]);
            off += lens[first + k] & ~FRAME_RAW;
        }
        p->row_len[j] = FRAME_ROW_HDR + 4 * count;
        p->stored += p->row_len[j];
    }
}

int store_frame_pack(const void *data, size_t len, frame_packed *p)
{
    const unsigned char *in = data;
    size_t nframes = (len + FRAME_SIZE - 1) / FRAME_SIZE, shrank = 0;
    uint32_t *lens = NULL;
    ZSTD_CCtx *cc = NULL;
    int rc = ENOMEM;
    memset(p, 0, sizeof *p);
    if (len < FRAME_MIN_INPUT || nframes > (size_t)UINT32_MAX / 2)
        return 1;
    p->nrows = (nframes + FRAME_PER_ROW - 1) / FRAME_PER_ROW;
    if (!(lens = malloc(nframes * sizeof *lens)) || !(cc = ZSTD_createCCtx())
        || !(p->stream = malloc(len)) || !(p->rows = malloc(p->nrows * FRAME_ROW_MAX))
        || !(p->row_len = calloc(p->nrows, sizeof *p->row_len)))
        goto out;
    /* The stream never outgrows the value: a frame that does not shrink is
     * copied raw, so LEN bytes always hold it. */
    for (size_t i = 0; i < nframes; i++) {
        size_t off = i * FRAME_SIZE, n = len - off < FRAME_SIZE ? len - off : FRAME_SIZE;
        size_t room = len - p->stream_len;
        size_t c = ZSTD_compressCCtx(cc, p->stream + p->stream_len, room < n ? room : n - 1,
                                     in + off, n, FRAME_LEVEL);
        if (!ZSTD_isError(c) && c > 0 && c < n) {
            lens[i] = (uint32_t)c;
            shrank++;
        } else {
            memcpy(p->stream + p->stream_len, in + off, n);
            lens[i] = FRAME_RAW | (uint32_t)n;
            c = n;
        }
        p->stream_len += c;
    }
    p->stored = p->stream_len;
    pack_rows(p, lens, nframes, len);
    rc = shrank && p->stored < len ? 0 : 1;
out:
    free(lens);
    ZSTD_freeCCtx(cc);
    if (rc)
        store_frame_packed_free(p);
    return rc;
}

int store_frame_row_decode(const void *buf, size_t len, uint32_t j, frame_row *r)
{
    const unsigned char *b = buf;
    uint64_t nframes, want, last, sum = 0;
    uint32_t tail;
    if (len < 4 + FRAME_ROW_HDR || len > 4 + FRAME_ROW_MAX
        || store_rec_crc32c(b + 4, len - 4) != store_rec_get_le32(b))
        return STORE_ECORRUPT;
    b += 4;
    r->frame_size = store_rec_get_le32(b + 4);
    r->count = store_rec_get_le32(b + 8);
    r->first = store_rec_get_le32(b + 12);
    r->original_size = store_rec_get_le64(b + 16);
    r->stream_len = store_rec_get_le64(b + 24);
    r->stream_off = store_rec_get_le64(b + 32);
    r->entries = b + FRAME_ROW_HDR;
    if (store_rec_get_le32(b) != FRAME_MAGIC || r->frame_size < 4096 || r->frame_size > (1u << 20)
        || (r->frame_size & (r->frame_size - 1)) || r->original_size == 0
        || r->original_size > (UINT64_C(1) << 50))
        return STORE_ECORRUPT;
    nframes = (r->original_size + r->frame_size - 1) / r->frame_size;
    if (nframes > UINT32_MAX / 2 || (uint64_t)j * FRAME_PER_ROW >= nframes)
        return STORE_ECORRUPT;
    want = nframes - (uint64_t)j * FRAME_PER_ROW;
    if (want > FRAME_PER_ROW)
        want = FRAME_PER_ROW;
    if (r->first != (uint64_t)j * FRAME_PER_ROW || r->count != want
        || len != 4 + FRAME_ROW_HDR + 4 * (size_t)r->count)
        return STORE_ECORRUPT;
    /* Every frame is frame_size long but the value's last; the sum of
     * up to FRAME_PER_ROW lengths below 2^31 cannot wrap. */
    last = nframes - 1;
    tail = (uint32_t)(r->original_size - last * r->frame_size);
    if (r->stream_off > r->stream_len)
        return STORE_ECORRUPT;
    for (uint32_t k = 0; k < r->count; k++) {
        uint32_t e = entry_at(r->entries, k), n = e & ~FRAME_RAW;
        uint32_t olen = r->first + k == last ? tail : r->frame_size;
        if ((e & FRAME_RAW) ? n != olen : (n == 0 || n >= olen))
            return STORE_ECORRUPT;
        sum += n;
    }
    return sum > r->stream_len - r->stream_off ? STORE_ECORRUPT : 0;
}

void store_frame_next(const frame_row *r, uint32_t i, uint64_t start, uint64_t *off, uint32_t *len,
                      int *raw, uint32_t *olen)
{
    uint64_t fstart = (uint64_t)i * r->frame_size;
    uint32_t e = entry_at(r->entries, i - r->first);
    *off = start;
    *len = e & ~FRAME_RAW;
    *raw = !!(e & FRAME_RAW);
    *olen = (uint32_t)(r->original_size - fstart < r->frame_size ? r->original_size - fstart
                                                                 : r->frame_size);
}

void store_frame_locate(const frame_row *r, uint32_t i, uint64_t *off, uint32_t *len,
                        int *raw, uint32_t *olen)
{
    uint64_t o = r->stream_off;
    for (uint32_t m = 0, k = i - r->first; m < k; m++)
        o += entry_at(r->entries, m) & ~FRAME_RAW;
    store_frame_next(r, i, o, off, len, raw, olen);
}

int store_frame_decode(void *ctx, const void *src, size_t slen, void *dst, size_t dlen)
{
    size_t n = ZSTD_decompressDCtx(ctx, dst, dlen, src, slen);
    return ZSTD_isError(n) || n != dlen ? STORE_ECORRUPT : 0;
}

void *store_frame_dctx_new(void)
{
    return ZSTD_createDCtx();
}

void store_frame_dctx_free(void *ctx)
{
    ZSTD_freeDCtx(ctx);
}
