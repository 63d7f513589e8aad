/* utf8.c -- common_utf8_len(). */
#include "common/utf8.h"

size_t common_utf8_len(const void *p, size_t n)
{
    const unsigned char *s = p;
    unsigned c = s[0], min, cp;
    size_t len;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) { len = 2; min = 0x80; cp = c & 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) { len = 3; min = 0x800; cp = c & 0x0f; }
    else if (c >= 0xf0 && c <= 0xf4) { len = 4; min = 0x10000; cp = c & 0x07; }
    else return 0;
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}
