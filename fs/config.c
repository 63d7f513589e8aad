/* config.c -- the namespace the daemon shows, chosen by the resolution
 * every program shares (common/settings.h): -o namespace= >
 * $OFFLOADFS_NAMESPACE > the policy file's "namespace" ($OFFLOADFS_CONFIG)
 * > "default".
 *
 * The pointer text agentlink offload prints names MOUNT/KEY for the
 * namespace it wrote into; a daemon that resolved the namespace any other
 * way would serve another one, and the pointer would lead to ENOENT. So the
 * policy file is read by the loader agentlink's al_policy_load() is
 * (common_policy_load(), from libcommon.a), with the same namespace rule,
 * never parsed a second way here, and a file the CLI refuses stops the
 * daemon with the loader's message. As for the CLI, the file is read
 * whenever $OFFLOADFS_CONFIG names one, even when -o or the environment
 * decides the namespace. There is no --config flag: the daemon's command
 * line is FUSE's. */
#include "fs/fs.h"
#include "common/error.h"
#include "common/policy.h"
#include "common/settings.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The store's rule for a namespace, as the policy loader asks it (the
 * library asks it the same way: agentlink/policy.c). */
static const char *ns_why(const char *ns)
{
    int rc = store_name_check(ns, strlen(ns));
    return rc ? store_strerror(rc) : NULL;
}

int ofs_namespace_resolve(char **ns)
{
    common_policy *pol = NULL;
    common_settings set;
    char *err = NULL;
    int rc = common_policy_load(&pol, NULL, ns_why, &err); /* NULL: $OFFLOADFS_CONFIG, else none */

    if (rc == COMMON_ECONFIG) {
        fprintf(stderr, "offloadfs: %s; nothing was mounted\n", err ? err : "config refused");
        free(err);
        return 1;
    }
    if (rc) {
        fprintf(stderr, "offloadfs: cannot load the offload policy: %s\n", common_strerror(rc));
        return 1;
    }
    if (!*ns) {
        /* Only the namespace is used: the store is the daemon's argument,
         * so a default store that cannot be found does not matter. */
        common_settings_resolve(&set, NULL, NULL, NULL, pol);
        if (!(*ns = strdup(set.ns)))
            fprintf(stderr, "offloadfs: out of memory\n");
        common_settings_release(&set);
    }
    common_policy_free(pol);
    return *ns ? 0 : 1;
}
