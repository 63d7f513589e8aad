/* structured.c -- structuredContent as a whole: its measure, its media, the
 * object that stands for it once stored, and the output schema that
 * accepts that object (see mcp.h, "structuredContent").
 *
 * Why a whole and not string by string: a structure made of many small
 * values (a knowledge graph, a commit log) has no string worth replacing,
 * and a string replaced by text breaks any schema that constrains it
 * (pattern, format, enum, minLength, contentEncoding); the official SDK
 * client then refuses the whole call. Stored whole, the structure is one
 * entry the answer names, and the client gets a small object in its place
 * that the rewritten output schema admits. */
#include "agentlink/mcp/mcp.h"
#include "common/array.h"
#include "common/buf.h"
#include "store/store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* UTF-8 characters among N bytes: the bytes that are not continuations. */
static uint64_t chars_of(const char *s, size_t n)
{
    uint64_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xc0) != 0x80;
    return c;
}

static int media_add(mcp_sc_scan *sc, size_t *cap, size_t os, size_t oe)
{
    mcp_json_span *m = common_array_grow(sc->media, sc->nmedia, cap, sizeof *m, 4);
    if (!m)
        return ENOMEM;
    sc->media = m;
    sc->media[sc->nmedia++] = (mcp_json_span){os, oe};
    return 0;
}

/* Walks the (checked) value at [vs, ve): media objects are recorded and
 * their "data" left out of the measure. DEPTH bounds the recursion as
 * mcp_json_skip() bounds nesting. */
static int walk(const char *s, size_t n, size_t vs, size_t ve, mcp_sc_scan *sc, size_t *cap,
                unsigned depth)
{
    static const char *const names[] = {"type", "data"};
    mcp_json_span sp[2];
    mcp_json_iter it;
    size_t ks, ke, a, b;
    int rc = 0;
    if (s[vs] != '{' && s[vs] != '[')
        return 0;
    if (depth > MCP_JSON_DEPTH || mcp_json_iter_begin(&it, s, n, vs))
        return 0;
    if (s[vs] == '{' && mcp_json_members(s, n, vs, names, 2, sp, NULL) == 0 && sp[0].end &&
        sp[1].end && s[sp[1].start] == '"' &&
        (mcp_json_string_is(s + sp[0].start, sp[0].end - sp[0].start, "image") ||
         mcp_json_string_is(s + sp[0].start, sp[0].end - sp[0].start, "audio"))) {
        size_t dl = sp[1].end - sp[1].start;
        sc->bytes -= dl;
        sc->chars -= chars_of(s + sp[1].start, dl);
        sc->media_bytes += dl;
        return media_add(sc, cap, vs, ve);
    }
    while (rc == 0 && mcp_json_iter_next(&it, &ks, &ke, &a, &b) == 1)
        rc = walk(s, n, a, b, sc, cap, depth + 1);
    return rc;
}

int mcp_sc_scan_value(const char *s, size_t n, size_t vs, size_t ve, mcp_sc_scan *out)
{
    size_t cap = 0;
    int rc;
    memset(out, 0, sizeof *out);
    out->bytes = ve - vs;
    out->chars = chars_of(s + vs, ve - vs);
    rc = walk(s, n, vs, ve, out, &cap, 0);
    if (rc)
        mcp_sc_scan_release(out);
    return rc;
}

void mcp_sc_scan_release(mcp_sc_scan *sc)
{
    if (!sc)
        return;
    free(sc->media);
    memset(sc, 0, sizeof *sc);
}

void mcp_sc_pointer(common_buf *b, const char *path, uint64_t bytes, int read_tool, const char *s,
                    const mcp_sc_scan *sc)
{
    common_buf say = {0};
    common_buf_addf(&say, "This result's structuredContent (%" PRIu64 " bytes of JSON) was too large "
                    "for the conversation and is stored whole at %s: ", bytes, path);
    if (read_tool) {
        common_buf_adds(&say, "read it with the tool " MCP_READ_TOOL " {\"path\": ");
        mcp_json_string_encode(&say, path, strlen(path));
        common_buf_adds(&say, "} or from that file");
    } else {
        common_buf_adds(&say, "read it from that file (cat, grep, jq)");
    }
    common_buf_adds(&say, sc && sc->nmedia ? ". Its images and audio follow unchanged in \"media\"."
                                       : ".");
    common_buf_adds(b, "{\"offloaded\":{\"what\":\"structuredContent\",\"path\":");
    mcp_json_string_encode(b, path, strlen(path));
    common_buf_addf(b, ",\"bytes\":%" PRIu64 ",\"read\":", bytes);
    mcp_json_string_encode(b, say.p ? say.p : "", say.len);
    common_buf_addc(b, '}');
    if (sc && sc->nmedia) {
        common_buf_adds(b, ",\"media\":[");
        for (size_t i = 0; i < sc->nmedia; i++) {
            if (i)
                common_buf_addc(b, ',');
            common_buf_add(b, s + sc->media[i].start, sc->media[i].end - sc->media[i].start);
        }
        common_buf_addc(b, ']');
    }
    common_buf_addc(b, '}');
    if (say.failed)
        b->failed = 1;
    common_buf_release(&say);
}

/* The schema of what mcp_sc_pointer() writes. */
static const char pointer_schema[] =
    "{\"type\":\"object\",\"description\":\"Stands for a structuredContent too large for the "
    "conversation, stored whole by offloadfs at offloaded.path\",\"required\":[\"offloaded\"],"
    "\"properties\":{\"offloaded\":{\"type\":\"object\",\"required\":[\"what\",\"path\"],"
    "\"properties\":{\"what\":{\"const\":\"structuredContent\"},\"path\":{\"type\":\"string\"},"
    "\"bytes\":{\"type\":\"integer\"},\"read\":{\"type\":\"string\"}}},"
    "\"media\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}}}";

/* Root keywords that must stay at the root: the dialect and base URI, and
 * the definitions that "#/..." references resolve against. */
static int root_only(const char *s, size_t ks, size_t ke)
{
    static const char *const names[] = {"$schema", "$id", "$defs", "definitions"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (mcp_json_string_is(s + ks, ke - ks, names[i]))
            return 1;
    return 0;
}

int mcp_sc_schema(common_buf *b, const char *s, size_t n, size_t os, size_t oe)
{
    mcp_json_iter it;
    size_t ks, ke, vs, ve;
    int first;
    (void)oe;
    if (s[os] != '{' || mcp_json_iter_begin(&it, s, n, os))
        return EINVAL;
    common_buf_adds(b, "{\"type\":\"object\"");
    while (mcp_json_iter_next(&it, &ks, &ke, &vs, &ve) == 1)
        if (root_only(s, ks, ke)) {
            common_buf_addc(b, ',');
            common_buf_add(b, s + ks, ke - ks);
            common_buf_addc(b, ':');
            common_buf_add(b, s + vs, ve - vs);
        }
    common_buf_adds(b, ",\"anyOf\":[{");
    mcp_json_iter_begin(&it, s, n, os);
    first = 1;
    while (mcp_json_iter_next(&it, &ks, &ke, &vs, &ve) == 1)
        if (!root_only(s, ks, ke)) {
            if (!first)
                common_buf_addc(b, ',');
            first = 0;
            common_buf_add(b, s + ks, ke - ks);
            common_buf_addc(b, ':');
            common_buf_add(b, s + vs, ve - vs);
        }
    common_buf_adds(b, "},");
    common_buf_adds(b, pointer_schema);
    common_buf_adds(b, "]}");
    return b->failed ? ENOMEM : 0;
}
