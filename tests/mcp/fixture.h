/* fixture.h -- what the MCP proxy's cmocka suites share: a real store in a
 * temporary directory with a rewriter over it (setup/teardown), and helpers
 * that send messages and take answers apart. Included by tests/mcp/test_*.c
 * only. */
#ifndef OFFLOADFS_TESTS_MCP_FIXTURE_H
#define OFFLOADFS_TESTS_MCP_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <errno.h>

#include "agentlink/agentlink.h"
#include "agentlink/mcp/mcp.h"
#include "common/buf.h"

struct fx {
    char base[64];
    char dir[96];
    al_store *h;
    mcp_rewriter *rw;
};

static __attribute__((unused)) int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->base, sizeof f->base, "/tmp/offloadfs-mcp.XXXXXX");
    assert_non_null(mkdtemp(f->base));
    snprintf(f->dir, sizeof f->dir, "%s/store", f->base);
    assert_int_equal(al_store_open(&f->h, f->dir, "default", "/large_tool_results", NULL), 0);
    assert_int_equal(mcp_rewriter_new(&f->rw, f->h, NULL, 1), 0);
    *state = f;
    return 0;
}

static __attribute__((unused)) int teardown(void **state)
{
    struct fx *f = *state;
    char cmd[160];
    mcp_rewriter_free(f->rw);
    al_store_close(f->h);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->base);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

/* ---- helpers --------------------------------------------------------------- */
static __attribute__((unused)) void client(mcp_rewriter *rw, const char *line, int want_action, mcp_verdict *v)
{
    assert_int_equal(mcp_rewriter_client(rw, line, strlen(line), v), 0);
    assert_int_equal(v->action, want_action);
}

/* The server's line is the rewriter's to write on: a copy, which must
 * come back as it was whenever the verdict is MCP_PASS. */
static __attribute__((unused)) void server(mcp_rewriter *rw, const char *line, int want_action, mcp_verdict *v)
{
    size_t n = strlen(line);
    char *copy = strdup(line);
    assert_non_null(copy);
    assert_int_equal(mcp_rewriter_server(rw, copy, n, v), 0);
    if (v->action != want_action)
        fail_msg("action %d, want %d, for %.200s", v->action, want_action, line);
    if (v->action == MCP_PASS && memcmp(copy, line, n) != 0)
        fail_msg("a line passed changed: %.200s", copy);
    free(copy);
}

static __attribute__((unused)) void client_pass(mcp_rewriter *rw, const char *line)
{
    mcp_verdict v;
    client(rw, line, MCP_PASS, &v);
    assert_null(v.text);
    assert_null(v.note);
    mcp_verdict_release(&v);
}

static __attribute__((unused)) void server_pass(mcp_rewriter *rw, const char *line)
{
    mcp_verdict v;
    server(rw, line, MCP_PASS, &v);
    assert_null(v.text);
    if (v.note)
        fail_msg("note: %s", v.note);
    mcp_verdict_release(&v);
}

static __attribute__((unused)) void has(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("lacks '%s' in:\n%.3000s", needle, text);
}

/* "line 1 xxxx\n...": N lines. */
static __attribute__((unused)) char *lines(unsigned n)
{
    size_t cap = (size_t)n * 32 + 1, l = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    for (unsigned i = 1; i <= n; i++)
        l += (size_t)snprintf(s + l, cap - l, "line %u xxxxxxxxxxxxxxxxxx\n", i);
    return s;
}

/* TEXT as a JSON string token (yours). */
static __attribute__((unused)) char *jstr(const char *text)
{
    common_buf b = {0};
    char *out = NULL;
    mcp_json_string_encode(&b, text, strlen(text));
    assert_int_equal(common_buf_detach(&b, &out, NULL), 0);
    return out;
}

static __attribute__((unused)) char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static __attribute__((unused)) char *fmt(const char *f, ...)
{
    va_list ap;
    char *out = NULL;
    va_start(ap, f);
    assert_true(vasprintf(&out, f, ap) >= 0);
    va_end(ap);
    return out;
}

/* The decoded string at member path ".a.b" style: first match of "\"NAME\":" then a string. */
static __attribute__((unused)) char *decoded_after(const char *msg, const char *marker)
{
    const char *p = strstr(msg, marker);
    size_t pos;
    common_buf b = {0};
    char *out = NULL;
    assert_non_null(p);
    p += strlen(marker);
    pos = 0;
    assert_int_equal(mcp_json_skip(p, strlen(p), &pos), 0);
    assert_int_equal(mcp_json_string_decode(p, pos, &b), 0);
    assert_int_equal(common_buf_detach(&b, &out, NULL), 0);
    return out;
}

/* The key a pointer text names under /large_tool_results. */
static __attribute__((unused)) char *pointer_key(const char *ptr)
{
    const char *p = strstr(ptr, "/large_tool_results/");
    size_t n;
    assert_non_null(p);
    p += strlen("/large_tool_results/");
    n = strcspn(p, " \n\"");
    return strndup(p, n);
}

/* A text token with every canonical escape, repeated until it is long. */
static __attribute__((unused)) char *escaped_token(const char *unit_tok, size_t times)
{
    size_t k = strlen(unit_tok), n = 0;
    char *t = malloc(k * times + 3);
    assert_non_null(t);
    t[n++] = '"';
    for (size_t i = 0; i < times; i++, n += k)
        memcpy(t + n, unit_tok, k);
    t[n++] = '"';
    t[n] = '\0';
    return t;
}


#endif
