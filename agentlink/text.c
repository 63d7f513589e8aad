/* text.c -- counting characters and lines, the head-and-tail cut, sizes. */
#include "agentlink/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Moves POS back to the start of the character it falls in (at most three
 * continuation bytes, so runs of stray 0x80-0xBF bytes cost nothing). */
static size_t char_start_back(const unsigned char *s, size_t pos)
{
    for (unsigned k = 0; k < 3 && pos > 0 && (s[pos] & 0xc0) == 0x80; k++)
        pos--;
    return pos;
}

static size_t char_start_fwd(const unsigned char *s, size_t len, size_t pos)
{
    for (unsigned k = 0; k < 3 && pos < len && (s[pos] & 0xc0) == 0x80; k++)
        pos++;
    return pos;
}

#define SNAP_WINDOW 4096u
#define MARKER_FMT "[... offloadfs: %zu bytes cut here ...]\n"
#define MIN_CUT_ROOM 64u

int al_cut(const void *data, size_t len, uint64_t max, void **out,
           size_t *outlen)
{
    const unsigned char *s = data;
    size_t room, head, tail_start, win, mlen, cut, total;
    int nl_before;
    char marker[96];
    unsigned char *o;

    if (!out || !outlen || max == 0)
        return EINVAL;
    *out = NULL;
    *outlen = len;
    if ((uint64_t)len <= max)
        return 0;

    if (max < MIN_CUT_ROOM) {
        /* No room for a marker: the tail is what matters most. */
        size_t start = char_start_fwd(s, len, len - (size_t)max);
        o = malloc(len - start + 1);
        if (!o)
            return ENOMEM;
        memcpy(o, s + start, len - start);
        o[len - start] = '\0';
        *out = o;
        *outlen = len - start;
        return 0;
    }

    /* The marker's longest form: '\n', the text with as many digits as LEN. */
    mlen = 1 + (size_t)snprintf(NULL, 0, MARKER_FMT, len);
    room = (size_t)max - mlen;
    head = char_start_back(s, room / 4);
    tail_start = char_start_fwd(s, len, len - (room - room / 4));

    /* Prefer whole lines at both edges when a line end is near. */
    win = room / 8 < SNAP_WINDOW ? room / 8 : SNAP_WINDOW;
    for (size_t i = head; i > 0 && head - i < win; i--)
        if (s[i - 1] == '\n') {
            head = i;
            break;
        }
    for (size_t i = tail_start; i < len && i - tail_start < win; i++)
        if (s[i] == '\n') {
            if (i + 1 < len)
                tail_start = i + 1;
            break;
        }
    cut = tail_start - head;
    nl_before = head > 0 && s[head - 1] != '\n';
    snprintf(marker, sizeof marker, MARKER_FMT, cut);
    mlen = strlen(marker);
    total = head + (size_t)nl_before + mlen + (len - tail_start);
    o = malloc(total + 1);
    if (!o)
        return ENOMEM;
    memcpy(o, s, head);
    if (nl_before)
        o[head] = '\n';
    memcpy(o + head + (size_t)nl_before, marker, mlen);
    memcpy(o + head + (size_t)nl_before + mlen, s + tail_start, len - tail_start);
    o[total] = '\0';
    *out = o;
    *outlen = total;
    return 0;
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
