/* record.c -- encoding and checked decoding of the store's records. */
#include "store/record.h"

#include <string.h>

void store_rec_be64(unsigned char *out, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        out[i] = (unsigned char)(v & 0xff);
}

uint64_t store_rec_get_be64(const void *p)
{
    const unsigned char *b = p;
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | b[i];
    return v;
}

void store_rec_be32(unsigned char *out, uint32_t v)
{
    for (int i = 3; i >= 0; i--, v >>= 8)
        out[i] = (unsigned char)(v & 0xff);
}

uint32_t store_rec_get_be32(const void *p)
{
    const unsigned char *b = p;
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

void store_rec_le64(unsigned char *out, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        out[i] = (unsigned char)(v & 0xff);
}

void store_rec_le32(void *out, uint32_t v)
{
    unsigned char *b = out;
    for (int i = 0; i < 4; i++, v >>= 8)
        b[i] = (unsigned char)(v & 0xff);
}

uint32_t store_rec_get_le32(const void *p)
{
    const unsigned char *b = p;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

uint64_t store_rec_get_le64(const void *p)
{
    const unsigned char *b = p;
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | b[i];
    return v;
}

/* The state's fields in their stored order, after the magic. */
#define STATE_FIELDS(s)                                                        \
    &(s)->format, &(s)->chunk, &(s)->max_total, &(s)->max_result,              \
        &(s)->max_tombs, &(s)->next_version, &(s)->gen, &(s)->live_bytes,      \
        &(s)->live_entries, &(s)->evictions, &(s)->removals, &(s)->tombs,      \
        &(s)->tomb_seq

void store_rec_state_encode(const rec_state *s, unsigned char *out)
{
    const uint64_t *f[] = {STATE_FIELDS(s)};
    store_rec_le64(out, REC_MAGIC);
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        store_rec_le64(out + 8 * (i + 1), *f[i]);
}

int store_rec_state_decode(const void *buf, size_t len, rec_state *s)
{
    const unsigned char *b = buf;
    uint64_t *f[] = {STATE_FIELDS(s)};
    if (len < 16 || store_rec_get_le64(b) != REC_MAGIC)
        return STORE_ECORRUPT;
    if (store_rec_get_le64(b + 8) != REC_FORMAT && store_rec_get_le64(b + 8) != REC_FORMAT_FRAMES)
        return STORE_EVERSION;
    if (len != REC_STATE_LEN)
        return STORE_ECORRUPT;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        *f[i] = store_rec_get_le64(b + 8 * (i + 1));
    if (s->chunk < 64 || s->chunk > (1u << 20) || s->max_result > s->max_total
        || s->next_version < 2)
        return STORE_ECORRUPT;
    return 0;
}

void store_rec_codec_encode(const rec_state *s, unsigned char *out)
{
    store_rec_le32(out, s->compression);
    store_rec_le32(out + 4, 0);
    store_rec_le64(out + 8, s->stored);
}

int store_rec_codec_decode(const void *buf, size_t len, rec_state *s)
{
    const unsigned char *b = buf;
    if (len != REC_CODEC_LEN || store_rec_get_le32(b) > STORE_COMPRESS_ZSTD || store_rec_get_le32(b + 4))
        return STORE_ECORRUPT;
    s->compression = store_rec_get_le32(b);
    s->stored = store_rec_get_le64(b + 8);
    return 0;
}

size_t store_rec_entry_encode(const store_entry *e, unsigned char *out)
{
    size_t toollen = e->has_tool ? strlen(e->tool) : 0;
    store_rec_le64(out, e->version);
    store_rec_le64(out + 8, e->size);
    store_rec_le64(out + 16, e->created_ns);
    store_rec_le64(out + 24, e->original_size);
    out[32] = (unsigned char)((e->truncated ? 1 : 0) | (e->has_tool ? 2 : 0));
    out[33] = (unsigned char)toollen;
    memcpy(out + REC_ENTRY_FIXED, e->tool, toollen);
    return REC_ENTRY_FIXED + toollen;
}

int store_rec_entry_decode(const void *buf, size_t len, store_entry *e)
{
    const unsigned char *b = buf;
    if (len < REC_ENTRY_FIXED || len != REC_ENTRY_FIXED + b[33] || (b[32] & ~3u))
        return STORE_ECORRUPT;
    e->version = store_rec_get_le64(b);
    e->size = store_rec_get_le64(b + 8);
    e->created_ns = store_rec_get_le64(b + 16);
    e->original_size = store_rec_get_le64(b + 24);
    e->truncated = b[32] & 1;
    e->has_tool = (b[32] >> 1) & 1;
    if (e->version < 2 || (!e->has_tool && b[33] != 0)
        || memchr(b + REC_ENTRY_FIXED, '\0', b[33])) /* found by fuzz_record */
        return STORE_ECORRUPT;
    memcpy(e->tool, b + REC_ENTRY_FIXED, b[33]);
    e->tool[b[33]] = '\0';
    return 0;
}

void store_rec_tomb_encode(const rec_tomb *t, unsigned char *out)
{
    store_rec_le64(out, t->version);
    store_rec_le64(out + 8, t->when_ns);
    store_rec_le64(out + 16, t->seq);
    out[24] = (unsigned char)t->reason;
}

int store_rec_tomb_decode(const void *buf, size_t len, rec_tomb *t)
{
    const unsigned char *b = buf;
    if (len != REC_TOMB_LEN)
        return STORE_ECORRUPT;
    t->version = store_rec_get_le64(b);
    t->when_ns = store_rec_get_le64(b + 8);
    t->seq = store_rec_get_le64(b + 16);
    t->reason = b[24];
    if (t->reason != STORE_REASON_EVICTED && t->reason != STORE_REASON_REMOVED)
        return STORE_ECORRUPT;
    return 0;
}

int store_rec_change_decode(const void *buf, size_t len, uint64_t *old_version,
                            uint64_t *new_version, const char **name, size_t *namelen)
{
    const unsigned char *b = buf;
    if (len < REC_CHANGE_FIXED + 3)
        return STORE_ECORRUPT;
    *old_version = store_rec_get_le64(b);
    *new_version = store_rec_get_le64(b + 8);
    *name = (const char *)b + REC_CHANGE_FIXED;
    *namelen = len - REC_CHANGE_FIXED;
    return 0;
}

int store_rec_name_split(const char *name, size_t len, const char **ns,
                         size_t *nslen, const char **key, size_t *keylen)
{
    const char *nul = memchr(name, '\0', len);
    if (!nul || nul == name || (size_t)(nul - name) + 1 >= len
        || (size_t)(nul - name) > STORE_NAME_MAX
        || len - (size_t)(nul - name) - 1 > STORE_NAME_MAX)
        return STORE_ECORRUPT;
    *ns = name;
    *nslen = (size_t)(nul - name);
    *key = nul + 1;
    *keylen = len - *nslen - 1;
    if (memchr(*key, '\0', *keylen))
        return STORE_ECORRUPT;
    return 0;
}
