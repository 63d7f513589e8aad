/* record.h -- internal: the byte layout of the store's LMDB records.
 *
 * Every record is encoded little-endian with explicit widths, and every
 * decoder checks lengths before it reads, so a damaged or foreign record is
 * STORE_ECORRUPT, never a crash. Keys that must sort numerically (versions,
 * generations, sequence numbers) are big-endian.
 *
 * Databases (one LMDB environment):
 *   meta  "state"            -> rec_state
 *   meta  "codec"            -> rec_codec            (compression; may be missing)
 *   meta  "pend"/"ptmb" + version(be64) -> ns \0 key  (pending marks: pending.c)
 *   meta  "cach" + version(be64) -> size(le64) etag   (cached copies: cache.c)
 *   meta  "cstat"            -> hits, misses, copies made (le64 each; may be missing)
 *   live  ns \0 key          -> rec_entry            (live names)
 *   ver   version(be64)      -> ns \0 key            (write order: oldest first)
 *   data  version(be64) idx(be32) -> crc32c(le32) + chunk bytes (one page each)
 *         idx >= 0x80000000: frame table rows of a compressed value (frame.h)
 *   tomb  ns \0 key          -> rec_tomb             (evicted / removed names)
 *   tombq seq(be64)          -> ns \0 key            (tombstones, oldest first)
 *   log   generation(be64)   -> rec_change           (recent changes)
 */
#ifndef OFFLOADFS_STORE_RECORD_H
#define OFFLOADFS_STORE_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include "store/store.h"

#define REC_MAGIC 0x4f46534cu /* "OFSL" */
#define REC_FORMAT 1u
/* A store that may hold compressed values (frame.h): set at the first
 * compressed write, so code that predates compression refuses the store
 * (STORE_EVERSION) rather than hand out compressed bytes. Format 1 stores
 * stay format 1 until then; both decode. */
#define REC_FORMAT_FRAMES 2u

/* next_version starts at 2 and only store_put() advances it, by exactly
 * one per committed put: next_version - 2 is the count of puts ever made
 * (store_stats.puts). Anything else that takes a version must count itself
 * out of that figure. */
typedef struct rec_state {
    uint64_t format, chunk, max_total, max_result, max_tombs, next_version,
        gen, live_bytes, live_entries, evictions, removals, tombs, tomb_seq;
    /* Not in the state record but in "codec" (rec_codec), kept next to it
     * by store_state_load()/store_state_save(): */
    uint64_t stored;      /* bytes the live values occupy (compressed) */
    uint32_t compression; /* STORE_COMPRESS_* for later writes */
} rec_state;
#define REC_STATE_LEN (14u * 8u)

/* Encodes S into OUT (REC_STATE_LEN bytes). */
void store_rec_state_encode(const rec_state *s, unsigned char *out);
/* Decodes; returns 0, STORE_ECORRUPT (bad length or magic) or
 * STORE_EVERSION (another format). */
int store_rec_state_decode(const void *buf, size_t len, rec_state *s);

/* The codec record: compression(le32) reserved(le32) stored(le64). A
 * missing one (a store made before compression) means zstd for later
 * writes; in a format-1 store, stored is always the live bytes (every
 * value raw), whatever the record says. */
#define REC_CODEC_LEN 16u
void store_rec_codec_encode(const rec_state *s, unsigned char *out);
/* Fills S's compression and stored; 0 or STORE_ECORRUPT. */
int store_rec_codec_decode(const void *buf, size_t len, rec_state *s);

#define REC_ENTRY_FIXED 34u
/* Encodes E into OUT (REC_ENTRY_FIXED + strlen(tool) bytes); returns the length. */
size_t store_rec_entry_encode(const store_entry *e, unsigned char *out);
/* Decodes; returns 0 or STORE_ECORRUPT. */
int store_rec_entry_decode(const void *buf, size_t len, store_entry *e);

typedef struct rec_tomb {
    uint64_t version, when_ns, seq;
    int reason;
} rec_tomb;
#define REC_TOMB_LEN 25u
void store_rec_tomb_encode(const rec_tomb *t, unsigned char *out);
int store_rec_tomb_decode(const void *buf, size_t len, rec_tomb *t);

/* A change: OLD and NEW versions (0: none) followed by the name ns \0 key.
 * store_rec_change_decode points *NAME into BUF (not copied). */
#define REC_CHANGE_FIXED 16u
int store_rec_change_decode(const void *buf, size_t len, uint64_t *old_version,
                            uint64_t *new_version, const char **name, size_t *namelen);

/* Splits a name (ns \0 key, LEN bytes) into its parts, checking that both
 * are present. Returns 0 or STORE_ECORRUPT. */
int store_rec_name_split(const char *name, size_t len, const char **ns,
                         size_t *nslen, const char **key, size_t *keylen);

/* Bytes in front of each chunk's payload: its CRC-32C, little-endian. */
#define REC_CHUNK_HDR 4u
/* CRC-32C (Castagnoli) of N bytes at DATA. */
uint32_t store_rec_crc32c(const void *data, size_t n);

void store_rec_be64(unsigned char *out, uint64_t v);
uint64_t store_rec_get_be64(const void *p);
void store_rec_be32(unsigned char *out, uint32_t v);
uint32_t store_rec_get_be32(const void *p);
void store_rec_le64(unsigned char *out, uint64_t v);
void store_rec_le32(void *out, uint32_t v);
uint32_t store_rec_get_le32(const void *p);
uint64_t store_rec_get_le64(const void *p);

#endif
