/* input.c -- put's and offload's input, read in pieces (input.h). */
#include "agentlink/cli/cli.h"
#include "common/buf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define PIECE (256u << 10)

int cli_input_open(cli_input *in, const char *path, uint64_t max_input)
{
    struct stat sb;
    in->fd = STDIN_FILENO;
    in->own = 0;
    in->max_input = max_input;
    in->total = 0;
    in->piece = NULL;
    if (path) {
        if ((in->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
            return errno;
        in->own = 1;
        int e = fstat(in->fd, &sb) != 0 ? errno : S_ISDIR(sb.st_mode) ? EISDIR : 0;
        if (e) {
            cli_input_close(in);
            return e;
        }
    }
    if (!(in->piece = malloc(PIECE))) {
        cli_input_close(in);
        return ENOMEM;
    }
    return 0;
}

void cli_input_close(cli_input *in)
{
    if (in->own && in->fd >= 0)
        close(in->fd);
    in->fd = -1;
    in->own = 0;
    free(in->piece);
    in->piece = NULL;
}

/* Reads the next piece: *N bytes at in->piece, 0 at the end. */
static int next_piece(cli_input *in, size_t *n)
{
    ssize_t r;
    do
        r = read(in->fd, in->piece, PIECE);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        return errno;
    *n = (size_t)r;
    in->total += (uint64_t)r;
    return in->total > in->max_input ? CLI_EINPUT : 0;
}

int cli_input_to_cutter(cli_input *in, al_cutter *c)
{
    size_t n;
    int rc;
    for (;;) {
        if ((rc = next_piece(in, &n)) || n == 0)
            return rc;
        if ((rc = al_cutter_add(c, in->piece, n)))
            return rc;
    }
}

/* Whether the LEN bytes read so far are enough for the rule to offload,
 * whatever follows: the counts only grow with more input. *POS and
 * *CHARS carry the character count between calls (al_text_count). */
static int sure_to_offload(int kind, uint64_t limit, const common_buf *b, size_t *pos,
                           uint64_t *chars)
{
    uint64_t len = b->len;
    switch (kind) {
    case AL_OFFLOAD_ALWAYS:
        return len > 0;
    case AL_OFFLOAD_OVER_BYTES:
        return len > limit;
    case AL_OFFLOAD_OVER_CHARS:
    case AL_OFFLOAD_OVER_TOKENS:
        /* No character count exceeds the byte count: count only once the
         * bytes alone could pass the limit. */
        if ((kind == AL_OFFLOAD_OVER_CHARS ? len : (len + 3) / 4) <= limit)
            return 0;
        al_text_count(b->p, b->len, pos, chars, 0);
        return (kind == AL_OFFLOAD_OVER_CHARS ? *chars : (*chars + 3) / 4) > limit;
    default:
        return 0; /* never, or no rule: kept whatever its length */
    }
}

int cli_input_prefix(cli_input *in, int kind, uint64_t limit, common_buf *b, int *sure)
{
    size_t n, pos = 0;
    uint64_t chars = 0;
    int rc;
    *sure = 0;
    for (;;) {
        if ((rc = next_piece(in, &n)) || n == 0)
            return rc;
        common_buf_add(b, in->piece, n);
        if (b->failed)
            return ENOMEM;
        if (sure_to_offload(kind, limit, b, &pos, &chars)) {
            *sure = 1;
            return 0;
        }
    }
}

/* ---- the commands' input: limits and messages (cli.h) -------------------- */
int cli_read_fd(int fd, uint64_t limit, char **out, size_t *len)
{
    common_buf b = {0};
    char chunk[65536];
    *out = NULL;
    *len = 0;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            common_buf_release(&b);
            return e;
        }
        if (n == 0)
            break;
        common_buf_add(&b, chunk, (size_t)n);
        if (b.failed) {
            common_buf_release(&b);
            return ENOMEM;
        }
        if ((uint64_t)b.len > limit)
            break;
    }
    return common_buf_detach(&b, out, len);
}

/* The input's name in messages: "stdin" or "file 'PATH'". */
const char *cli_input_name(const char *path)
{
    static char name[600];
    if (!path)
        return "stdin";
    snprintf(name, sizeof name, "file '%s'", cli_quote(path));
    return name;
}

/* --max-input-bytes, or its default, into *MAX. */
int cli_input_limit(const opts *o, uint64_t *max)
{
    *max = CLI_MAX_INPUT_DEFAULT;
    if (o->max_input && al_size_parse(o->max_input, max)) {
        cli_msg("--max-input-bytes '%s': %s", cli_quote(o->max_input), al_strerror(AL_ESIZE));
        return EX_USAGE;
    }
    return EX_OK;
}

/* Opens the input of put/offload: PATH or stdin (input.h). */
int cli_input_begin(const opts *o, const char *path, cli_input *in)
{
    uint64_t max;
    int ex, rc;
    if ((ex = cli_input_limit(o, &max)))
        return ex;
    rc = cli_input_open(in, path, max);
    if (rc == EISDIR) {
        cli_msg("file '%s' is a directory, expected a file to store", cli_quote(path));
        return EX_USAGE;
    }
    if (rc) {
        cli_msg("cannot read %s: %s", cli_input_name(path), strerror(rc));
        return rc == ENOMEM ? EX_FAIL : EX_USAGE;
    }
    return EX_OK;
}

/* The message and exit code for RC from reading IN (PATH or stdin);
 * WHAT says what did not happen ("nothing was stored"). */
int cli_input_error(const cli_input *in, const char *path, int rc, const char *what)
{
    if (rc == CLI_EINPUT) {
        cli_msg("%s is longer than --max-input-bytes %" PRIu64 "%s: refused, %s "
            "(--max-input-bytes N reads more)", cli_input_name(path), in->max_input,
            in->max_input == CLI_MAX_INPUT_DEFAULT ? " (the default, 1 GiB)" : "", what);
        return EX_USAGE;
    }
    cli_msg("cannot read %s: %s", cli_input_name(path), rc > 0 ? strerror(rc) : al_strerror(rc));
    return EX_FAIL;
}
