/* config.c -- the namespace the daemon shows, chosen by agentlink's own
 * resolution (al_settings_resolve): -o namespace= > $OFFLOADFS_NAMESPACE >
 * the policy file's "namespace" ($OFFLOADFS_CONFIG) > "default".
 *
 * The pointer text agentlink offload prints names MOUNT/KEY for the
 * namespace it wrote into; a daemon that resolved the namespace any other
 * way would serve another one, and the pointer would lead to ENOENT. So the
 * policy file is read by agentlink's own loader (al_policy_load, linked
 * from libagentlink.a), never parsed a second way here, and a file the CLI
 * refuses stops the daemon with the loader's message. As for the CLI, the
 * file is read whenever $OFFLOADFS_CONFIG names one, even when -o or the
 * environment decides the namespace. There is no --config flag: the
 * daemon's command line is FUSE's. */
#include "fs/fs.h"
#include "agentlink/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ofs_namespace_resolve(char **ns)
{
    al_policy *pol = NULL;
    al_settings set;
    char *err = NULL;
    int rc = al_policy_load(&pol, NULL, &err); /* NULL: $OFFLOADFS_CONFIG, else none */

    if (rc == AL_ECONFIG) {
        fprintf(stderr, "offloadfs: %s; nothing was mounted\n", err ? err : "config refused");
        al_free(err);
        return 1;
    }
    if (rc) {
        fprintf(stderr, "offloadfs: cannot load the offload policy: %s\n", al_strerror(rc));
        return 1;
    }
    if (!*ns) {
        /* Only the namespace is used: the store is the daemon's argument,
         * so a default store that cannot be found does not matter. */
        al_settings_resolve(&set, NULL, NULL, NULL, pol);
        if (!(*ns = strdup(set.ns)))
            fprintf(stderr, "offloadfs: out of memory\n");
        al_settings_release(&set);
    }
    al_policy_free(pol);
    return *ns ? 0 : 1;
}
