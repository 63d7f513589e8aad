/* pointer.c -- the text that stands in the conversation for an offloaded
 * result. It goes to a model, so it must be valid UTF-8, short, and say
 * plainly where the rest is and how to read it. */
#include "agentlink/internal.h"
#include "common/buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The preview lines together stay near this many bytes, whatever the
 * policy says, so the pointer stays a few KB even for minified JSON. */
#define PREVIEW_BUDGET 6144u
#define LINE_BYTES_MIN 64u

/* Length of an ANSI escape sequence at S (S[0] is ESC), so colour codes of
 * build logs do not reach the model as garbage. */
static size_t escape_len(const unsigned char *s, size_t n)
{
    size_t i;
    if (n < 2)
        return 1;
    if (s[1] == '[') { /* CSI: parameters, then one final byte 0x40-0x7e */
        for (i = 2; i < n; i++)
            if (s[i] >= 0x40 && s[i] <= 0x7e)
                return i + 1;
        return n;
    }
    if (s[1] == ']') { /* OSC: up to BEL or ESC \ */
        for (i = 2; i < n; i++) {
            if (s[i] == 0x07)
                return i + 1;
            if (s[i] == 0x1b && i + 1 < n && s[i + 1] == '\\')
                return i + 2;
        }
        return n;
    }
    return 2;
}

/* Appends one line of N bytes at S, made printable and clipped to
 * MAX_CHARS code points and about MAX_BYTES bytes. */
static void add_line(common_buf *b, const unsigned char *s, size_t n,
                     unsigned max_chars, size_t max_bytes)
{
    static const char repl[] = "\xef\xbf\xbd"; /* U+FFFD */
    size_t i = 0, bytes = 0;
    uint64_t chars = 0;

    if (n > 0 && s[n - 1] == '\r')
        n--;
    while (i < n) {
        size_t k;
        if (s[i] == 0x1b) {
            i += escape_len(s + i, n - i);
            continue;
        }
        if (chars >= max_chars)
            break;
        k = store_utf8_len(s + i, n - i);
        if (k == 0 || (s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f) {
            if (bytes + 3 > max_bytes)
                break;
            common_buf_add(b, repl, 3);
            bytes += 3;
            i++;
        } else {
            if (bytes + k > max_bytes)
                break;
            common_buf_add(b, s + i, k);
            bytes += k;
            i += k;
        }
        chars++;
    }
    if (i < n) {
        al_textinfo rest;
        al_text_info(s + i, n - i, &rest);
        common_buf_addf(b, " [... %llu more characters on this line]",
                        (unsigned long long)rest.chars);
    }
    common_buf_addc(b, '\n');
}

static unsigned digits(uint64_t v)
{
    unsigned d = 1;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

/* Appends lines FIRST..LAST (1-based) starting at byte offset START, while
 * *BUDGET (bytes left for the preview) lasts. */
static void add_lines(common_buf *b, const unsigned char *s, size_t len, size_t start,
                      uint64_t first, uint64_t last, unsigned width,
                      unsigned max_chars, size_t max_bytes, size_t *budget)
{
    for (uint64_t ln = first; ln <= last && start <= len; ln++) {
        const unsigned char *nl = memchr(s + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - s) : len, before = b->len;
        if (*budget < LINE_BYTES_MIN) {
            common_buf_addf(b, "%*s  [... %llu more lines not previewed]\n", (int)width, "",
                            (unsigned long long)(last - ln + 1));
            return;
        }
        common_buf_addf(b, "%*llu  ", (int)width, (unsigned long long)ln);
        add_line(b, s + start, end - start, max_chars, max_bytes);
        *budget -= b->len - before < *budget ? b->len - before : *budget;
        start = end + 1;
    }
}

int al_pointer_text(const char *path, const char *tool, const void *stored,
                    size_t len, uint64_t original_size, const al_preview *pv,
                    char **out, size_t *outlen)
{
    static const al_preview defaults = {5, 5, 1000};
    const unsigned char *s = stored;
    common_buf b = {0};
    al_textinfo ti;
    uint64_t head, tail, shown;
    size_t max_bytes, head_budget, tail_budget;
    unsigned width;

    if (!path || !out || (!stored && len > 0))
        return EINVAL;
    if (!pv)
        pv = &defaults;
    al_text_info(s, len, &ti);

    common_buf_adds(&b, "[offloadfs] ");
    if (tool) {
        common_buf_adds(&b, "The result of tool '");
        common_buf_add_printable(&b, tool, strlen(tool));
        common_buf_adds(&b, "'");
    } else {
        common_buf_adds(&b, "This tool result");
    }
    common_buf_adds(&b, " was too large for the conversation and was stored as a file:\n  ");
    common_buf_add_printable(&b, path, strlen(path));
    common_buf_addf(&b, "\nSize: %zu bytes, %llu line%s.\n", len,
                    (unsigned long long)ti.lines, ti.lines == 1 ? "" : "s");
    if (original_size > len)
        common_buf_addf(&b, "It was cut from %llu bytes: the head and the tail are kept, the "
                        "middle is replaced by one line \"[... offloadfs: N bytes cut here ...]\".\n",
                        (unsigned long long)original_size);
    if (ti.invalid_bytes > 0)
        common_buf_addf(&b, "%llu bytes are not valid UTF-8 text (shown below as U+FFFD).\n",
                        (unsigned long long)ti.invalid_bytes);

    /* The preview: every line when few, else the first and the last. */
    head = pv->head_lines;
    tail = pv->tail_lines;
    if (ti.lines <= head + tail) {
        head = ti.lines;
        tail = 0;
    }
    shown = head + tail;
    /* Each line's share of the budget, less room for its number and a
     * clipping note; the budget itself stops runaway configurations. */
    max_bytes = shown ? PREVIEW_BUDGET / shown : PREVIEW_BUDGET;
    max_bytes = max_bytes > LINE_BYTES_MIN + 60 ? max_bytes - 60 : LINE_BYTES_MIN / 2;
    /* The head and the tail each get their share: the tail of a build log
     * is where the error is, so the head never eats it. */
    head_budget = shown ? (size_t)((uint64_t)PREVIEW_BUDGET * head / shown) : 0;
    tail_budget = PREVIEW_BUDGET - head_budget;
    width = digits(ti.lines);
    if (head > 0) {
        if (tail == 0)
            common_buf_addf(&b, "%s (line numbers as in sed -n):\n",
                            head == 1 ? "Its only line" : "All its lines");
        else
            common_buf_addf(&b, "First %llu lines (line numbers as in sed -n):\n",
                            (unsigned long long)head);
        add_lines(&b, s, len, 0, 1, head, width, pv->max_line_chars, max_bytes, &head_budget);
    }
    if (tail > 0) {
        /* Walk back from the end to the start of the first tail line. */
        size_t p = len > 0 && s[len - 1] == '\n' ? len - 1 : len, start = 0;
        for (uint64_t i = 0; i < tail; i++) {
            const unsigned char *q = memrchr(s, '\n', p);
            if (i + 1 == tail) {
                start = q ? (size_t)(q - s) + 1 : 0;
                break;
            }
            p = q ? (size_t)(q - s) : 0;
        }
        common_buf_addf(&b, "Last %llu lines:\n", (unsigned long long)tail);
        add_lines(&b, s, len, start, ti.lines - tail + 1, ti.lines, width,
                  pv->max_line_chars, max_bytes, &tail_budget);
    }

    common_buf_adds(&b, "Read the rest with ordinary tools, for example:\n  cat ");
    common_buf_add_shell(&b, path);
    common_buf_adds(&b, "\n  head -n 100 ");
    common_buf_add_shell(&b, path);
    common_buf_adds(&b, "\n  grep -n 'PATTERN' ");
    common_buf_add_shell(&b, path);
    common_buf_adds(&b, "\n  sed -n '100,200p' ");
    common_buf_add_shell(&b, path);
    common_buf_adds(&b, "\nIf reading that path fails with \"No data available\", the result was "
                    "evicted from the store to make room: run the tool again.\n");
    return common_buf_detach(&b, out, outlen);
}

/* The paragraph a pointer gains when its result stayed pending (the upload
 * failed): without it a model on another host that finds no such file
 * would take the result for one that never existed, or rerun the tool. */
#define PENDING_NOTE                                                                        \
    "Note: this result is stored on this host but not yet uploaded to the store's remote. " \
    "The path works here now; on another host it answers \"No such file or directory\" "    \
    "until the upload is done (agentlink sync, or the next write). That means \"not "       \
    "uploaded yet\", not that the result never existed.\n"

int al_pointer_add_pending(char **text, size_t *len)
{
    size_t n = strlen(*text), add = sizeof PENDING_NOTE - 1;
    char *p = realloc(*text, n + add + 1);
    if (!p)
        return ENOMEM;
    memcpy(p + n, PENDING_NOTE, add + 1);
    *text = p;
    if (len)
        *len = n + add;
    return 0;
}
