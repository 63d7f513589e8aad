/* text.c -- counting characters and lines, sizes. (The cut is in cut.c.) */
#include "agentlink/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void al_text_count(const void *data, size_t len, size_t *pos, uint64_t *chars, int final)
{
    const unsigned char *s = data;
    size_t i = *pos, stop = final ? len : len < 3 ? 0 : len - 3;
    uint64_t n = *chars;
    /* With 4 bytes ahead a sequence decodes as it would in the whole
     * buffer: store_utf8_len() looks at most 4 bytes far. */
    while (i < stop) {
        size_t k = s[i] < 0x80 ? 1 : store_utf8_len(s + i, len - i);
        n++;
        i += k ? k : 1;
    }
    *pos = i;
    *chars = n;
}

void al_text_info(const void *data, size_t len, al_textinfo *info)
{
    const unsigned char *s = data;
    al_textinfo t = {0, 0, 0};
    size_t i = 0;
    while (i < len) {
        /* ASCII runs dominate real results: eight bytes at a time while no
         * byte has its high bit, counting the '\n' bytes of each word
         * exactly (a carry-free zero-byte test on word ^ "\n\n..."). */
        while (len - i >= 8) {
            const uint64_t low7 = 0x7f7f7f7f7f7f7f7fu, nl = 0x0a0a0a0a0a0a0a0au;
            uint64_t w, x;
            memcpy(&w, s + i, 8);
            if (w & ~low7)
                break;
            x = w ^ nl;
            /* One bit per '\n' byte, at bit 7 of it; summed by a multiply
             * (no popcount instruction is assumed). */
            t.lines += (((~(((x & low7) + low7) | x) & ~low7) >> 7) * 0x0101010101010101u) >> 56;
            t.chars += 8;
            i += 8;
        }
        if (i >= len)
            break;
        if (s[i] < 0x80) {
            if (s[i] == '\n')
                t.lines++;
            t.chars++;
            i++;
            continue;
        }
        size_t n = store_utf8_len(s + i, len - i);
        if (n == 0) {
            t.invalid_bytes++;
            n = 1;
        }
        t.chars++;
        i += n;
    }
    if (len > 0 && s[len - 1] != '\n')
        t.lines++;
    if (info)
        *info = t;
}

int al_size_parse(const char *text, uint64_t *out)
{
    uint64_t v = 0, mul = 1;
    const char *p = text;
    if (!text || !out || *p < '0' || *p > '9')
        return AL_ESIZE;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return AL_ESIZE;
        v = v * 10 + d;
    }
    switch (*p) {
    case '\0': break;
    case 'k': case 'K': mul = 1ull << 10; p++; break;
    case 'm': case 'M': mul = 1ull << 20; p++; break;
    case 'g': case 'G': mul = 1ull << 30; p++; break;
    default: return AL_ESIZE;
    }
    if (*p != '\0' || v == 0 || v > UINT64_MAX / mul)
        return AL_ESIZE;
    *out = v * mul;
    return 0;
}
