/* main.c -- build/agentlink, the command line over libagentlink: the
 * options, the command table, and main().
 *
 * Exit codes: 0 ok, 1 failure, 2 bad usage or invalid input, 3 no such
 * key, 4 key evicted, 5 pending for the remote, 6 the remote could not
 * answer. Data goes to stdout, messages to stderr; every
 * message says what is wrong first and quotes its subject (cli.h). */
#include "agentlink/cli/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char usage_text[] =
    "usage: agentlink [OPTIONS] COMMAND [ARGS]\n"
    "\n"
    "Offload large tool results into an offloadfs store; each live result is a\n"
    "file under the mount (/large_tool_results/KEY).\n"
    "\n"
    "Commands:\n"
    "  init [--max-total-bytes N] [--max-result-bytes N] [--compression zstd|none]\n"
    "                        create the store, or change its limits or how\n"
    "                        later results are stored (zstd: the default)\n"
    "  put KEY [--tool NAME] [--file PATH] [--max-input-bytes N]\n"
    "                        store stdin (or PATH) under KEY, print its path\n"
    "  offload --tool NAME --call-id RAW [--config FILE] [--max-input-bytes N]\n"
    "                        apply the offload policy to the result on stdin;\n"
    "                        print the result unchanged or the pointer text\n"
    "  key RAW               print the key derived from a raw tool call id\n"
    "  get KEY               write the stored bytes to stdout\n"
    "  ls                    one line per live entry: key, size, tool (tab-separated)\n"
    "  stat KEY              size, tool, created, original size, truncated\n"
    "  rm KEY...             remove keys\n"
    "  drop-referenced       remove every entry whose path appears in stdin\n"
    "  stats [--prometheus]  entries, bytes, limits, evictions; --prometheus: the\n"
    "                        store's metrics in Prometheus' text format\n"
    "  init --remote s3://BUCKET[/PREFIX] | --remote none\n"
    "                        record the store's remote tier (checked first), or\n"
    "                        drop it (doc/remote.md; AWS_* variables, ~/.aws)\n"
    "  sync                  send what is pending for the remote (uploads, tombstones)\n"
    "  gc --remote [--max-age SECONDS] [--max-bytes N]\n"
    "                        remove the remote's results older than SECONDS or\n"
    "                        the oldest beyond N bytes, leaving tombstones\n"
    "  import DIR [--tool NAME] [--keep]\n"
    "                        move a directory of spilled result files (one file\n"
    "                        per result, key = file name) into the store; --keep\n"
    "                        leaves the originals in place\n"
    "  mcp-proxy [--no-read-tool] -- COMMAND [ARG...]\n"
    "                        relay an MCP stdio server, offloading large tool\n"
    "                        results (agentlink mcp-proxy --help)\n"
    "\n"
    "Options:\n"
    "  --store DIR           store directory (else $OFFLOADFS_STORE, else\n"
    "                        /var/lib/offloadfs as root, else\n"
    "                        ${XDG_STATE_HOME:-$HOME/.local/state}/offloadfs)\n"
    "  --namespace NS        namespace (else $OFFLOADFS_NAMESPACE, the config, \"default\")\n"
    "  --mount DIR           where offloadfs shows the store (else $OFFLOADFS_MOUNT,\n"
    "                        the config, /large_tool_results)\n"
    "  --config FILE         offload policy (else $OFFLOADFS_CONFIG, else built-in)\n"
    "  --json                machine-readable output on stdout\n"
    "  -h, --help            this text\n"
    "  -V, --version         the version\n"
    "\n"
    "Sizes are bytes, or take K, M, G (powers of 1024). put, offload and\n"
    "drop-referenced refuse an input over --max-input-bytes (default 1G).\n"
    "Exit: 0 ok, 1 failure, 2 bad usage or input, 3 no such key, 4 key evicted,\n"
    "5 done here but not on the store's remote (pending: agentlink sync),\n"
    "6 the store's remote could not be reached or refused (the answer is unknown).\n";

/* ---- options --------------------------------------------------------- */
enum {
    OPT_STORE = 256, OPT_NAMESPACE, OPT_MOUNT, OPT_CONFIG, OPT_JSON, OPT_TOOL,
    OPT_FILE, OPT_CALL_ID, OPT_MAX_TOTAL, OPT_MAX_RESULT, OPT_KEEP, OPT_MAX_INPUT,
    OPT_COMPRESSION, OPT_PROMETHEUS, OPT_REMOTE, OPT_GC_REMOTE, OPT_MAX_AGE, OPT_MAX_BYTES,
};

/* A command: RUN gets the parsed options and its arguments; WHOLE, when
 * set, gets the whole command line instead and parses it itself. */
typedef struct cmd {
    const char *name;
    int (*run)(opts *o, int argc, char **argv);
    int min_args, max_args; /* -1: any */
    unsigned allowed;       /* O_* */
    const char *args;       /* for the usage message */
    int (*whole)(int argc, char **argv);
} cmd;

/* The commands; O_* bits (cli.h) say which options each may take. */
static const cmd commands[] = {
    {"init", cmd_init, 0, 0, O_MAXT | O_MAXR | O_COMP | O_REMO, "", NULL},
    {"put", cmd_put, 1, 1, O_TOOL | O_FILE | O_MAXI, " KEY", NULL},
    {"offload", cmd_offload, 0, 0, O_TOOL | O_CALL | O_MAXI, "", NULL},
    {"key", cmd_key, 1, 1, 0, " RAW", NULL},
    {"get", cmd_get, 1, 1, 0, " KEY", NULL},
    {"ls", cmd_ls, 0, 0, 0, "", NULL},
    {"stat", cmd_stat, 1, 1, 0, " KEY", NULL},
    {"rm", cmd_rm, 1, -1, 0, " KEY...", NULL},
    {"drop-referenced", cmd_drop, 0, 0, O_MAXI, "", NULL},
    {"stats", cmd_stats, 0, 0, O_PROM, "", NULL},
    {"import", cmd_import, 1, 1, O_TOOL | O_KEEP, " DIR", NULL},
    {"sync", cmd_sync, 0, 0, 0, "", NULL},
    {"gc", cmd_gc, 0, 0, O_GCRM | O_AGE | O_MAXB, " --remote [--max-age SECONDS] [--max-bytes N]", NULL},
    {"mcp-proxy", NULL, 0, -1, 0, "", cmd_mcp_proxy},
};

static const char *const opt_names[] = {"--tool", "--file", "--call-id",
                                        "--max-total-bytes", "--max-result-bytes",
                                        "--keep", "--max-input-bytes", "--compression",
                                        "--prometheus", "--remote", "--remote", "--max-age",
                                        "--max-bytes"};

/* The command of the command line ARGC, ARGV, when it is one that parses
 * the whole line itself (mcp-proxy), else NULL: the first argument that is
 * neither an option nor an option's value (LONGOPTS says which options take
 * one: "--tool mcp-proxy" names a tool), before any "--". */
static const cmd *whole_command(int argc, char **argv, const struct option *longopts)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            return NULL;
        if (a[0] == '-') {
            for (const struct option *o = longopts; a[1] == '-' && o->name; o++)
                if (o->has_arg == required_argument && strcmp(a + 2, o->name) == 0)
                    i++;
            continue;
        }
        for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++)
            if (commands[k].whole && strcmp(a, commands[k].name) == 0)
                return &commands[k];
        return NULL;
    }
    return NULL;
}

/* "gc --remote" takes no value, "init --remote URL" does: for gc, the
 * flag is read as the internal --remote-tier. */
static void gc_flag(int argc, char **argv, const struct option *longopts)
{
    int i, is_gc = 0;
    for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *a = argv[i];
        if (a[0] != '-') {
            is_gc = strcmp(a, "gc") == 0;
            break;
        }
        for (const struct option *o = longopts; a[1] == '-' && o->name; o++)
            if (o->has_arg == required_argument && strcmp(a + 2, o->name) == 0)
                i++;
    }
    for (i = 1; is_gc && i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--remote") == 0)
            argv[i] = (char *)"--remote-tier";
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"store", required_argument, NULL, OPT_STORE},
        {"namespace", required_argument, NULL, OPT_NAMESPACE},
        {"mount", required_argument, NULL, OPT_MOUNT},
        {"config", required_argument, NULL, OPT_CONFIG},
        {"json", no_argument, NULL, OPT_JSON},
        {"tool", required_argument, NULL, OPT_TOOL},
        {"file", required_argument, NULL, OPT_FILE},
        {"call-id", required_argument, NULL, OPT_CALL_ID},
        {"max-total-bytes", required_argument, NULL, OPT_MAX_TOTAL},
        {"max-result-bytes", required_argument, NULL, OPT_MAX_RESULT},
        {"keep", no_argument, NULL, OPT_KEEP},
        {"max-input-bytes", required_argument, NULL, OPT_MAX_INPUT},
        {"compression", required_argument, NULL, OPT_COMPRESSION},
        {"prometheus", no_argument, NULL, OPT_PROMETHEUS},
        {"remote", required_argument, NULL, OPT_REMOTE},
        {"remote-tier", no_argument, NULL, OPT_GC_REMOTE}, /* gc --remote, see gc_flag() */
        {"max-age", required_argument, NULL, OPT_MAX_AGE},
        {"max-bytes", required_argument, NULL, OPT_MAX_BYTES},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    opts o = {0};
    const cmd *c = NULL;
    int ch, nargs;

    c = whole_command(argc, argv, longopts); /* its own options and the server's argv */
    if (c)
        return c->whole(argc, argv);
    gc_flag(argc, argv, longopts);
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":hV", longopts, NULL)) != -1) {
        switch (ch) {
        case OPT_STORE:
            if (!*optarg)
                return cli_usage_error("--store needs a directory, got ''");
            o.store = optarg;
            break;
        case OPT_NAMESPACE: o.ns = optarg; break;
        case OPT_MOUNT: o.mount = optarg; break;
        case OPT_CONFIG: o.config = optarg; break;
        case OPT_JSON: o.json = 1; cli_report_json(1); break;
        case OPT_TOOL: o.tool = optarg; o.given |= O_TOOL; break;
        case OPT_FILE: o.file = optarg; o.given |= O_FILE; break;
        case OPT_CALL_ID: o.call_id = optarg; o.given |= O_CALL; break;
        case OPT_MAX_TOTAL: o.max_total = optarg; o.given |= O_MAXT; break;
        case OPT_MAX_RESULT: o.max_result = optarg; o.given |= O_MAXR; break;
        case OPT_KEEP: o.keep = 1; o.given |= O_KEEP; break;
        case OPT_MAX_INPUT: o.max_input = optarg; o.given |= O_MAXI; break;
        case OPT_COMPRESSION: o.compression = optarg; o.given |= O_COMP; break;
        case OPT_PROMETHEUS: o.prometheus = 1; o.given |= O_PROM; break;
        case OPT_REMOTE: o.remote = optarg; o.given |= O_REMO; break;
        case OPT_GC_REMOTE: o.given |= O_GCRM; break;
        case OPT_MAX_AGE: o.max_age = optarg; o.given |= O_AGE; break;
        case OPT_MAX_BYTES: o.max_bytes = optarg; o.given |= O_MAXB; break;
        case 'h':
            fputs(usage_text, stdout);
            return fflush(stdout) == 0 ? EX_OK : EX_FAIL;
        case 'V':
            printf("agentlink %s\n", al_version());
            return fflush(stdout) == 0 ? EX_OK : EX_FAIL;
        case ':':
            return cli_usage_error("option '%s' needs a value", cli_quote(argv[optind - 1]));
        default:
            if (optopt && !strncmp(argv[optind - 1], "--", 2)) /* --json=1 */
                return cli_usage_error("option '%s' takes no value", cli_quote(argv[optind - 1]));
            if (optopt)
                return cli_usage_error("unknown option '-%c'", optopt);
            return cli_usage_error("unknown option '%s'", cli_quote(argv[optind - 1]));
        }
    }
    if (optind >= argc)
        return cli_usage_error("no command given");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!commands[i].whole && strcmp(argv[optind], commands[i].name) == 0)
            c = &commands[i];
    if (!c)
        return cli_usage_error("unknown command '%s'", cli_quote(argv[optind]));
    for (unsigned b = 0; b < sizeof opt_names / sizeof opt_names[0]; b++)
        if ((o.given & (1u << b)) && !(c->allowed & (1u << b)))
            return cli_usage_error("%s does not take %s", c->name, opt_names[b]);
    nargs = argc - optind - 1;
    if (nargs < c->min_args || (c->max_args >= 0 && nargs > c->max_args))
        return cli_usage_error("usage: agentlink %s%s", c->name, c->args);
    return c->run(&o, nargs, argv + optind + 1);
}
