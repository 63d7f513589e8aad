/* pattern.c -- which read-tool patterns are never handed to glibc's
 * regcomp()/regexec() (see mcp_pattern_refusal() in mcp.h).
 *
 * glibc compiles an ERE into a tree in which repetition copies its operand:
 * "x+" is "x x*" and "x{n,m}" is m copies, so stacked or nested repetition
 * multiplies. "a" followed by twenty '+' took 717 MB and 0.6 s to compile
 * (fuzz_mcp found the proxy out of memory on such a pattern), and the
 * parser recurses once per group: 20,000 nested parentheses overflowed the
 * stack (SIGSEGV). A back-reference makes regexec() exponential. One pass
 * here, with an explicit stack, estimates the copies regcomp() would make
 * and refuses the pattern before it does.
 */
#include "agentlink/mcp/mcp.h"

#include <stdint.h>
#include <string.h>

/* Open groups at most: glibc recursed safely through 1,000 on the default
 * 8 MiB stack; a real pattern rarely nests 5. */
#define PATTERN_NEST 64u
/* Positions at most, as counted below: 10,000 compile to about 3.5 MB in
 * about 1.3 ms ("(a{100}){100}"). */
#define PATTERN_POSITIONS 10000u

/* Saturating arithmetic: nothing counted grows past CAP. */
#define CAP ((uint64_t)PATTERN_POSITIONS + 1)

static uint64_t sat(uint64_t x)
{
    return x > CAP ? CAP : x;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    return a && b > CAP / a ? CAP : sat(a * b);
}

/* One open group: the positions of its finished alternatives, and of the
 * branch being read up to its last piece. */
typedef struct level {
    uint64_t alts, seq;
} level;

/* Skips the bracket expression at P ('['): returns the byte after its ']'
 * (inside, a backslash is literal and "[:alpha:]" may hold ']'), or the
 * string's end. */
static const char *skip_bracket(const char *p)
{
    p += p[1] == '^' ? 2 : 1;
    if (*p == ']')
        p++;
    while (*p && *p != ']') {
        if (*p == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
            const char *e = strchr(p + 2, p[1]);
            while (e && e[1] != ']')
                e = strchr(e + 1, p[1]);
            p = e ? e + 2 : p + 1;
        } else {
            p++;
        }
    }
    return *p ? p + 1 : p;
}

/* Reads the interval "{n}", "{n,}", "{,m}" or "{n,m}" at P: *COPIES gets the
 * copies regcomp makes of its operand (m, else n + 1 when unbounded, else
 * n; at least 1). Returns the byte after '}', or NULL when P holds no
 * interval (regcomp then judges the brace). */
static const char *interval(const char *p, uint64_t *copies)
{
    uint64_t n = 0, m = 0;
    int comma = 0, digits = 0;
    for (p++; *p == ',' || (*p >= '0' && *p <= '9'); p++) {
        if (*p == ',') {
            if (comma++)
                return NULL;
        } else {
            uint64_t *d = comma ? &m : &n;
            *d = sat(*d * 10 + (uint64_t)(*p - '0'));
            digits++;
        }
    }
    if (*p != '}' || !digits)
        return NULL;
    *copies = comma ? (m ? m : n + 1) : n;
    if (*copies < 1)
        *copies = 1;
    return p + 1;
}

const char *mcp_pattern_refusal(const char *p)
{
    level stack[PATTERN_NEST + 1] = {{0, 0}};
    unsigned depth = 0;
    uint64_t last = 0; /* the piece just read, which a quantifier repeats */
    while (*p) {
        uint64_t copies;
        const char *q;
        switch (*p) {
        case '*':
        case '?':
            last = sat(last + 1);
            p++;
            continue;
        case '+':
            last = sat(2 * last + 1);
            p++;
            continue;
        case '{':
            if ((q = interval(p, &copies))) {
                last = sat_mul(last ? last : 1, copies);
                p = q;
                continue;
            }
            break;
        default:
            break;
        }
        stack[depth].seq = sat(stack[depth].seq + last);
        last = 0;
        if (*p == '(') {
            if (depth == PATTERN_NEST)
                return "nests groups more than 64 deep";
            stack[++depth] = (level){0, 0};
            p++;
        } else if (*p == ')' && depth) {
            last = sat(stack[depth].alts + stack[depth].seq);
            depth--;
            p++;
        } else if (*p == '|') {
            stack[depth].alts = sat(stack[depth].alts + stack[depth].seq);
            stack[depth].seq = 0;
            p++;
        } else if (*p == '[') {
            last = 1;
            p = skip_bracket(p);
        } else if (*p == '\\') {
            if (p[1] >= '1' && p[1] <= '9')
                return "uses a back-reference (\\1 to \\9), which this tool does not run "
                       "(it can take exponential time); use a pattern without one";
            last = 1;
            p += p[1] ? 2 : 1;
        } else {
            last = 1;
            p++;
        }
    }
    stack[depth].seq = sat(stack[depth].seq + last);
    while (depth) { /* unclosed groups: regcomp refuses them, count anyway */
        uint64_t g = sat(stack[depth].alts + stack[depth].seq);
        depth--;
        stack[depth].seq = sat(stack[depth].seq + g);
    }
    if (sat(stack[0].alts + stack[0].seq) > PATTERN_POSITIONS)
        return "repeats too much: nested or stacked repetition (such as \"a++\" or "
               "\"(a{100}){1000}\") would expand to more than 10000 positions; "
               "use a simpler pattern";
    return NULL;
}
