/* fuzz_frame.c -- libFuzzer target: the frame codec of compressed values
 * (store/frame.h). The first byte picks what the rest is:
 *   0  a value: packed, then every table row decoded and every frame
 *      decoded again must give back exactly the value;
 *   1  a frame table row (its CRC is put in front, so the fuzzer reaches
 *      the checks behind it): decoded for row 0..3; when accepted, every
 *      frame it names lies inside the stream and the row;
 *   2  a zstd frame: two bytes of original length, then the frame; the
 *      decoder must refuse it or give exactly that many bytes, never write
 *      past them. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/frame.h"
#include "store/record.h"
#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(const uint8_t *p, size_t len)
{
    frame_packed pk;
    void *dctx = store_frame_dctx_new();
    unsigned char *back = malloc(len + 1), row[4 + FRAME_ROW_MAX];
    if (!dctx || !back)
        abort();
    if (store_frame_pack(p, len, &pk) == 0) {
        for (size_t j = 0; j < pk.nrows; j++) {
            frame_row r;
            store_rec_le32(row, store_rec_crc32c(pk.rows + j * FRAME_ROW_MAX, pk.row_len[j]));
            memcpy(row + 4, pk.rows + j * FRAME_ROW_MAX, pk.row_len[j]);
            if (store_frame_row_decode(row, 4 + pk.row_len[j], (uint32_t)j, &r))
                __builtin_trap();
            for (uint32_t i = r.first; i < r.first + r.count; i++) {
                uint64_t off;
                uint32_t slen, olen;
                int raw;
                store_frame_locate(&r, i, &off, &slen, &raw, &olen);
                if (off + slen > pk.stream_len)
                    __builtin_trap();
                unsigned char *dst = back + (size_t)i * FRAME_SIZE;
                if (raw)
                    memcpy(dst, pk.stream + off, slen);
                else if (store_frame_decode(dctx, pk.stream + off, slen, dst, olen))
                    __builtin_trap();
            }
        }
        if (memcmp(back, p, len))
            __builtin_trap();
        store_frame_packed_free(&pk);
    }
    free(back);
    store_frame_dctx_free(dctx);
}

static void table_row(const uint8_t *p, size_t len)
{
    unsigned char *row = malloc(len + 4);
    frame_row r;
    if (!row)
        abort();
    store_rec_le32(row, store_rec_crc32c(p, len));
    memcpy(row + 4, p, len);
    for (uint32_t j = 0; j < 4; j++) {
        if (store_frame_row_decode(row, len + 4, j, &r))
            continue;
        for (uint32_t i = r.first; i < r.first + r.count; i++) {
            uint64_t off;
            uint32_t slen, olen;
            int raw;
            store_frame_locate(&r, i, &off, &slen, &raw, &olen);
            if (off + slen > r.stream_len || olen == 0 || olen > r.frame_size)
                __builtin_trap();
        }
    }
    free(row);
}

static void one_frame(const uint8_t *p, size_t len)
{
    void *dctx = store_frame_dctx_new();
    size_t dlen;
    unsigned char *dst;
    if (!dctx)
        abort();
    if (len < 2) {
        store_frame_dctx_free(dctx);
        return;
    }
    dlen = (size_t)p[0] << 8 | p[1];
    dst = malloc(dlen + 1); /* ASan catches a write past DLEN */
    if (!dst)
        abort();
    int rc = store_frame_decode(dctx, p + 2, len - 2, dst, dlen);
    if (rc != 0 && rc != STORE_ECORRUPT)
        __builtin_trap();
    free(dst);
    store_frame_dctx_free(dctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    switch (data[0] % 3) {
    case 0: round_trip(data + 1, size - 1); break;
    case 1: table_row(data + 1, size - 1); break;
    default: one_frame(data + 1, size - 1); break;
    }
    return 0;
}
