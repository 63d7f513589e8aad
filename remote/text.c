/* text.c -- the little text handling S3 requests and answers need:
 * elements of the (flat, known) XML of listings and errors, entity
 * decoding, percent encoding and decoding, and the escaping of any text
 * shown in a message. A leaf (over common_buf). Not a general XML parser: S3
 * answers have no attributes on the elements read here, no CDATA and no
 * nesting of a tag in itself. */
#include "remote/remote_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int remote_xml_next(const char **p, const char *end, const char *tag, const char **s, const char **e)
{
    char open[64], close[64];
    int no = snprintf(open, sizeof open, "<%s>", tag);
    int nc = snprintf(close, sizeof close, "</%s>", tag);
    if (no <= 0 || nc <= 0 || (size_t)no >= sizeof open || (size_t)nc >= sizeof close)
        return 0;
    const char *a = memmem(*p, (size_t)(end - *p), open, (size_t)no);
    if (!a)
        return 0;
    a += no;
    const char *b = memmem(a, (size_t)(end - a), close, (size_t)nc);
    if (!b)
        return 0;
    *s = a;
    *e = b;
    *p = b + nc;
    return 1;
}

/* Appends the UTF-8 form of code point CP to OUT; returns bytes written. */
static size_t utf8_put(char *out, unsigned long cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Decodes the entity at S (after '&') ending before ';' at SEMI into OUT;
 * bytes written, 0 when unknown. */
static size_t entity(const char *s, const char *semi, char *out)
{
    static const struct { const char *name; char ch; } named[] = {
        {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
    size_t n = (size_t)(semi - s);
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (strlen(named[i].name) == n && memcmp(s, named[i].name, n) == 0) {
            out[0] = named[i].ch;
            return 1;
        }
    if (n >= 2 && s[0] == '#') {
        char *end;
        unsigned long cp = s[1] == 'x' ? strtoul(s + 2, &end, 16) : strtoul(s + 1, &end, 10);
        if (end == semi && cp > 0 && cp <= 0x10ffff)
            return utf8_put(out, cp);
    }
    return 0;
}

char *remote_xml_take(const char **p, const char *end, const char *tag, int *oom)
{
    const char *s, *e;
    if (!remote_xml_next(p, end, tag, &s, &e))
        return NULL;
    char *out = malloc((size_t)(e - s) + 1), *o = out;
    if (!out) {
        *oom = 1;
        return NULL;
    }
    while (s < e) {
        const char *semi = *s == '&' ? memchr(s, ';', (size_t)(e - s)) : NULL;
        size_t k = semi && semi - s <= 12 ? entity(s + 1, semi, o) : 0;
        if (k) {
            o += k;
            s = semi + 1;
        } else {
            *o++ = *s++;
        }
    }
    *o = '\0';
    return out;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

int remote_enc_add(common_buf *b, const char *s, int keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        int plain = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
                    ch == '-' || ch == '.' || ch == '_' || ch == '~' || (keep_slash && ch == '/');
        char e[3] = {'%', hex[ch >> 4], hex[ch & 15]};
        common_buf_add(b, plain ? s : e, plain ? 1 : 3);
    }
    return b->failed ? ENOMEM : 0;
}


char *remote_enc_decode(const char *s, size_t n)
{
    char *out = malloc(n + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        int hi, lo;
        if (s[i] == '%' && i + 2 < n && (hi = hexval(s[i + 1])) >= 0 && (lo = hexval(s[i + 2])) >= 0 && (hi || lo)) {
            *o++ = (char)(hi * 16 + lo);
            i += 2;
        } else {
            *o++ = s[i];
        }
    }
    *o = '\0';
    return out;
}

/* The code point of the UTF-8 sequence at S (N bytes left) and its length
 * in *LEN; -1 when the bytes are not well-formed UTF-8 (overlong forms,
 * surrogates and values past U+10FFFF included). */
static long utf8_get(const unsigned char *s, size_t n, size_t *len)
{
    static const long min[] = {0, 0, 0x80, 0x800, 0x10000};
    size_t k = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
    if (s[0] >= 0xf5 || k == 0 || k > n)
        return -1;
    long cp = s[0] & (0x7f >> k);
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return -1;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return -1;
    *len = k;
    return cp;
}

/* Code points a terminal or a log viewer acts on rather than shows: C1
 * controls, the line and paragraph separators and the bidirectional
 * overrides, which can make a log line read as another. */
static int cp_hidden(long cp)
{
    return (cp >= 0x80 && cp <= 0x9f) || cp == 0x200e || cp == 0x200f ||
           (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

size_t remote_text_escape(char *out, size_t cap, const char *in)
{
    const unsigned char *s = (const unsigned char *)in;
    size_t o = 0, n = strlen(in);
    if (cap == 0)
        return 0;
    for (size_t i = 0; i < n;) {
        char e[16];
        size_t k = 1, len;
        long cp = s[i] < 0x80 ? s[i] : utf8_get(s + i, n - i, &k);
        if (cp == '\\')
            len = (size_t)snprintf(e, sizeof e, "\\\\");
        else if (cp == '\n' || cp == '\r' || cp == '\t')
            len = (size_t)snprintf(e, sizeof e, "\\%c", cp == '\n' ? 'n' : cp == '\r' ? 'r' : 't');
        else if (cp < 0x20 || cp == 0x7f) { /* -1: a byte that is not UTF-8 */
            len = (size_t)snprintf(e, sizeof e, "\\x%02x", s[i]);
            k = 1;
        } else if (cp_hidden(cp))
            len = (size_t)snprintf(e, sizeof e, "\\u%04lx", (unsigned long)cp);
        else
            len = 0;
        const char *src = len ? e : (const char *)s + i;
        if (!len)
            len = k;
        if (o + len >= cap)
            break; /* never half an escape or half a character */
        memcpy(out + o, src, len);
        o += len;
        i += k;
    }
    out[o] = '\0';
    return o;
}
