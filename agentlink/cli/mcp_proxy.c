/* mcp_proxy.c -- "agentlink mcp-proxy": the command line of the MCP proxy.
 *
 *   agentlink [--store DIR] ... mcp-proxy [--store DIR] [--namespace NS]
 *       [--mount DIR] [--config FILE] [--no-read-tool] -- COMMAND [ARG...]
 *
 * It parses its own options (main.c hands over the whole command line when
 * the command is mcp-proxy: the server's arguments must never be read as
 * agentlink's), opens the policy and the store, and runs the relay. A
 * store that cannot be opened does not stop the proxy: results then pass
 * unchanged, and stderr says why. */
#include "agentlink/cli/cli.h"
#include "agentlink/mcp/mcp.h"
#include "common/env.h"
#include "common/settings.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char mcp_usage[] =
    "usage: agentlink mcp-proxy [--store DIR] [--namespace NS] [--mount DIR]\n"
    "                           [--config FILE] [--no-read-tool] -- COMMAND [ARG...]\n"
    "\n"
    "Runs COMMAND, an MCP server speaking the stdio transport, and relays the MCP\n"
    "session between this process's stdin/stdout (the client) and the server.\n"
    "tools/call results over the offload policy go to the store; the client gets\n"
    "the pointer text in their place. tools/list gains the tool\n"
    "read_offloaded_result (unless --no-read-tool), answered by the proxy.\n"
    "OFFLOADFS_MCP_MAX_MESSAGE: the largest message relayed (default 2G).\n"
    "Exit status: the server's (128+N when signal N ended it), 127 when COMMAND\n"
    "is not found, 126 when it cannot be run, 2 for bad usage.\n";

enum { M_STORE = 256, M_NAMESPACE, M_MOUNT, M_CONFIG, M_NO_READ, M_JSON };

static int mcp_usage_error(const char *what, const char *subject)
{
    fprintf(stderr, "agentlink: mcp-proxy: %s%s%s%s\n", what, subject ? " '" : "",
            subject ? subject : "", subject ? "'" : "");
    fputs("agentlink: try 'agentlink mcp-proxy --help'\n", stderr);
    return 2;
}

/* Warns once at start when the store's mount does not serve this store and
 * namespace (al_store_mount_check: the mount says what it serves): the
 * pointers would name paths that lead nowhere, or to other results. */
static void mount_warn(const al_store *h)
{
    al_mount_info info = {0};
    int rc = al_store_mount_check(h, 2000, &info);
    if (rc && rc != ENOMEM)
        fprintf(stderr, "agentlink: mcp-proxy: warning: the pointers name paths under the "
                "mount '%s', which does not serve store '%s' namespace '%s': %s; mount the "
                "store there or give --mount\n", al_store_mount(h), al_store_dir(h),
                al_store_namespace(h), info.why ? info.why : al_strerror(rc));
    al_mount_info_release(&info);
}

/* Fills a closed stdin, stdout or stderr with /dev/null (as fs/mount.c
 * does for the daemon), before anything opens a descriptor: else the
 * store's files or the proxy's pipes would take those numbers, the relay
 * would write the client's messages into them, and the server would start
 * without its stdin or stdout. */
static void stdio_fill(void)
{
    int fd;
    do
        fd = open("/dev/null", O_RDWR);
    while (fd >= 0 && fd <= STDERR_FILENO);
    if (fd >= 0)
        close(fd);
}

int cmd_mcp_proxy(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"store", required_argument, NULL, M_STORE},
        {"namespace", required_argument, NULL, M_NAMESPACE},
        {"mount", required_argument, NULL, M_MOUNT},
        {"config", required_argument, NULL, M_CONFIG},
        {"no-read-tool", no_argument, NULL, M_NO_READ},
        {"json", no_argument, NULL, M_JSON},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *dir = NULL, *ns = NULL, *mount = NULL, *config = NULL;
    int read_tool = 1, seen_cmd = 0, ch, rc, ex;
    al_policy *pol = NULL;
    al_store *h = NULL;
    mcp_rewriter *rw = NULL;
    common_settings set = {0};
    char *err = NULL;
    const char *env_max;
    uint64_t max_message = 0;

    stdio_fill();
    opterr = 0;
    optind = 1;
    /* "+": stop at the first argument that is not an option: the command
     * name, then the server's command line. */
    for (;;) {
        while ((ch = getopt_long(argc, argv, "+:hV", longopts, NULL)) != -1) {
            switch (ch) {
            case M_STORE:
                if (!*optarg)
                    return mcp_usage_error("--store needs a directory, got ''", NULL);
                dir = optarg;
                break;
            case M_NAMESPACE: ns = optarg; break;
            case M_MOUNT: mount = optarg; break;
            case M_CONFIG: config = optarg; break;
            case M_NO_READ: read_tool = 0; break;
            case M_JSON: break; /* a common flag: nothing to print here */
            case 'h':
                fputs(mcp_usage, stdout);
                return fflush(stdout) == 0 ? 0 : 1;
            case 'V':
                printf("agentlink %s\n", al_version());
                return fflush(stdout) == 0 ? 0 : 1;
            case ':':
                return mcp_usage_error("option needs a value:", argv[optind - 1]);
            default:
                return mcp_usage_error("unknown option", argv[optind - 1]);
            }
        }
        if (seen_cmd || optind >= argc || strcmp(argv[optind - 1], "--") == 0)
            break;
        /* argv[optind] is "mcp-proxy" (main.c's whole_command() said so). */
        seen_cmd = 1;
        optind++;
    }
    if (optind >= argc)
        return mcp_usage_error("no server command given: agentlink mcp-proxy [OPTIONS] -- "
                               "COMMAND [ARG...]", NULL);

    env_max = common_env(MCP_MAX_MESSAGE_ENV);
    if (env_max && (al_size_parse(env_max, &max_message) || max_message == 0)) {
        fprintf(stderr, "agentlink: mcp-proxy: %s '%s' is not a size: bytes, or a number "
                "with K, M or G\n", MCP_MAX_MESSAGE_ENV, env_max);
        return 2;
    }
    rc = al_policy_load(&pol, config, &err);
    if (rc == AL_ECONFIG) {
        fprintf(stderr, "agentlink: mcp-proxy: %s\n", err ? err : "config refused");
        al_free(err);
        return 2;
    }
    if (rc) {
        fprintf(stderr, "agentlink: mcp-proxy: cannot load the offload policy: %s\n",
                al_strerror(rc));
        return 1;
    }
    common_settings_resolve(&set, dir, ns, mount, al_policy_common(pol)); /* failures: al_store_open says */
    rc = al_store_open(&h, common_settings_store(&set), set.ns, set.mount, pol);
    if (al_err_is_name(rc) || rc == AL_EMOUNT) {
        if (rc == AL_EMOUNT)
            fprintf(stderr, "agentlink: mcp-proxy: mount '%s' is not an absolute path\n",
                    set.mount);
        else
            fprintf(stderr, "agentlink: mcp-proxy: namespace '%s' %s\n", set.ns,
                    al_strerror(rc));
        ex = 2;
        goto cleanup;
    }
    if (rc) {
        fprintf(stderr, "agentlink: mcp-proxy: cannot open store '%s': %s; results pass "
                "unchanged\n", set.store ? set.store : "(default)", al_strerror(rc));
        h = NULL;
    }
    if (h)
        mount_warn(h);
    if ((rc = mcp_rewriter_new(&rw, h, pol, read_tool))) {
        fprintf(stderr, "agentlink: mcp-proxy: %s\n", al_strerror(rc));
        ex = 1;
        goto cleanup;
    }
    {
        mcp_relay_opts o = {argv + optind, rw, STDIN_FILENO, STDOUT_FILENO, max_message};
        ex = mcp_relay_run(&o);
    }
cleanup:
    mcp_rewriter_free(rw);
    al_store_close(h);
    common_settings_release(&set);
    al_policy_free(pol);
    return ex;
}
