/* policy.h -- the offload policy file (the JSON of doc/contract.md,
 * "Offload policy"), loaded and parsed once for every program: the
 * library's al_policy_load() is this loader, and the daemon reads the same
 * file with it to resolve its namespace, so a file one program refuses
 * the other refuses with the same message.
 *
 * Caveats:
 * - The parser is strict on purpose: an unknown or repeated field, a wrong
 *   type or a value out of range refuses the whole file (COMMON_ECONFIG
 *   with a message naming the file and the field). A typo would otherwise
 *   silently fall back to a default and offload (or keep) the wrong
 *   results.
 * - Whether a namespace name is valid is the store's rule, not common/'s:
 *   the caller passes it in (NS_CHECK), so the leaf depends on nothing of
 *   ours. Tool names are checked here (common_tool_name_ok()).
 * - A common_policy is immutable once loaded: any number of threads may
 *   read it at once.
 * - The library's al_policy wraps one (agentlink/policy.c); deciding
 *   whether a result is offloaded (which counts characters) stays in the
 *   library: here is only which rule applies to a tool.
 *
 * Errors: 0, COMMON_ECONFIG (common/error.h), EINVAL, ENOMEM. */
#ifndef OFFLOADFS_COMMON_POLICY_H
#define OFFLOADFS_COMMON_POLICY_H

#include <stddef.h>
#include <stdint.h>

typedef struct common_policy common_policy;

/* How many lines the pointer text previews, and how long each may be
 * (the fields of al_preview, in the same order). */
typedef struct common_preview {
    unsigned head_lines;     /* default 5 */
    unsigned tail_lines;     /* default 5 */
    unsigned max_line_chars; /* default 1000, code points */
} common_preview;

/* The kinds of rule: the values of agentlink.h's AL_OFFLOAD_*. */
#define COMMON_OFFLOAD_NEVER 0
#define COMMON_OFFLOAD_ALWAYS 1
#define COMMON_OFFLOAD_OVER_CHARS 2
#define COMMON_OFFLOAD_OVER_BYTES 3
#define COMMON_OFFLOAD_OVER_TOKENS 4

/* The longest tool name, in bytes (the store's STORE_TOOL_MAX). */
#define COMMON_TOOL_MAX 255u

/* Says whether NAME may be a namespace: NULL when it may, else why not as
 * a phrase that follows "it" ("contains '/'"). */
typedef const char *(*common_name_check_fn)(const char *name);

/* 1 when TOOL is a valid tool name (1 to COMMON_TOOL_MAX bytes of UTF-8
 * without control characters), else 0 (also for NULL). */
int common_tool_name_ok(const char *tool);

/* Loads the policy file PATH. PATH NULL: $OFFLOADFS_CONFIG when it is set
 * and not empty, else the built-in default; PATH "": the built-in default
 * (no mount, no namespace, preview 5/5/1000, one rule offloading every
 * tool over 32768 bytes). A file larger than 1 MiB is refused. NS_CHECK
 * (may be NULL: none) judges the file's "namespace".
 * On success *OUT is a policy you own (common_policy_free()). Errors:
 * COMMON_ECONFIG (unreadable, not JSON, unknown field, wrong type or
 * value), ENOMEM, EINVAL (OUT NULL). On COMMON_ECONFIG and when ERRMSG is
 * not NULL, *ERRMSG is a message you own (free()) naming the file, the
 * field and what was expected ("config 'p.json': field 'rules[1].offload':
 * expected ..."); otherwise *ERRMSG is set to NULL. */
int common_policy_load(common_policy **out, const char *path, common_name_check_fn ns_check,
                       char **errmsg);

/* As common_policy_load() for LEN bytes of JSON at TEXT; ORIGIN names them
 * in messages ("config 'ORIGIN': ..."), NULL reads "<string>". */
int common_policy_parse(common_policy **out, const char *text, size_t len, const char *origin,
                        common_name_check_fn ns_check, char **errmsg);

/* Releases a policy (NULL is fine). */
void common_policy_free(common_policy *pol);

/* The file the policy came from (NULL for the built-in default or a
 * parsed text), its "mount" and "namespace" (NULL when the file does not
 * set them). Valid until common_policy_free(). POL may be NULL: NULL. */
const char *common_policy_path(const common_policy *pol);
const char *common_policy_mount(const common_policy *pol);
const char *common_policy_namespace(const common_policy *pol);

/* Fills *OUT with the policy's preview settings (the defaults for POL
 * NULL). */
void common_policy_preview(const common_policy *pol, common_preview *out);

/* The rule that applies to tool TOOL (NULL: only "*"-style patterns
 * match): a rule naming TOOL exactly beats any pattern, a pattern with
 * more literal characters beats one with fewer, and between equals the
 * earlier rule wins. POL NULL is the built-in default. Returns 1 and sets
 * *KIND (COMMON_OFFLOAD_*) and *LIMIT (the threshold of the over_* kinds),
 * each may be NULL; 0 when no rule matches (*KIND COMMON_OFFLOAD_NEVER,
 * *LIMIT 0). Never fails. */
int common_policy_rule(const common_policy *pol, const char *tool, int *kind, uint64_t *limit);

#endif
