/* content.h -- self-describing test values for the fault and load tests.
 *
 * Every value the writers store starts with one header line
 *     "OFSL key=KEY seed=SEED len=LEN\n"
 * followed by bytes that are a pure function of (SEED, offset). A reader
 * that gets any bytes of a value -- through the mount, at any offset --
 * can tell from the header alone what every other byte must be, so a torn
 * read (bytes of two versions), a wrong offset, bytes of another key or a
 * short read are all caught without asking the writers. A value cut by
 * agentlink (longer than max_result_bytes) is checked by cutting the
 * regenerated original the same way (al_cut is deterministic).
 */
#ifndef OFFLOADFS_TEST_CONTENT_H
#define OFFLOADFS_TEST_CONTENT_H

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline uint64_t ct_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Byte I of the body for SEED (offsets count from the start of the value,
 * header included, so every byte position has one expected value). */
static inline unsigned char ct_byte(uint64_t seed, uint64_t i)
{
    return (unsigned char)(ct_mix(seed ^ ct_mix(i >> 3)) >> (8 * (i & 7)));
}

/* Writes the value of (KEY, SEED) of total length LEN into a new buffer
 * (yours, free()); LEN is raised to the header's length when shorter.
 * *OUTLEN gets the length. */
static inline unsigned char *ct_make(const char *key, uint64_t seed, size_t len,
                                     size_t *outlen)
{
    char hdr[400];
    int h = snprintf(hdr, sizeof hdr, "OFSL key=%s seed=%" PRIu64 " len=", key, seed);
    /* The length field counts itself: try until it is stable. */
    size_t total = len, hl = 0;
    for (int i = 0; i < 3; i++) {
        char num[32];
        int nl = snprintf(num, sizeof num, "%zu\n", total);
        hl = (size_t)h + (size_t)nl;
        if (total < hl)
            total = hl;
    }
    unsigned char *b = malloc(total ? total : 1);
    if (!b)
        return NULL;
    snprintf(hdr + h, sizeof hdr - (size_t)h, "%zu\n", total);
    hl = strlen(hdr);
    memcpy(b, hdr, hl);
    for (size_t i = hl; i < total; i++)
        b[i] = ct_byte(seed, i);
    *outlen = total;
    return b;
}

/* Parses the header at the start of BUF (N bytes). Returns 0 and fills
 * KEY (256 bytes), *SEED, *LEN; -1 when there is no valid header. */
static inline int ct_parse(const unsigned char *buf, size_t n, char *key,
                           uint64_t *seed, uint64_t *len)
{
    const unsigned char *nl = memchr(buf, '\n', n < 400 ? n : 400);
    char line[400];
    size_t l;
    if (!nl || n < 5 || memcmp(buf, "OFSL ", 5))
        return -1;
    l = (size_t)(nl - buf);
    memcpy(line, buf, l);
    line[l] = '\0';
    const char *k = strstr(line, " key="), *s = strstr(line, " seed="), *z = strstr(line, " len=");
    if (!k || !s || !z || s < k || z < s || (size_t)(s - k - 5) > 255)
        return -1;
    memcpy(key, k + 5, (size_t)(s - k - 5));
    key[s - k - 5] = '\0';
    *seed = strtoull(s + 6, NULL, 10);
    *len = strtoull(z + 5, NULL, 10);
    return 0;
}

#endif
