/* policy.c -- the offload policy: the JSON of doc/contract.md, parsed with
 * cJSON, and which of its rules applies to a tool (common/policy.h).
 *
 * The parser is strict on purpose: a typo in a field name would otherwise
 * silently fall back to a default and offload (or keep) the wrong results,
 * which no one notices until a context window overflows. */
#include "common/policy.h"
#include "common/array.h"
#include "common/buf.h"
#include "common/env.h"
#include "common/error.h"
#include "common/file.h"
#include "common/utf8.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONFIG_MAX (1u << 20)          /* a policy file is small */
#define PREVIEW_LINES_MAX 1000u
#define LINE_CHARS_MAX 100000u
#define JSON_INT_MAX 9007199254740992.0 /* 2^53: exact in a double */
#define DEFAULT_OVER_BYTES 32768u

typedef struct rule {
    int kind;       /* COMMON_OFFLOAD_* */
    uint64_t limit; /* for the over_* kinds */
} rule;

typedef struct pattern {
    char *name;
    size_t rule;    /* index into rules */
    int exact;      /* no '*' */
    size_t literal; /* characters that are not '*' */
} pattern;

struct common_policy {
    char *path, *mount, *ns;
    common_preview pv;
    rule *rules;
    size_t nrules;
    pattern *pats;
    size_t npats, cappats;
};

static const common_preview default_preview = {5, 5, 1000};

/* Parsing context: where the text came from and the message so far. */
typedef struct pctx {
    const char *origin;
    common_buf msg;
    common_policy *pol;
    common_name_check_fn ns_check;
} pctx;

static const char *json_kind(const cJSON *v)
{
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsObject(v)) return "an object";
    return "something else";
}

/* Records "config 'ORIGIN': field 'FIELD': expected WHAT, got GOT" and
 * returns COMMON_ECONFIG. GOT NULL describes V. */
static int bad(pctx *c, const char *field, const char *what, const cJSON *v,
               const char *got)
{
    common_buf_release(&c->msg);
    common_buf_adds(&c->msg, "config '");
    common_buf_add_printable(&c->msg, c->origin, strlen(c->origin));
    common_buf_addf(&c->msg, "': field '%s': expected %s", field, what);
    if (got) {
        common_buf_addf(&c->msg, ", got %s", got);
    } else if (v && cJSON_IsNumber(v)) {
        common_buf_addf(&c->msg, ", got %.17g", v->valuedouble);
    } else if (v && cJSON_IsString(v)) {
        common_buf_adds(&c->msg, ", got '");
        common_buf_add_printable(&c->msg, v->valuestring, strlen(v->valuestring));
        common_buf_adds(&c->msg, "'");
    } else if (v) {
        common_buf_addf(&c->msg, ", got %s", json_kind(v));
    }
    return COMMON_ECONFIG;
}

/* Refuses unknown and repeated members of object OBJ (at path FIELD). */
static int check_members(pctx *c, const cJSON *obj, const char *field,
                         const char *const *known)
{
    for (const cJSON *m = obj->child; m; m = m->next) {
        size_t i;
        for (i = 0; known[i]; i++)
            if (strcmp(m->string, known[i]) == 0)
                break;
        common_buf path = {0};
        if (*field)
            common_buf_addf(&path, "%s.", field);
        common_buf_add_printable(&path, m->string, strlen(m->string));
        if (!known[i]) {
            common_buf w = {0};
            common_buf_adds(&w, "one of");
            for (size_t j = 0; known[j]; j++)
                common_buf_addf(&w, "%s \"%s\"", j ? "," : "", known[j]);
            int rc = bad(c, path.failed ? "?" : path.p, w.failed ? "a known field" : w.p,
                         NULL, "an unknown field");
            common_buf_release(&w);
            common_buf_release(&path);
            return rc;
        }
        for (const cJSON *n = obj->child; n != m; n = n->next)
            if (strcmp(n->string, m->string) == 0) {
                int rc = bad(c, path.failed ? "?" : path.p, "each field once", NULL,
                             "it twice");
                common_buf_release(&path);
                return rc;
            }
        common_buf_release(&path);
    }
    return 0;
}

static int get_uint(pctx *c, const cJSON *v, const char *field, uint64_t lo,
                    uint64_t hi, const char *what, uint64_t *out)
{
    double d;
    if (!cJSON_IsNumber(v))
        return bad(c, field, what, v, NULL);
    d = v->valuedouble;
    if (!(d >= (double)lo) || d > (double)hi || d != (double)(uint64_t)d)
        return bad(c, field, what, v, NULL);
    *out = (uint64_t)d;
    return 0;
}

static int parse_preview(pctx *c, const cJSON *v)
{
    static const char *const known[] = {"head_lines", "tail_lines", "max_line_chars", NULL};
    uint64_t n;
    int rc;
    if (!cJSON_IsObject(v))
        return bad(c, "preview", "an object like {\"head_lines\": 5, \"tail_lines\": 5, \"max_line_chars\": 1000}", v, NULL);
    if ((rc = check_members(c, v, "preview", known)))
        return rc;
    const cJSON *m;
    if ((m = cJSON_GetObjectItemCaseSensitive(v, "head_lines"))) {
        if ((rc = get_uint(c, m, "preview.head_lines", 0, PREVIEW_LINES_MAX,
                           "an integer from 0 to 1000", &n)))
            return rc;
        c->pol->pv.head_lines = (unsigned)n;
    }
    if ((m = cJSON_GetObjectItemCaseSensitive(v, "tail_lines"))) {
        if ((rc = get_uint(c, m, "preview.tail_lines", 0, PREVIEW_LINES_MAX,
                           "an integer from 0 to 1000", &n)))
            return rc;
        c->pol->pv.tail_lines = (unsigned)n;
    }
    if ((m = cJSON_GetObjectItemCaseSensitive(v, "max_line_chars"))) {
        if ((rc = get_uint(c, m, "preview.max_line_chars", 1, LINE_CHARS_MAX,
                           "an integer from 1 to 100000", &n)))
            return rc;
        c->pol->pv.max_line_chars = (unsigned)n;
    }
    return 0;
}

static int add_pattern(common_policy *p, const char *name, size_t rule_index)
{
    pattern *np = common_array_grow(p->pats, p->npats, &p->cappats, sizeof *np, 8);
    if (!np)
        return ENOMEM;
    p->pats = np;
    np += p->npats;
    np->name = strdup(name);
    if (!np->name)
        return ENOMEM;
    np->rule = rule_index;
    np->exact = strchr(name, '*') == NULL;
    np->literal = 0;
    for (const char *s = name; *s; s++)
        np->literal += *s != '*';
    p->npats++;
    return 0;
}

static int parse_offload(pctx *c, const cJSON *v, const char *field, rule *r)
{
    static const char *const what =
        "\"always\", \"never\", or an object with one of \"over_chars\", "
        "\"over_bytes\", \"over_tokens\"";
    if (cJSON_IsString(v)) {
        if (strcmp(v->valuestring, "always") == 0) {
            r->kind = COMMON_OFFLOAD_ALWAYS;
            return 0;
        }
        if (strcmp(v->valuestring, "never") == 0) {
            r->kind = COMMON_OFFLOAD_NEVER;
            return 0;
        }
        return bad(c, field, what, v, NULL);
    }
    if (!cJSON_IsObject(v) || cJSON_GetArraySize(v) != 1)
        return bad(c, field, what, v,
                   cJSON_IsObject(v) ? (v->child ? "several fields" : "an empty object") : NULL);
    static const char *const known[] = {"over_chars", "over_bytes", "over_tokens", NULL};
    int rc = check_members(c, v, field, known);
    if (rc)
        return rc;
    const cJSON *m = v->child;
    common_buf sub = {0};
    common_buf_addf(&sub, "%s.%s", field, m->string);
    rc = get_uint(c, m, sub.failed ? field : sub.p, 0, (uint64_t)JSON_INT_MAX,
                  "a non-negative integer", &r->limit);
    common_buf_release(&sub);
    if (rc)
        return rc;
    r->kind = strcmp(m->string, "over_chars") == 0   ? COMMON_OFFLOAD_OVER_CHARS
              : strcmp(m->string, "over_bytes") == 0 ? COMMON_OFFLOAD_OVER_BYTES
                                                     : COMMON_OFFLOAD_OVER_TOKENS;
    return 0;
}

static int parse_rules(pctx *c, const cJSON *v)
{
    static const char *const known[] = {"tools", "offload", NULL};
    common_policy *p = c->pol;
    common_buf f = {0};
    int rc = 0, n;
    size_t i = 0;

    if (!cJSON_IsArray(v))
        return bad(c, "rules", "an array of rules like {\"tools\": [\"*\"], \"offload\": \"always\"}", v, NULL);
    n = cJSON_GetArraySize(v);
    p->rules = calloc(n > 0 ? (size_t)n : 1, sizeof *p->rules);
    if (!p->rules)
        return ENOMEM;
    for (const cJSON *r = v->child; r; r = r->next, i++) {
        const cJSON *tools, *off;
        char idx[48];
        size_t j = 0;
        snprintf(idx, sizeof idx, "rules[%zu]", i);
        if (!cJSON_IsObject(r)) {
            rc = bad(c, idx, "an object with \"tools\" and \"offload\"", r, NULL);
            goto cleanup;
        }
        if ((rc = check_members(c, r, idx, known)))
            goto cleanup;
        tools = cJSON_GetObjectItemCaseSensitive(r, "tools");
        off = cJSON_GetObjectItemCaseSensitive(r, "offload");
        common_buf_release(&f);
        common_buf_addf(&f, "%s.tools", idx);
        if (f.failed) {
            rc = ENOMEM;
            goto cleanup;
        }
        if (!tools) {
            rc = bad(c, f.p, "a list of tool names", NULL, "nothing (it is required)");
            goto cleanup;
        }
        if (!cJSON_IsArray(tools) || !tools->child) {
            rc = bad(c, f.p, "a non-empty array of tool names", tools,
                     cJSON_IsArray(tools) ? "an empty array" : NULL);
            goto cleanup;
        }
        for (const cJSON *t = tools->child; t; t = t->next, j++) {
            common_buf_release(&f);
            common_buf_addf(&f, "%s.tools[%zu]", idx, j);
            if (f.failed) {
                rc = ENOMEM;
                goto cleanup;
            }
            if (!cJSON_IsString(t) || !common_tool_name_ok(t->valuestring)) {
                rc = bad(c, f.p, "a tool name (1 to 255 bytes of UTF-8, no control characters)", t, NULL);
                goto cleanup;
            }
            for (size_t k = 0; k < p->npats; k++) {
                if (strcmp(p->pats[k].name, t->valuestring) != 0)
                    continue;
                common_buf got = {0};
                common_buf_adds(&got, "'");
                common_buf_add_printable(&got, t->valuestring, strlen(t->valuestring));
                common_buf_addf(&got, "', already named by rules[%zu]", p->pats[k].rule);
                rc = bad(c, f.p, "each tool name in one rule only", NULL,
                         got.failed ? "a repeated name" : got.p);
                common_buf_release(&got);
                goto cleanup;
            }
            if ((rc = add_pattern(p, t->valuestring, i)))
                goto cleanup;
        }
        common_buf_release(&f);
        common_buf_addf(&f, "%s.offload", idx);
        if (f.failed) {
            rc = ENOMEM;
            goto cleanup;
        }
        if (!off) {
            rc = bad(c, f.p, "\"always\", \"never\" or {\"over_bytes\": N}", NULL, "nothing (it is required)");
            goto cleanup;
        }
        if ((rc = parse_offload(c, off, f.p, &p->rules[i])))
            goto cleanup;
        p->nrules++;
    }
cleanup:
    common_buf_release(&f);
    return rc;
}

static int set_default_rules(common_policy *p)
{
    p->rules = calloc(1, sizeof *p->rules);
    if (!p->rules)
        return ENOMEM;
    p->rules[0].kind = COMMON_OFFLOAD_OVER_BYTES;
    p->rules[0].limit = DEFAULT_OVER_BYTES;
    p->nrules = 1;
    return add_pattern(p, "*", 0);
}

static int parse_top(pctx *c, const cJSON *root)
{
    static const char *const known[] = {"mount", "namespace", "preview", "rules", NULL};
    const cJSON *m;
    int rc;
    if (!cJSON_IsObject(root)) {
        common_buf_adds(&c->msg, "config '");
        common_buf_add_printable(&c->msg, c->origin, strlen(c->origin));
        common_buf_addf(&c->msg, "': expected a JSON object at the top, got %s", json_kind(root));
        return COMMON_ECONFIG;
    }
    if ((rc = check_members(c, root, "", known)))
        return rc;
    if ((m = cJSON_GetObjectItemCaseSensitive(root, "mount"))) {
        if (!cJSON_IsString(m) || m->valuestring[0] != '/')
            return bad(c, "mount", "an absolute path such as \"/large_tool_results\"", m, NULL);
        if (!(c->pol->mount = strdup(m->valuestring)))
            return ENOMEM;
    }
    if ((m = cJSON_GetObjectItemCaseSensitive(root, "namespace"))) {
        if (!cJSON_IsString(m))
            return bad(c, "namespace", "a namespace name (a string)", m, NULL);
        const char *why = c->ns_check ? c->ns_check(m->valuestring) : NULL;
        if (why) {
            common_buf w = {0};
            common_buf_addf(&w, "a valid namespace, but it %s", why);
            rc = bad(c, "namespace", w.failed ? "a valid namespace" : w.p, m, NULL);
            common_buf_release(&w);
            return rc;
        }
        if (!(c->pol->ns = strdup(m->valuestring)))
            return ENOMEM;
    }
    if ((m = cJSON_GetObjectItemCaseSensitive(root, "preview")) &&
        (rc = parse_preview(c, m)))
        return rc;
    if ((m = cJSON_GetObjectItemCaseSensitive(root, "rules")))
        return parse_rules(c, m);
    return set_default_rules(c->pol);
}

static common_policy *policy_new(void)
{
    common_policy *p = calloc(1, sizeof *p);
    if (p)
        p->pv = default_preview;
    return p;
}

void common_policy_free(common_policy *pol)
{
    if (!pol)
        return;
    for (size_t i = 0; i < pol->npats; i++)
        free(pol->pats[i].name);
    free(pol->pats);
    free(pol->rules);
    free(pol->path);
    free(pol->mount);
    free(pol->ns);
    free(pol);
}

static int finish(pctx *c, int rc, common_policy **out, char **errmsg)
{
    if (rc == 0) {
        *out = c->pol;
        common_buf_release(&c->msg);
        return 0;
    }
    common_policy_free(c->pol);
    if (rc == ENOMEM) {
        common_buf_release(&c->msg);
        return ENOMEM;
    }
    if (errmsg && common_buf_detach(&c->msg, errmsg, NULL) != 0)
        return ENOMEM;
    common_buf_release(&c->msg);
    return rc;
}

/* Offset of the first NUL the policy would hide, or LEN: a raw zero byte
 * (cJSON skips it as if it were a space, or ends a string at it) or a
 * \u0000 escape inside a string. cJSON hands strings over as C strings, so
 * either would silently cut a name short: "a\u0000b" would read as "a".
 * Found by tests/fuzz/fuzz_config.c. */
static size_t nul_offset(const char *text, size_t len)
{
    int in_string = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\0')
            return i;
        if (!in_string) {
            in_string = text[i] == '"';
        } else if (text[i] == '"') {
            in_string = 0;
        } else if (text[i] == '\\' && i + 1 < len) {
            if (text[i + 1] == 'u' && len - i >= 6 && !memcmp(text + i + 2, "0000", 4))
                return i;
            i++; /* the escaped character */
        }
    }
    return len;
}

/* Line and column (from 1) of byte OFF of TEXT. */
static void line_col(const char *text, size_t off, size_t *line, size_t *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

int common_policy_parse(common_policy **out, const char *text, size_t len, const char *origin,
                        common_name_check_fn ns_check, char **errmsg)
{
    pctx c = {origin ? origin : "<string>", {0}, NULL, ns_check};
    const char *end = NULL;
    cJSON *root = NULL;
    int rc;

    if (errmsg)
        *errmsg = NULL;
    if (!out)
        return EINVAL;
    *out = NULL;
    if (!(c.pol = policy_new()))
        return ENOMEM;
    if (text && nul_offset(text, len) < len) {
        size_t line, col;
        line_col(text, nul_offset(text, len), &line, &col);
        common_buf_adds(&c.msg, "config '");
        common_buf_add_printable(&c.msg, c.origin, strlen(c.origin));
        common_buf_addf(&c.msg, "': line %zu, column %zu: expected no NUL character "
                    "(a zero byte or \\u0000)", line, col);
        rc = COMMON_ECONFIG;
        goto done;
    }
    root = cJSON_ParseWithLengthOpts(text ? text : "", text ? len : 0, &end, 0);
    if (!root) {
        size_t off = end && text && end >= text ? (size_t)(end - text) : 0;
        size_t line, col;
        line_col(text ? text : "", off < len ? off : len, &line, &col);
        common_buf_adds(&c.msg, "config '");
        common_buf_add_printable(&c.msg, c.origin, strlen(c.origin));
        if (len == 0)
            common_buf_adds(&c.msg, "': expected a JSON object, got an empty file");
        else
            common_buf_addf(&c.msg, "': not valid JSON (line %zu, column %zu)", line, col);
        rc = COMMON_ECONFIG;
        goto done;
    }
    /* Trailing bytes after the object are a malformed file too. */
    if (end) {
        while ((size_t)(end - text) < len && strchr(" \t\r\n", *end) && *end)
            end++;
        if ((size_t)(end - text) < len) {
            common_buf_adds(&c.msg, "config '");
            common_buf_add_printable(&c.msg, c.origin, strlen(c.origin));
            common_buf_adds(&c.msg, "': not valid JSON (text after the top-level object)");
            rc = COMMON_ECONFIG;
            goto done;
        }
    }
    rc = parse_top(&c, root);
done:
    cJSON_Delete(root);
    return finish(&c, rc, out, errmsg);
}

int common_policy_load(common_policy **out, const char *path, common_name_check_fn ns_check,
                       char **errmsg)
{
    char *text = NULL;
    size_t len = 0;
    int rc;

    if (errmsg)
        *errmsg = NULL;
    if (!out)
        return EINVAL;
    *out = NULL;
    if (!path)
        path = common_env("OFFLOADFS_CONFIG");
    if (!path || !*path) {
        common_policy *p = policy_new();
        if (!p || set_default_rules(p)) {
            common_policy_free(p);
            return ENOMEM;
        }
        *out = p;
        return 0;
    }
    rc = common_file_read(path, CONFIG_MAX, &text, &len);
    if (rc) {
        if (rc == ENOMEM)
            return rc;
        if (errmsg) {
            common_buf m = {0};
            common_buf_adds(&m, "config '");
            common_buf_add_printable(&m, path, strlen(path));
            if (rc == EFBIG)
                common_buf_adds(&m, "': expected a policy file of at most 1 MiB");
            else
                common_buf_addf(&m, "': cannot read it: %s", common_strerror(rc));
            if (common_buf_detach(&m, errmsg, NULL))
                return ENOMEM;
        }
        return COMMON_ECONFIG;
    }
    rc = common_policy_parse(out, text, len, path, ns_check, errmsg);
    free(text);
    if (rc == 0 && !((*out)->path = strdup(path))) {
        common_policy_free(*out);
        *out = NULL;
        return ENOMEM;
    }
    return rc;
}

const char *common_policy_path(const common_policy *pol)
{
    return pol ? pol->path : NULL;
}

const char *common_policy_mount(const common_policy *pol)
{
    return pol ? pol->mount : NULL;
}

const char *common_policy_namespace(const common_policy *pol)
{
    return pol ? pol->ns : NULL;
}

void common_policy_preview(const common_policy *pol, common_preview *out)
{
    *out = pol ? pol->pv : default_preview;
}

/* '*' matches any run of characters (bytes); everything else itself. */
static int glob_match(const char *pat, const char *s)
{
    const char *star = NULL, *resume = NULL;
    while (*s) {
        if (*pat == '*') {
            star = pat++;
            resume = s;
        } else if (*pat == *s) {
            pat++;
            s++;
        } else if (star) {
            pat = star + 1;
            s = ++resume;
        } else {
            return 0;
        }
    }
    while (*pat == '*')
        pat++;
    return *pat == '\0';
}


int common_policy_rule(const common_policy *pol, const char *tool, int *kind, uint64_t *limit)
{
    static const rule default_rule = {COMMON_OFFLOAD_OVER_BYTES, DEFAULT_OVER_BYTES};
    const rule *r = NULL;

    if (!pol) {
        r = &default_rule;
    } else {
        const pattern *best = NULL;
        const char *name = tool ? tool : "";
        for (size_t i = 0; i < pol->npats; i++) {
            const pattern *p = &pol->pats[i];
            if (p->exact ? strcmp(p->name, name) != 0 : !glob_match(p->name, name))
                continue;
            /* Exact beats any pattern; more literal characters beat fewer;
             * on a tie the earlier rule (patterns are in file order) wins. */
            if (!best || (p->exact && !best->exact) ||
                (p->exact == best->exact && p->literal > best->literal) ||
                (p->exact == best->exact && p->literal == best->literal && p->rule < best->rule))
                best = p;
        }
        if (best)
            r = &pol->rules[best->rule];
    }
    if (kind)
        *kind = r ? r->kind : COMMON_OFFLOAD_NEVER;
    if (limit)
        *limit = r ? r->limit : 0;
    return r != NULL;
}

int common_tool_name_ok(const char *tool)
{
    const unsigned char *s = (const unsigned char *)tool;
    size_t len;
    if (!tool)
        return 0;
    len = strlen(tool);
    if (len == 0 || len > COMMON_TOOL_MAX)
        return 0;
    for (size_t i = 0; i < len;) {
        size_t n = common_utf8_len(s + i, len - i);
        if (n == 0 || s[i] < 0x20 || s[i] == 0x7f)
            return 0;
        i += n;
    }
    return 1;
}
