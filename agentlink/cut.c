/* cut.c -- the head-and-tail cut, of a whole buffer (al_cut) or of a value
 * that arrives in pieces (al_cutter), with the same output byte for byte.
 *
 * The cut reads only a few places of the value: the bytes just before a
 * quarter of the room (the head's edge, snapped back to a line end or a
 * character start) and the bytes from three quarters of the room before
 * the end on (the tail's edge, snapped forward). A cutter therefore keeps
 * the first HCAP bytes and a ring of the last TCAP bytes, HCAP + TCAP =
 * MAX, and runs the one planning function over that view: it never asks
 * for a byte outside what was kept (see cutter_caps()). */
#include "agentlink/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SNAP_WINDOW 4096u
#define MARKER_FMT "[... offloadfs: %zu bytes cut here ...]\n"
#define MIN_CUT_ROOM AL_MIN_LIMIT

/* LEN bytes seen through two windows: [0, HLEN) at HEAD, and the rest
 * from TOFF on at TAIL[i - TOFF]. A whole buffer is HEAD = TAIL = it. */
typedef struct cut_view {
    const unsigned char *head, *tail;
    size_t hlen, toff, len;
} cut_view;

static unsigned char at(const cut_view *v, size_t i)
{
    return i < v->hlen ? v->head[i] : v->tail[i - v->toff];
}

/* What the cut keeps: [0, HEAD), then '\n' when NL_BEFORE, the marker,
 * then [TAIL_START, LEN). With TAIL_ONLY, just [TAIL_START, LEN). */
typedef struct cut_plan {
    size_t head, tail_start, mlen, total;
    int nl_before, tail_only;
    char marker[96];
} cut_plan;

/* Moves POS back to the start of the character it falls in (at most three
 * continuation bytes, so runs of stray 0x80-0xBF bytes cost nothing). */
static size_t char_start_back(const cut_view *v, size_t pos)
{
    for (unsigned k = 0; k < 3 && pos > 0 && (at(v, pos) & 0xc0) == 0x80; k++)
        pos--;
    return pos;
}

static size_t char_start_fwd(const cut_view *v, size_t pos)
{
    for (unsigned k = 0; k < 3 && pos < v->len && (at(v, pos) & 0xc0) == 0x80; k++)
        pos++;
    return pos;
}

/* The marker's longest form for a value of LEN bytes: '\n' and the text
 * with as many digits as LEN. */
static size_t marker_room(size_t len)
{
    return 1 + (size_t)snprintf(NULL, 0, MARKER_FMT, len);
}

/* Plans the cut of V (V->len > MAX). */
static void cut_plan_make(const cut_view *v, size_t max, cut_plan *p)
{
    size_t len = v->len, room, win;

    memset(p, 0, sizeof *p);
    if (max < MIN_CUT_ROOM) {
        /* No room for a marker: the tail is what matters most. */
        p->tail_only = 1;
        p->tail_start = char_start_fwd(v, len - max);
        p->total = len - p->tail_start;
        return;
    }
    room = max - marker_room(len);
    p->head = char_start_back(v, room / 4);
    p->tail_start = char_start_fwd(v, len - (room - room / 4));

    /* Prefer whole lines at both edges when a line end is near. */
    win = room / 8 < SNAP_WINDOW ? room / 8 : SNAP_WINDOW;
    for (size_t i = p->head; i > 0 && p->head - i < win; i--)
        if (at(v, i - 1) == '\n') {
            p->head = i;
            break;
        }
    for (size_t i = p->tail_start; i < len && i - p->tail_start < win; i++)
        if (at(v, i) == '\n') {
            if (i + 1 < len)
                p->tail_start = i + 1;
            break;
        }
    p->nl_before = p->head > 0 && at(v, p->head - 1) != '\n';
    snprintf(p->marker, sizeof p->marker, MARKER_FMT, p->tail_start - p->head);
    p->mlen = strlen(p->marker);
    p->total = p->head + (size_t)p->nl_before + p->mlen + (len - p->tail_start);
}

int al_cut(const void *data, size_t len, uint64_t max, void **out,
           size_t *outlen)
{
    const unsigned char *s = data;
    cut_view v = {s, s, len, 0, len};
    cut_plan p;
    unsigned char *o;
    size_t off;

    if (!out || !outlen || max == 0)
        return EINVAL;
    *out = NULL;
    *outlen = len;
    if ((uint64_t)len <= max)
        return 0;
    cut_plan_make(&v, (size_t)max, &p);
    o = malloc(p.total + 1);
    if (!o)
        return ENOMEM;
    memcpy(o, s, p.head);
    off = p.head;
    if (p.nl_before)
        o[off++] = '\n';
    memcpy(o + off, p.marker, p.mlen);
    off += p.mlen;
    memcpy(o + off, s + p.tail_start, len - p.tail_start);
    o[p.total] = '\0';
    *out = o;
    *outlen = p.total;
    return 0;
}

/* ---- the cut of a stream ------------------------------------------------- */

struct al_cutter {
    size_t max;         /* the bound */
    size_t hcap, tcap;  /* head kept, ring of the tail: HCAP + TCAP = MAX */
    size_t total;       /* bytes added */
    unsigned char *buf; /* [0, HCAP) head, [HCAP, MAX) ring; grown to MAX + 1 */
    size_t cap;
    int finished;
    const unsigned char *out;
    size_t outlen;
};

/* The head a cut of any length over MAX can read: its edge is at most a
 * quarter of the largest room, which the shortest marker leaves (a value
 * over MAX has at least as many digits as MAX + 1); char_start_back() reads
 * the byte at the edge itself, hence + 1. The ring gets the rest of MAX,
 * which is more than the tail's largest room. A bound too small for a
 * marker keeps only a tail. */
static void cutter_caps(size_t max, size_t *hcap, size_t *tcap)
{
    *hcap = 0;
    if (max >= MIN_CUT_ROOM) {
        size_t room = max - marker_room(max + 1);
        *hcap = room / 4 + 1;
    }
    *tcap = max - *hcap;
}

int al_cutter_new(al_cutter **out, uint64_t max)
{
    al_cutter *c;
    if (!out)
        return EINVAL;
    *out = NULL;
    if (max == 0 || max >= SIZE_MAX / 2)
        return EINVAL;
    if (!(c = calloc(1, sizeof *c)))
        return ENOMEM;
    c->max = (size_t)max;
    cutter_caps(c->max, &c->hcap, &c->tcap);
    *out = c;
    return 0;
}

void al_cutter_free(al_cutter *c)
{
    if (!c)
        return;
    free(c->buf);
    free(c);
}

uint64_t al_cutter_total(const al_cutter *c)
{
    return c ? (uint64_t)c->total : 0;
}

uint64_t al_cutter_max(const al_cutter *c)
{
    return c ? (uint64_t)c->max : 0;
}

/* Makes room for the first NEED bytes of the buffer (at most MAX + 1). */
static int cutter_grow(al_cutter *c, size_t need)
{
    size_t ncap = c->cap ? c->cap : 65536;
    unsigned char *nb;
    if (need <= c->cap)
        return 0;
    while (ncap < need)
        ncap *= 2;
    if (ncap > c->max + 1)
        ncap = c->max + 1;
    if (!(nb = realloc(c->buf, ncap)))
        return ENOMEM;
    c->buf = nb;
    c->cap = ncap;
    return 0;
}

int al_cutter_add(al_cutter *c, const void *data, size_t len)
{
    const unsigned char *s = data;
    int rc;
    if (!c || (!s && len > 0) || c->finished)
        return EINVAL;
    if (len > SIZE_MAX / 2 - c->total)
        return EOVERFLOW;
    if ((rc = cutter_grow(c, c->total + len < c->max ? c->total + len : c->max + 1)))
        return rc;
    if (c->total < c->hcap) { /* the head first */
        size_t n = c->hcap - c->total < len ? c->hcap - c->total : len;
        memcpy(c->buf + c->total, s, n);
        c->total += n;
        s += n;
        len -= n;
    }
    /* Byte i >= HCAP lives at HCAP + (i - HCAP) % TCAP. Only the last TCAP
     * bytes of this piece can survive it. */
    if (len > c->tcap) {
        c->total += len - c->tcap;
        s += len - c->tcap;
        len = c->tcap;
    }
    while (len > 0) {
        size_t w = (c->total - c->hcap) % c->tcap;
        size_t n = c->tcap - w < len ? c->tcap - w : len;
        memcpy(c->buf + c->hcap + w, s, n);
        c->total += n;
        s += n;
        len -= n;
    }
    return 0;
}

static void reverse(unsigned char *p, size_t n)
{
    for (size_t i = 0, j = n; i + 1 < j; i++, j--) {
        unsigned char t = p[i];
        p[i] = p[j - 1];
        p[j - 1] = t;
    }
}

/* Turns the ring into the last TCAP bytes in order, in place. */
static void ring_straighten(al_cutter *c)
{
    unsigned char *r = c->buf + c->hcap;
    size_t w = (c->total - c->hcap) % c->tcap; /* the oldest byte */
    if (w == 0)
        return;
    reverse(r, w);
    reverse(r + w, c->tcap - w);
    reverse(r, c->tcap);
}

int al_cutter_finish(al_cutter *c, const void **out, size_t *outlen, int *cut)
{
    cut_view v;
    cut_plan p;
    size_t d, n;

    if (!c || !out || !outlen)
        return EINVAL;
    if (!c->finished) {
        c->finished = 1;
        /* Room for the NUL after what is kept (and a buffer for nothing). */
        if (cutter_grow(c, (c->total < c->max ? c->total : c->max) + 1))
            return ENOMEM;
        c->out = c->buf;
        c->outlen = c->total;
        if (c->total > c->max) {
            ring_straighten(c);
            v = (cut_view){c->buf, c->buf + c->hcap, c->hcap, c->total - c->tcap, c->total};
            cut_plan_make(&v, c->max, &p);
            /* Everything kept is in BUF: move the tail to its place, then
             * write the marker before it (output <= MAX < MAX + 1). */
            n = c->total - p.tail_start;
            d = p.tail_only ? 0 : p.head + (size_t)p.nl_before + p.mlen;
            memmove(c->buf + d, c->buf + c->hcap + (p.tail_start - v.toff), n);
            if (!p.tail_only) {
                if (p.nl_before)
                    c->buf[p.head] = '\n';
                memcpy(c->buf + p.head + (size_t)p.nl_before, p.marker, p.mlen);
            }
            c->outlen = p.total;
        }
        c->buf[c->outlen] = '\0';
    }
    *out = c->out;
    *outlen = c->outlen;
    if (cut)
        *cut = c->total > c->max;
    return 0;
}
