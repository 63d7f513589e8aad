/* report.c -- the command's messages: one line on stderr each, what is
 * wrong first, its subject quoted; the exit code for a library error; and
 * writing to stdout. */
#include "agentlink/cli/cli.h"
#include "common/buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Subjects quoted in messages: controls and invalid UTF-8 escaped. A few
 * rotating slots are enough for one message. */
const char *cli_quote(const char *s)
{
    static char *slot[4];
    static unsigned next;
    common_buf b = {0};
    char *out = NULL;
    common_buf_add_printable(&b, s ? s : "", s ? strlen(s) : 0);
    if (common_buf_detach(&b, &out, NULL))
        return "?";
    free(slot[next]);
    slot[next] = out;
    next = (next + 1) % 4;
    return out;
}

void cli_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_msg(const char *fmt, ...)
{
    va_list ap;
    fputs("agentlink: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("agentlink: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nagentlink: try 'agentlink --help'\n", stderr);
    return EX_USAGE;
}

/* With --json, errors that programs act on are also said on stdout. */
static int json_errors;
#define NO_STORE_JSON "{\"error\":\"no_store\"}\n"

void cli_report_json(int on)
{
    json_errors = on;
}

/* The message and exit code for RC from a call about key KEY (may be NULL)
 * in handle H (may be NULL). */
int cli_report(int rc, const al_store *h, const char *key)
{
    if (al_err_is_name(rc)) {
        cli_msg("key '%s' %s", cli_quote(key), al_strerror(rc));
        return EX_USAGE;
    }
    switch (rc) {
    case AL_ENOTFOUND:
        cli_msg("no such key '%s' in namespace '%s'", cli_quote(key), cli_quote(h ? al_store_namespace(h) : ""));
        return EX_NOKEY;
    case AL_ENOSTORE: /* the same for every command, whatever its key */
        if (json_errors) /* the signal for programs: the message is for people */
            (void)cli_write_all(NO_STORE_JSON, sizeof NO_STORE_JSON - 1);
        cli_msg("no store at '%s' yet: 'agentlink init' or a first write (put, offload, import) "
            "creates it", cli_quote(h ? al_store_dir(h) : ""));
        return EX_FAIL;
    case AL_ETOOL:
        cli_msg("tool name %s", al_strerror(rc));
        return EX_USAGE;
    case AL_ELIMITS:
        cli_msg("limits refused: %s", al_strerror(rc));
        return EX_USAGE;
    case AL_EUPLOAD: /* the write happened: the caller printed its output */
        cli_msg("'%s' is stored here but not yet on the remote (%s); it is pending: "
            "agentlink sync sends it", cli_quote(key ? key : ""), al_store_remote_message(h));
        return EX_REMOTE;
    case AL_EREMOTE:
        cli_msg("%s%s%sthe remote: %s", key ? "'" : "", key ? cli_quote(key) : "",
            key ? "' is done here, not on " : "", al_store_remote_message(h));
        return EX_REMOTE;
    case AL_EUNREACHABLE: /* neither "evicted" nor "no such key": unknown */
        if (key)
            cli_msg("cannot tell what '%s' holds: it is not in this store, and its remote could not "
                "answer: %s", cli_quote(key),
                al_store_remote_message(h));
        else
            cli_msg("the answer is incomplete: %s", al_store_remote_message(h));
        return EX_UNREACHABLE;
    default:
        break;
    }
    if (h)
        cli_msg("store '%s': %s", cli_quote(al_store_dir(h)), al_strerror(rc));
    else
        cli_msg("%s", al_strerror(rc));
    return EX_FAIL;
}

/* Message for a key found evicted or removed (E says when and why). */
int cli_report_gone(const char *key, const al_entry *e)
{
    char when[40];
    al_time_format(e->gone_ns, when, sizeof when);
    if (e->gone_reason == AL_REASON_REMOVED)
        cli_msg("key '%s' was removed at %s (agentlink rm or drop-referenced); run the tool again for its result",
            cli_quote(key), when);
    else
        cli_msg("key '%s' was evicted at %s to keep the store under max_total_bytes; run the tool again for its result",
            cli_quote(key), when);
    return EX_EVICTED;
}

/* ---- I/O --------------------------------------------------------------- */
int cli_write_all(const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(STDOUT_FILENO, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            cli_msg("cannot write to stdout: %s", strerror(errno));
            return EX_FAIL;
        }
        p += n;
        len -= (size_t)n;
    }
    return EX_OK;
}
