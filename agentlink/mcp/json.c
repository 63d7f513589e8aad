/* json.c -- the proxy's JSON scanner and string codec.
 *
 * Why not cJSON here: a message the proxy passes on must reach the other
 * side byte for byte, and one it rewrites must keep every field it does
 * not touch exactly as sent (cJSON prints numbers as doubles: an id of
 * 2^53+1 would come out changed). So the rewriter works on byte spans
 * found by this scanner and splices; nothing is parsed into a tree. The
 * scanner never allocates and follows nesting with a counter and a small
 * stack of brackets, not with recursion, so no input can exhaust the
 * stack. */
#include "agentlink/mcp/mcp.h"
#include "common/buf.h"
#include "store/store.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

size_t mcp_json_ws(const char *s, size_t n, size_t pos)
{
    while (pos < n && (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' || s[pos] == '\r'))
        pos++;
    return pos;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The first offset at or after I where S holds '"', '\\' or a control
 * byte (or N): sixteen or eight bytes at a time, as the plain bytes of a
 * long text are nearly all of a large message. The word tests may report a byte
 * that is none of those (never miss one): the byte loop then decides. */
static size_t plain_run(const char *s, size_t i, size_t n)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
#ifdef __SSE2__
    /* Sixteen at a time where the CPU has SSE2 (every x86-64). */
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
    const __m128i ctl = _mm_set1_epi8(0x1f);
    while (n - i >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash)),
                                   _mm_cmpeq_epi8(_mm_max_epu8(x, ctl), ctl));
        int m = _mm_movemask_epi8(hit);
        if (m)
            return i + (size_t)__builtin_ctz((unsigned)m);
        i += 16;
    }
#endif
    while (n - i >= 8) {
        uint64_t w, q, b;
        memcpy(&w, s + i, 8);
        q = w ^ (ones * '"');
        b = w ^ (ones * '\\');
        if (((q - ones) & ~q & highs) | ((b - ones) & ~b & highs) |
            ((w - ones * 0x20) & ~w & highs))
            break;
        i += 8;
    }
    while (i < n && s[i] != '"' && s[i] != '\\' && (unsigned char)s[i] >= 0x20)
        i++;
    return i;
}

/* Skips the string token at s[*pos] == '"'. */
static int skip_string(const char *s, size_t n, size_t *pos)
{
    size_t i = *pos + 1;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"') {
            *pos = i + 1;
            return 0;
        }
        if (c < 0x20)
            return EINVAL;
        if (c == '\\') {
            if (i + 1 >= n)
                return EINVAL;
            switch (s[i + 1]) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                i += 2;
                break;
            case 'u':
                if (i + 6 > n)
                    return EINVAL;
                for (size_t k = 2; k < 6; k++)
                    if (hexval(s[i + k]) < 0)
                        return EINVAL;
                i += 6;
                break;
            default:
                return EINVAL;
            }
            continue;
        }
        /* Plain bytes: jump to the next quote, backslash or control. */
        i = plain_run(s, i + 1, n);
    }
    return EINVAL;
}

static int isdigit_(char c)
{
    return c >= '0' && c <= '9';
}

static int skip_number(const char *s, size_t n, size_t *pos)
{
    size_t i = *pos;
    if (i < n && s[i] == '-')
        i++;
    if (i >= n || !isdigit_(s[i]))
        return EINVAL;
    if (s[i] == '0')
        i++;
    else
        while (i < n && isdigit_(s[i]))
            i++;
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || !isdigit_(s[i]))
            return EINVAL;
        while (i < n && isdigit_(s[i]))
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= n || !isdigit_(s[i]))
            return EINVAL;
        while (i < n && isdigit_(s[i]))
            i++;
    }
    *pos = i;
    return 0;
}

static int skip_word(const char *s, size_t n, size_t *pos, const char *w)
{
    size_t k = strlen(w);
    if (n - *pos < k || memcmp(s + *pos, w, k) != 0)
        return EINVAL;
    *pos += k;
    return 0;
}

/* A scalar: string, number or literal. */
static int skip_scalar(const char *s, size_t n, size_t *pos)
{
    switch (s[*pos]) {
    case '"': return skip_string(s, n, pos);
    case 't': return skip_word(s, n, pos, "true");
    case 'f': return skip_word(s, n, pos, "false");
    case 'n': return skip_word(s, n, pos, "null");
    default: return skip_number(s, n, pos);
    }
}

/* Skips a member's key at *POS, its colon and the white space after it;
 * *KEY_END (may be NULL) gets where the key's string token ends.
 * Returns 0, or EINVAL when no key and colon stand there. */
static int skip_key(const char *s, size_t n, size_t *pos, size_t *key_end)
{
    size_t i = *pos;
    if (i >= n || s[i] != '"' || skip_string(s, n, &i))
        return EINVAL;
    if (key_end)
        *key_end = i;
    i = mcp_json_ws(s, n, i);
    if (i >= n || s[i] != ':')
        return EINVAL;
    *pos = mcp_json_ws(s, n, i + 1);
    return 0;
}

int mcp_json_skip(const char *s, size_t n, size_t *pos)
{
    /* The open brackets, one bit each (1: object), as deep as allowed. */
    unsigned char stack[(MCP_JSON_DEPTH + 7) / 8];
    size_t depth = 0, i = mcp_json_ws(s, n, *pos);
    int rc;

    for (;;) {
        /* Here a value is expected. */
        if (i >= n)
            return EINVAL;
        if (s[i] == '{' || s[i] == '[') {
            int obj = s[i] == '{';
            if (depth >= MCP_JSON_DEPTH)
                return E2BIG;
            if (obj)
                stack[depth / 8] = (unsigned char)(stack[depth / 8] | (1u << (depth % 8)));
            else
                stack[depth / 8] = (unsigned char)(stack[depth / 8] & ~(1u << (depth % 8)));
            depth++;
            i = mcp_json_ws(s, n, i + 1);
            if (i < n && s[i] == (obj ? '}' : ']')) {
                i++;
                depth--;
                goto after_value;
            }
            if (obj && skip_key(s, n, &i, NULL))
                return EINVAL;
            continue;
        }
        if ((rc = skip_scalar(s, n, &i)))
            return rc;
    after_value:
        /* After a value: a comma, a closing bracket, or the end. */
        for (;;) {
            int obj;
            if (depth == 0) {
                *pos = i;
                return 0;
            }
            obj = (stack[(depth - 1) / 8] >> ((depth - 1) % 8)) & 1;
            i = mcp_json_ws(s, n, i);
            if (i >= n)
                return EINVAL;
            if (s[i] == (obj ? '}' : ']')) {
                i++;
                depth--;
                continue;
            }
            if (s[i] != ',')
                return EINVAL;
            i = mcp_json_ws(s, n, i + 1);
            if (obj && skip_key(s, n, &i, NULL))
                return EINVAL;
            break;
        }
    }
}

int mcp_json_valid(const char *s, size_t n)
{
    size_t pos = 0;
    if (mcp_json_skip(s, n, &pos))
        return 0;
    return mcp_json_ws(s, n, pos) == n;
}

int mcp_json_iter_begin(mcp_json_iter *it, const char *s, size_t n, size_t pos)
{
    pos = mcp_json_ws(s, n, pos);
    memset(it, 0, sizeof *it);
    if (pos >= n || (s[pos] != '{' && s[pos] != '['))
        return EINVAL;
    it->s = s;
    it->n = n;
    it->close = s[pos] == '{' ? '}' : ']';
    it->pos = mcp_json_ws(s, n, pos + 1);
    if (it->pos < n && s[it->pos] == it->close)
        it->done = 1;
    return 0;
}

int mcp_json_iter_next(mcp_json_iter *it, size_t *ks, size_t *ke, size_t *vs, size_t *ve)
{
    const char *s = it->s;
    size_t n = it->n, i = it->pos;
    if (it->done)
        return 0;
    *ks = *ke = 0;
    if (it->close == '}') {
        *ks = i;
        if (skip_key(s, n, &i, ke))
            return -1;
    }
    *vs = i;
    if (mcp_json_skip(s, n, &i))
        return -1;
    *ve = i;
    i = mcp_json_ws(s, n, i);
    if (i < n && s[i] == ',') {
        it->pos = mcp_json_ws(s, n, i + 1);
    } else if (i < n && s[i] == it->close) {
        it->pos = i;
        it->done = 1;
    } else {
        it->done = 1;
        return -1;
    }
    return 1;
}

int mcp_json_string_is(const char *s, size_t n, const char *name)
{
    size_t k = strlen(name);
    common_buf b = {0};
    int eq;
    if (n < 2 || s[0] != '"')
        return 0;
    if (!memchr(s, '\\', n)) /* the common case: no escape */
        return n == k + 2 && memcmp(s + 1, name, k) == 0;
    if (mcp_json_string_decode(s, n, &b)) {
        common_buf_release(&b);
        return 0;
    }
    eq = b.len == k && memcmp(b.p, name, k) == 0;
    common_buf_release(&b);
    return eq;
}

int mcp_json_member(const char *s, size_t n, size_t pos, const char *name, size_t *vs,
                    size_t *ve)
{
    mcp_json_iter it;
    size_t ks, ke, a, b;
    int r, found = 0;
    pos = mcp_json_ws(s, n, pos);
    if (pos >= n || s[pos] != '{' || mcp_json_iter_begin(&it, s, n, pos))
        return EINVAL;
    while ((r = mcp_json_iter_next(&it, &ks, &ke, &a, &b)) == 1)
        if (mcp_json_string_is(s + ks, ke - ks, name)) { /* the last one wins */
            *vs = a;
            *ve = b;
            found = 1;
        }
    if (r < 0)
        return EINVAL;
    return found ? 0 : ENOENT;
}

int mcp_json_members(const char *s, size_t n, size_t pos, const char *const *names,
                     size_t count, mcp_json_span *spans, size_t *end)
{
    mcp_json_iter it;
    size_t ks, ke, a, b;
    int r;
    for (size_t i = 0; i < count; i++)
        spans[i].start = spans[i].end = 0;
    pos = mcp_json_ws(s, n, pos);
    if (pos >= n || s[pos] != '{' || mcp_json_iter_begin(&it, s, n, pos))
        return EINVAL;
    while ((r = mcp_json_iter_next(&it, &ks, &ke, &a, &b)) == 1)
        for (size_t i = 0; i < count; i++)
            if (mcp_json_string_is(s + ks, ke - ks, names[i])) { /* the last one wins */
                spans[i].start = a;
                spans[i].end = b;
                break;
            }
    if (r < 0)
        return EINVAL;
    if (end) /* just past the closing brace */
        *end = it.pos + 1;
    return 0;
}

static void add_utf8(common_buf *b, unsigned cp)
{
    char u[4];
    size_t k;
    if (cp < 0x80) {
        u[0] = (char)cp;
        k = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3f));
        k = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        k = 3;
    } else {
        u[0] = (char)(0xf0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[3] = (char)(0x80 | (cp & 0x3f));
        k = 4;
    }
    common_buf_add(b, u, k);
}

static unsigned hex4(const char *p)
{
    return (unsigned)(hexval(p[0]) << 12 | hexval(p[1]) << 8 | hexval(p[2]) << 4 | hexval(p[3]));
}

int mcp_json_string_decode(const char *s, size_t n, common_buf *b)
{
    size_t i = 1, end = n - 1, pos = 0;
    if (n < 2 || s[0] != '"' || skip_string(s, n, &pos) || pos != n)
        return EINVAL;
    while (i < end) {
        const char *bs = memchr(s + i, '\\', end - i);
        size_t run = bs ? (size_t)(bs - (s + i)) : end - i;
        common_buf_add(b, s + i, run);
        i += run;
        if (i >= end)
            break;
        char c = s[i + 1];
        i += 2;
        switch (c) {
        case 'b': common_buf_addc(b, '\b'); break;
        case 'f': common_buf_addc(b, '\f'); break;
        case 'n': common_buf_addc(b, '\n'); break;
        case 'r': common_buf_addc(b, '\r'); break;
        case 't': common_buf_addc(b, '\t'); break;
        case 'u': {
            unsigned cp = hex4(s + i);
            i += 4;
            if (cp >= 0xd800 && cp < 0xdc00 && i + 6 <= end && s[i] == '\\' && s[i + 1] == 'u') {
                unsigned lo = hex4(s + i + 2);
                if (lo >= 0xdc00 && lo < 0xe000) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    i += 6;
                }
            }
            if (cp >= 0xd800 && cp < 0xe000)
                cp = 0xfffd; /* a lone surrogate */
            add_utf8(b, cp);
            break;
        }
        default: common_buf_addc(b, c); break; /* '"', '\\', '/' */
        }
    }
    return b->failed ? ENOMEM : 0;
}

int mcp_json_escape_flaw(const char *s, size_t n, char *what, size_t whatsz)
{
    const char *p = memchr(s, '\\', n);
    while (p && (size_t)(p - s) + 1 < n) {
        size_t i = (size_t)(p - s);
        if (s[i + 1] == 'u' && i + 6 <= n) {
            unsigned cp = hex4(s + i + 2);
            int high = cp >= 0xd800 && cp < 0xdc00;
            if (cp == 0) {
                snprintf(what, whatsz, "a NUL character (\\u0000)");
                return 1;
            }
            if (high && i + 12 <= n && s[i + 6] == '\\' && s[i + 7] == 'u' &&
                hex4(s + i + 8) >= 0xdc00 && hex4(s + i + 8) < 0xe000) {
                i += 6; /* a pair: one character */
            } else if (cp >= 0xd800 && cp < 0xe000) {
                snprintf(what, whatsz, "an ill-formed escape (\\u%.4s: a lone UTF-16 "
                         "surrogate, no character)", s + i + 2);
                return 1;
            }
            i += 6;
        } else {
            i += 2; /* \\, \", \n, ...: one escape, whatever follows */
        }
        p = i < n ? memchr(s + i, '\\', n - i) : NULL;
    }
    return 0;
}

void mcp_json_string_encode(common_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    common_buf_addc(b, '"');
    while (i < n) {
        size_t run = i;
        /* Plain ASCII runs go in one copy. */
        while (run < n && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\')
            run++;
        common_buf_add(b, s + i, run - i);
        i = run;
        if (i >= n)
            break;
        unsigned char c = p[i];
        if (c >= 0x80) {
            size_t q = store_utf8_len(p + i, n - i);
            if (q == 0) {
                common_buf_adds(b, "\\ufffd");
                i++;
            } else {
                common_buf_add(b, s + i, q);
                i += q;
            }
            continue;
        }
        i++;
        switch (c) {
        case '"': common_buf_adds(b, "\\\""); break;
        case '\\': common_buf_adds(b, "\\\\"); break;
        case '\n': common_buf_adds(b, "\\n"); break;
        case '\r': common_buf_adds(b, "\\r"); break;
        case '\t': common_buf_adds(b, "\\t"); break;
        case '\b': common_buf_adds(b, "\\b"); break;
        case '\f': common_buf_adds(b, "\\f"); break;
        default: {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            common_buf_add(b, e, 6);
        }
        }
    }
    common_buf_addc(b, '"');
}

/* ---- the string codec in place ----------------------------------------------
 * For a token exactly what mcp_json_string_encode makes of its text
 * ("canonical": what JSON.stringify and most encoders write), a text can be
 * decoded over its own token and encoded back over it, byte for byte as it
 * was: the rewriter offloads a long text without a copy (rewrite.c). */

static int lowerhex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* The first offset at or after I of a '\\' or a byte >= 0x80 in S[0, N). */
static size_t escape_or_high(const unsigned char *p, size_t i, size_t n)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    while (n - i >= 8) {
        uint64_t w, b;
        memcpy(&w, p + i, 8);
        b = w ^ (ones * '\\');
        if ((w & highs) | ((b - ones) & ~b & highs))
            break;
        i += 8;
    }
    while (i < n && p[i] != '\\' && p[i] < 0x80)
        i++;
    return i;
}

int mcp_json_string_canonical(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 1, end = n - 1;
    while ((i = escape_or_high(p, i, end)) < end) {
        if (p[i] >= 0x80) {
            size_t q = store_utf8_len(p + i, end - i);
            if (q == 0)
                return 0;
            i += q;
            continue;
        }
        switch (p[i + 1]) {
        case '"': case '\\': case 'b': case 'f': case 'n': case 'r': case 't':
            i += 2;
            continue;
        case 'u': {
            unsigned v;
            if (p[i + 2] != '0' || p[i + 3] != '0' || (p[i + 4] != '0' && p[i + 4] != '1') ||
                !lowerhex(p[i + 5]))
                return 0;
            v = (unsigned)(p[i + 4] - '0') * 16 +
                (unsigned)(p[i + 5] <= '9' ? p[i + 5] - '0' : p[i + 5] - 'a' + 10);
            if (v == '\b' || v == '\f' || v == '\n' || v == '\r' || v == '\t')
                return 0;
            i += 6;
            continue;
        }
        default: /* \/, or \u of anything else */
            return 0;
        }
    }
    return 1;
}

size_t mcp_json_string_decode_in_place(char *s, size_t n)
{
    size_t r = 1, w = 0, end = n - 1;
    while (r < end) {
        const char *bs = memchr(s + r, '\\', end - r);
        size_t run = bs ? (size_t)(bs - (s + r)) : end - r;
        memmove(s + w, s + r, run);
        w += run;
        r += run;
        if (r >= end)
            break;
        switch (s[r + 1]) {
        case 'b': s[w++] = '\b'; r += 2; break;
        case 'f': s[w++] = '\f'; r += 2; break;
        case 'n': s[w++] = '\n'; r += 2; break;
        case 'r': s[w++] = '\r'; r += 2; break;
        case 't': s[w++] = '\t'; r += 2; break;
        case 'u':
            s[w++] = (char)((s[r + 4] - '0') * 16 +
                            (s[r + 5] <= '9' ? s[r + 5] - '0' : s[r + 5] - 'a' + 10));
            r += 6;
            break;
        default: s[w++] = s[r + 1]; r += 2; break; /* '"', '\\' */
        }
    }
    return w;
}

/* From the end: each byte's encoding is at least as long as the byte, so
 * nothing is overwritten before it is read. */
void mcp_json_string_encode_back(char *s, size_t dlen, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t w = n;
    s[--w] = '"';
    for (size_t i = dlen; i-- > 0;) {
        unsigned char c = (unsigned char)s[i];
        char e = 0;
        switch (c) {
        case '"': e = '"'; break;
        case '\\': e = '\\'; break;
        case '\b': e = 'b'; break;
        case '\f': e = 'f'; break;
        case '\n': e = 'n'; break;
        case '\r': e = 'r'; break;
        case '\t': e = 't'; break;
        default: break;
        }
        if (e) {
            s[--w] = e;
            s[--w] = '\\';
        } else if (c < 0x20) {
            s[--w] = hex[c & 15];
            s[--w] = hex[c >> 4];
            s[--w] = '0';
            s[--w] = '0';
            s[--w] = 'u';
            s[--w] = '\\';
        } else {
            s[--w] = (char)c;
        }
    }
    s[--w] = '"';
}

/* ---- the top level of a message the scanner cannot follow ---------------- */
/* Skips the value at s[*pos] without checking what is inside it: a string
 * token, or an object or array by counting brackets (outside strings) to
 * any depth, or a bare word. EINVAL when S ends first. */
static int skip_shallow(const char *s, size_t n, size_t *pos)
{
    size_t i = *pos, depth = 0;
    if (i >= n)
        return EINVAL;
    if (s[i] != '{' && s[i] != '[' && s[i] != '"') {
        while (i < n && !strchr(",}] \t\r\n", s[i]))
            i++;
        if (i == n)
            return EINVAL;
        *pos = i;
        return 0;
    }
    while (i < n) {
        char c = s[i];
        if (c == '"') {
            if (skip_string(s, n, &i))
                return EINVAL;
            if (depth == 0)
                break;
            continue;
        }
        if (c == '{' || c == '[')
            depth++;
        else if ((c == '}' || c == ']') && --depth == 0) {
            i++;
            break;
        }
        i++;
    }
    if (depth != 0 || i > n)
        return EINVAL;
    *pos = i;
    return 0;
}

int mcp_json_top_member(const char *s, size_t n, const char *name, size_t *vs, size_t *ve)
{
    size_t pos = mcp_json_ws(s, n, 0), ks, ke, a;
    int found = 0;
    if (pos >= n || s[pos] != '{')
        return EINVAL;
    pos = mcp_json_ws(s, n, pos + 1);
    while (pos < n && s[pos] == '"') {
        ks = pos;
        if (skip_string(s, n, &pos))
            break;
        ke = pos;
        pos = mcp_json_ws(s, n, pos);
        if (pos >= n || s[pos] != ':')
            break;
        a = pos = mcp_json_ws(s, n, pos + 1);
        if (skip_shallow(s, n, &pos))
            break;
        if (mcp_json_string_is(s + ks, ke - ks, name)) {
            *vs = a;
            *ve = pos;
            found = 1;
        }
        pos = mcp_json_ws(s, n, pos);
        if (pos >= n || s[pos] != ',')
            break;
        pos = mcp_json_ws(s, n, pos + 1);
    }
    return found ? 0 : ENOENT;
}
