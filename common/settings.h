/* settings.h -- the store, the namespace and the mount a program works
 * with, resolved in one place for the library, the command, the MCP proxy
 * and the daemon, so a result written by one is where the others read it:
 * flag > environment ($OFFLOADFS_STORE, $OFFLOADFS_NAMESPACE,
 * $OFFLOADFS_MOUNT; an empty variable counts as unset) > policy file
 * ("namespace", "mount") > default (doc/contract.md, "Precedence
 * everywhere": the store directory below, "default", /large_tool_results).
 *
 * Caveats:
 * - Nothing is checked here (a namespace that breaks the key rules, a
 *   relative mount): the callers say which setting is at fault.
 * - The strings point into the arguments, the environment, the policy or
 *   the settings themselves: see common_settings_resolve(). */
#ifndef OFFLOADFS_COMMON_SETTINGS_H
#define OFFLOADFS_COMMON_SETTINGS_H

#include "common/policy.h"

/* The defaults (doc/contract.md): the namespace (the store's
 * STORE_DEFAULT_NAMESPACE) and the mount. The default store directory is
 * computed: /var/lib/offloadfs for root, else
 * ${XDG_STATE_HOME:-$HOME/.local/state}/offloadfs (HOME from the password
 * database when unset). */
#define COMMON_DEFAULT_NAMESPACE "default"
#define COMMON_DEFAULT_MOUNT "/large_tool_results"

/* Where a setting came from. */
enum { COMMON_FROM_FLAG, COMMON_FROM_ENV, COMMON_FROM_POLICY, COMMON_FROM_DEFAULT };

typedef struct common_settings {
    const char *ns, *mount;     /* never NULL after common_settings_resolve() */
    const char *store;          /* flag or environment, else NULL: see owned */
    int store_from, ns_from, mount_from; /* COMMON_FROM_* */
    char *owned;                /* the default store directory, when computed */
} common_settings;

/* Resolves into S the store, namespace and mount from the flags DIR, NS
 * and MOUNT (NULL: not given), the environment and the policy POL (NULL:
 * the built-in one, which names neither). The strings point into the
 * arguments, the environment or POL, or into S (owned): valid while those
 * are, and until common_settings_release(S). Returns 0; EINVAL when the
 * store is the default one and no home directory can be found (then
 * common_settings_store() is NULL; ns and mount are set); ENOMEM. Call
 * common_settings_release(S) whatever it returned. */
int common_settings_resolve(common_settings *s, const char *dir, const char *ns, const char *mount,
                            const common_policy *pol);

/* The store directory S resolved (as given, not made absolute), or NULL
 * when common_settings_resolve() could not find the default one. */
const char *common_settings_store(const common_settings *s);

/* Frees what S owns. S may be zeroed or resolved. */
void common_settings_release(common_settings *s);

#endif
