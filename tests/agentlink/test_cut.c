/* test_cut.c -- the cut of a value that arrives in pieces (al_cutter)
 * gives exactly the bytes of the cut of the whole value: against al_cut()
 * and against ref_cut(), a verbatim copy of al_cut() as it was before the
 * cutter existed (agentlink/text.c at main 954234a), over many lengths,
 * bounds, contents and ways of splitting the value. Also the incremental
 * character count (al_text_count) against al_text_info(). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>

#include "agentlink/agentlink.h"
#include "agentlink/internal.h"

/* ---- the whole-buffer cut as it was --------------------------------------- */
/* Moves POS back to the start of the character it falls in (at most three
 * continuation bytes, so runs of stray 0x80-0xBF bytes cost nothing). */
static size_t ref_char_start_back(const unsigned char *s, size_t pos)
{
    for (unsigned k = 0; k < 3 && pos > 0 && (s[pos] & 0xc0) == 0x80; k++)
        pos--;
    return pos;
}

static size_t ref_char_start_fwd(const unsigned char *s, size_t len, size_t pos)
{
    for (unsigned k = 0; k < 3 && pos < len && (s[pos] & 0xc0) == 0x80; k++)
        pos++;
    return pos;
}

#define REF_SNAP_WINDOW 4096u
#define MARKER_FMT "[... offloadfs: %zu bytes cut here ...]\n"
#define MIN_CUT_ROOM 64u

static int ref_cut(const void *data, size_t len, uint64_t max, void **out,
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
        size_t start = ref_char_start_fwd(s, len, len - (size_t)max);
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
    head = ref_char_start_back(s, room / 4);
    tail_start = ref_char_start_fwd(s, len, len - (room - room / 4));

    /* Prefer whole lines at both edges when a line end is near. */
    win = room / 8 < REF_SNAP_WINDOW ? room / 8 : REF_SNAP_WINDOW;
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


/* ---- inputs ---------------------------------------------------------------- */
static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* LEN bytes of kind K: 0 lines of text, 1 three-byte characters without
 * newlines, 2 any bytes, 3 few newlines and stray continuation bytes. */
static unsigned char *make_input(int k, size_t len)
{
    unsigned char *s = malloc(len ? len : 1);
    assert_non_null(s);
    for (size_t i = 0; i < len; i++) {
        switch (k) {
        case 0: s[i] = rnd() % 40 == 0 ? '\n' : (unsigned char)('a' + rnd() % 26); break;
        case 1: s[i] = (unsigned char)"\xe2\x82\xac"[i % 3]; break;
        case 2: s[i] = (unsigned char)rnd(); break;
        default: s[i] = rnd() % 3000 == 0 ? '\n' : rnd() % 5 == 0 ? (unsigned char)(0x80 | rnd() % 64) : 'x'; break;
        }
    }
    return s;
}

/* Feeds S to a cutter of bound MAX in pieces of random sizes up to PIECE
 * and checks its output against ref_cut() and al_cut(). */
static void check_one(const unsigned char *s, size_t len, uint64_t max, size_t piece)
{
    al_cutter *c = NULL;
    const void *got;
    void *want = NULL, *now = NULL;
    size_t gotlen, wantlen, nowlen;
    int cut = -1;

    assert_int_equal(ref_cut(s, len, max, &want, &wantlen), 0);
    assert_int_equal(al_cut(s, len, max, &now, &nowlen), 0);
    assert_int_equal(nowlen, wantlen);
    assert_memory_equal(now ? now : s, want ? want : s, wantlen);
    assert_int_equal(al_cutter_new(&c, max), 0);
    for (size_t off = 0; off < len;) {
        size_t n = 1 + (size_t)(rnd() % piece);
        if (n > len - off)
            n = len - off;
        assert_int_equal(al_cutter_add(c, s + off, n), 0);
        off += n;
    }
    assert_int_equal(al_cutter_total(c), len);
    assert_int_equal(al_cutter_finish(c, &got, &gotlen, &cut), 0);
    assert_int_equal(cut, len > max);
    assert_int_equal(gotlen, wantlen);
    assert_memory_equal(got, want ? want : s, wantlen);
    assert_int_equal(((const char *)got)[gotlen], '\0');
    assert_int_equal(al_cutter_add(c, "x", 1), EINVAL); /* finished */
    al_cutter_free(c);
    free(want);
    free(now);
}

static void cutter_should_give_the_bytes_of_the_whole_buffer_cut(void **state)
{
    static const uint64_t maxes[] = {1, 2, 5, 63, 64, 65, 100, 127, 1000, 4096, 9999, 40000};
    (void)state;
    for (int k = 0; k < 4; k++)
        for (size_t m = 0; m < sizeof maxes / sizeof maxes[0]; m++) {
            uint64_t max = maxes[m];
            size_t lens[] = {0, 1, (size_t)max - 1, (size_t)max, (size_t)max + 1, (size_t)max + 2,
                             (size_t)max * 2 + 3, (size_t)max * 5 + 17, 100000};
            for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
                size_t len = lens[l];
                unsigned char *s = make_input(k, len);
                check_one(s, len, max, 1 + (size_t)(rnd() % 7));      /* tiny pieces */
                check_one(s, len, max, 1 + (size_t)(rnd() % 70000));  /* any pieces */
                free(s);
            }
        }
}

static void cutter_should_keep_a_line_log_exactly(void **state)
{
    /* A build log: the snapping to line ends at both edges decides. */
    size_t len = 0, cap = 4 << 20;
    char *s = malloc(cap);
    (void)state;
    for (int i = 1; len + 64 < cap; i++)
        len += (size_t)snprintf(s + len, cap - len, "build step %06d: unit %d ok\n", i, i * 7 % 1000);
    for (uint64_t max = 64; max < len; max = max * 2 + 1)
        check_one((unsigned char *)s, len, max, 65536);
    free(s);
}

static void cutter_should_hold_memory_near_its_bound(void **state)
{
    /* 64 MiB through a 1 MiB cutter, one 64 KiB piece at a time: it keeps
     * the head and a ring, never the value (checked by the output being
     * right while only MAX + 1 bytes were ever allocated: see al_cutter_new). */
    static unsigned char piece[65536];
    al_cutter *c;
    const void *got;
    size_t n;
    int cut;
    (void)state;
    memset(piece, 'z', sizeof piece);
    assert_int_equal(al_cutter_new(&c, 1u << 20), 0);
    for (int i = 0; i < 1024; i++)
        assert_int_equal(al_cutter_add(c, piece, sizeof piece), 0);
    assert_int_equal(al_cutter_finish(c, &got, &n, &cut), 0);
    assert_int_equal(cut, 1);
    assert_true(n <= 1u << 20);
    assert_non_null(memmem(got, n, "bytes cut here", 14));
    al_cutter_free(c);
}

static void cutter_should_refuse_bad_arguments(void **state)
{
    al_cutter *c = (al_cutter *)1;
    const void *got;
    size_t n;
    (void)state;
    assert_int_equal(al_cutter_new(&c, 0), EINVAL);
    assert_null(c);
    assert_int_equal(al_cutter_new(NULL, 10), EINVAL);
    assert_int_equal(al_cutter_add(NULL, "x", 1), EINVAL);
    assert_int_equal(al_cutter_finish(NULL, &got, &n, NULL), EINVAL);
    assert_int_equal(al_cutter_total(NULL), 0);
    al_cutter_free(NULL);
    assert_int_equal(al_cutter_new(&c, 10), 0);
    assert_int_equal(al_cutter_add(c, NULL, 1), EINVAL);
    assert_int_equal(al_cutter_finish(c, &got, &n, NULL), 0); /* empty value */
    assert_int_equal(n, 0);
    assert_int_equal(*(const char *)got, '\0');
    al_cutter_free(c);
}

static void text_count_should_match_text_info_over_any_split(void **state)
{
    (void)state;
    for (int k = 0; k < 4; k++) {
        size_t len = 20000;
        unsigned char *s = make_input(k, len);
        for (int round = 0; round < 20; round++) {
            al_textinfo ti;
            size_t pos = 0, have = 0;
            uint64_t chars = 0;
            while (have < len) {
                size_t n = 1 + (size_t)(rnd() % 9);
                have = have + n > len ? len : have + n;
                al_text_count(s, have, &pos, &chars, 0);
            }
            al_text_count(s, len, &pos, &chars, 1);
            al_text_info(s, len, &ti);
            assert_int_equal(chars, ti.chars);
            assert_int_equal(pos, len);
        }
        free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cutter_should_give_the_bytes_of_the_whole_buffer_cut),
        cmocka_unit_test(cutter_should_keep_a_line_log_exactly),
        cmocka_unit_test(cutter_should_hold_memory_near_its_bound),
        cmocka_unit_test(cutter_should_refuse_bad_arguments),
        cmocka_unit_test(text_count_should_match_text_info_over_any_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
