/* fuzz_config.c -- libFuzzer target: agentlink's offload policy parser.
 *
 * Any bytes given to al_policy_parse() are either a policy or AL_ECONFIG
 * with a message; never a crash, a leak or an out-of-bounds read (ASan).
 * - a refusal comes with a message that starts with "config 'fuzz': ",
 *   is valid UTF-8 and holds no control character (it goes to a terminal);
 * - an accepted policy holds no JSON string with a \u0000 escape: C
 *   strings would silently cut such a name short ("a\u0000b" read as
 *   "a"), so it must be refused (found by this target; fixed in policy.c);
 * - an accepted policy has a namespace that passes the key rules and a
 *   mount that is an absolute path, preview settings in their documented
 *   ranges, and answers al_policy_decide() for any tool and data without
 *   failing; an empty result is never offloaded. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agentlink/agentlink.h"
#include "agentlink/internal.h"
#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int printable_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t q = store_utf8_len(p + i, n - i);
        if (q == 0 || p[i] < 0x20 || p[i] == 0x7f)
            return 0;
        i += q;
    }
    return 1;
}

/* Whether some JSON string in the text holds the escape \u0000. */
static int has_nul_escape(const uint8_t *p, size_t n)
{
    int in_string = 0;
    for (size_t i = 0; i < n; i++) {
        if (!in_string) {
            in_string = p[i] == '"';
        } else if (p[i] == '"') {
            in_string = 0;
        } else if (p[i] == '\\' && i + 1 < n) {
            if (p[i + 1] == 'u' && i + 5 < n && !memcmp(p + i + 2, "0000", 4))
                return 1;
            i++; /* the escaped character */
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const tools[] = {"web_search", "get_time", "read_file", "bash",
                                        "", "a*b", "*", "x"};
    al_policy *pol = NULL;
    char *err = NULL;
    al_preview pv;
    int rc = al_policy_parse(&pol, (const char *)data, size, "fuzz", &err);

    if (rc == AL_ECONFIG) {
        if (pol || !err || strncmp(err, "config 'fuzz': ", 15) != 0 || !printable_utf8(err))
            __builtin_trap();
        al_free(err);
        return 0;
    }
    if (rc != 0 || !pol || err || has_nul_escape(data, size))
        __builtin_trap();
    const char *ns = al_policy_namespace(pol), *mount = al_policy_mount(pol);
    if (ns && store_name_check(ns, strlen(ns)) != 0)
        __builtin_trap();
    if (mount && mount[0] != '/')
        __builtin_trap();
    al_policy_preview(pol, &pv);
    if (pv.head_lines > 1000 || pv.tail_lines > 1000 || pv.max_line_chars < 1
        || pv.max_line_chars > 100000)
        __builtin_trap();
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        int kind = -1;
        uint64_t limit = 0;
        int d = al_policy_decide(pol, tools[i], data, size, &kind, &limit);
        if ((d != 0 && d != 1) || kind < AL_OFFLOAD_NEVER || kind > AL_OFFLOAD_OVER_TOKENS)
            __builtin_trap();
        if (al_policy_decide(pol, tools[i], data, 0, NULL, NULL) != 0)
            __builtin_trap();
        if (kind == AL_OFFLOAD_NEVER && d)
            __builtin_trap();
    }
    al_policy_free(pol);
    return 0;
}
