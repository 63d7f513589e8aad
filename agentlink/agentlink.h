/* agentlink.h -- the agent side of offloadfs: offload large tool results
 * into the store and hand the conversation a short pointer instead.
 *
 * What an agent runtime calls after every tool call:
 *
 *     al_policy *pol;  al_store *h;  char *msg, *out;  size_t outlen;
 *     al_policy_load(&pol, NULL, &msg);          // $OFFLOADFS_CONFIG or defaults
 *     al_store_open(&h, NULL, NULL, NULL, pol);  // flag > env > config > default
 *     al_offload(h, pol, "bash", call_id, strlen(call_id), result, len,
 *                &out, &outlen, NULL);
 *     ... put OUT (the result unchanged, or the pointer text) in the conversation
 *     al_free(out);  al_store_close(h);  al_policy_free(pol);
 *
 * Caveats
 * =======
 * - Memory: every char ** / void ** result is malloc'd storage you now own;
 *   release it with al_free() (plain free() works too in C; bindings such as
 *   ctypes must use al_free()). Every free function accepts NULL.
 * - Threads: an al_store handle serialises its own calls with a mutex, so it
 *   may be shared by threads; and any number of handles on one store may be
 *   opened, used and closed by any threads at any time (they share one LMDB
 *   environment underneath, store/store.h says how). al_policy is immutable
 *   after loading and may be shared freely. The pure functions
 *   (al_key_derive, al_cut, al_text_*, al_pointer_text) keep no state.
 * - fork(): a handle made before fork() works in the child: its first call
 *   there opens the store again for the child (the parent's LMDB environment
 *   and remote connections are left alone, never closed, until the child
 *   exits), and the parent's use of it is unaffected. As with any lock, a
 *   handle another thread was inside a call on at the moment of fork() must
 *   not be used in the child (its mutex is copied held): fork() from a
 *   thread pool only between calls, or open a new handle in the child.
 * - Store lifetime: the handle opens the LMDB store lazily and re-opens it
 *   when its directory is removed or replaced under it, so a store that
 *   disappears behaves as an empty store (reads: AL_ENOSTORE or
 *   AL_ENOTFOUND; the next write creates it again). Nothing crashes.
 * - Remote: a store that names a remote tier (doc/remote.md) makes the first
 *   call that uses it load libcurl with dlopen() ("libcurl.so.4", or
 *   $OFFLOADFS_LIBCURL), once per process; the library links no HTTP or TLS
 *   code, so a process whose stores name no remote never maps any. A
 *   libcurl that cannot be loaded is an unusable remote: a write returns
 *   AL_EUPLOAD (the result pending), al_store_remote_message() names it.
 * - Durability: al_store_put() returns after the store fsync'd the write.
 * - Text: stored bytes are never changed except by the cut (see al_cut).
 *   Content that is not valid UTF-8 is stored and returned byte for byte;
 *   for "over_chars" and "over_tokens" each byte of an invalid sequence
 *   counts as one character (as a U+FFFD replacement would); the pointer
 *   text shows such bytes as U+FFFD and says how many there are.
 *
 * Errors
 * ======
 * Functions return 0, a positive errno value (ENOMEM, EINVAL, EIO, EACCES,
 * ENOTDIR, ENOSPC, ...) or one of the AL_E* codes below (negative, in their
 * own range). al_strerror() describes any of them.
 */
#ifndef OFFLOADFS_AGENTLINK_H
#define OFFLOADFS_AGENTLINK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Error codes (negative; errno values are positive) ---------------- */
#define AL_ERR_BASE (-32000)
/* These mirror the store's codes, at the same offset from AL_ERR_BASE. */
#define AL_ENOTFOUND (AL_ERR_BASE - 1)  /* key never written */
#define AL_EEVICTED  (AL_ERR_BASE - 2)  /* key evicted or removed; al_entry says when, why */
#define AL_EGONE     (AL_ERR_BASE - 3)  /* a version was replaced while reading */
#define AL_ETOOBIG   (AL_ERR_BASE - 4)  /* value longer than max_result_bytes */
#define AL_EFULL     (AL_ERR_BASE - 5)  /* LMDB map full: nothing was written */
#define AL_ECORRUPT  (AL_ERR_BASE - 6)  /* store files damaged or not a store */
#define AL_EVERSION  (AL_ERR_BASE - 7)  /* store made by another format version */
#define AL_ENOSTORE  (AL_ERR_BASE - 8)  /* no store in that directory (yet) */
#define AL_EREADERS  (AL_ERR_BASE - 9)  /* too many concurrent readers */
#define AL_ELIMITS   (AL_ERR_BASE - 10) /* max_result_bytes > max_total_bytes, or 0 */
#define AL_ERDONLY   (AL_ERR_BASE - 12) /* store opened read-only */
#define AL_ELMDB     (AL_ERR_BASE - 13) /* other LMDB failure */
#define AL_EPENDING  (AL_ERR_BASE - 14) /* the bound is held by results waiting for their upload */
#define AL_ENAME_EMPTY (AL_ERR_BASE - 20) /* key or namespace: empty */
#define AL_ENAME_LONG  (AL_ERR_BASE - 21) /* longer than 255 bytes */
#define AL_ENAME_UTF8  (AL_ERR_BASE - 22) /* not valid UTF-8 */
#define AL_ENAME_SLASH (AL_ERR_BASE - 23) /* contains '/' */
#define AL_ENAME_CTRL  (AL_ERR_BASE - 24) /* NUL or control character */
#define AL_ENAME_DOT   (AL_ERR_BASE - 25) /* starts with '.' */
/* agentlink's own codes. */
#define AL_ECONFIG   (AL_ERR_BASE - 40) /* policy file refused (errmsg says why) */
#define AL_ESIZE     (AL_ERR_BASE - 41) /* size text is not N, NK, NM or NG, N >= 1 */
#define AL_ETOOL     (AL_ERR_BASE - 42) /* tool name empty, > 255 bytes, not UTF-8 or control chars */
#define AL_EMOUNT    (AL_ERR_BASE - 43) /* mount is not an absolute path */
#define AL_ENOTMOUNT (AL_ERR_BASE - 44) /* a path that is not directly under the mount */
#define AL_EMOUNT_NONE  (AL_ERR_BASE - 60) /* no offloadfs mount that says what it serves */
#define AL_EMOUNT_OTHER (AL_ERR_BASE - 61) /* the mount serves another store or namespace */
/* The remote tier (doc/remote.md). */
#define AL_EUPLOAD   (AL_ERR_BASE - 50) /* stored here, but not yet on the remote: pending */
#define AL_EREMOTE   (AL_ERR_BASE - 51) /* the remote refused or failed (al_store_remote_message) */
#define AL_EUNREACHABLE (AL_ERR_BASE - 52) /* a read needed the remote, which could not be reached or
                                              refused: the answer is unknown, neither "evicted" nor
                                              "never written" (al_store_remote_message names the
                                              remote and the cause) */

/* Returns a static description of any code above or of an errno value;
 * never NULL. For AL_ENAME_* the text completes "key 'K' ...", e.g.
 * "contains '/'". */
const char *al_strerror(int err);

/* True (1) when ERR is one of AL_ENAME_*. */
int al_err_is_name(int err);

/* The library version, e.g. "0.1.0". Static. */
const char *al_version(void);

/* Releases storage returned by any agentlink function. NULL is fine. */
void al_free(void *p);

/* ---- Keys from raw tool call ids (pure) ------------------------------- */
/* Checks KEY (NUL-terminated) against the key rules: 1 to 255 bytes of
 * valid UTF-8, no '/', no control character, not starting with '.'.
 * Namespaces follow the same rules. Returns 0, the AL_ENAME_* code of the
 * first rule broken (al_strerror() completes "key 'K' ..."), or EINVAL
 * for NULL. */
int al_key_check(const char *key);

/* Checks a tool name (NUL-terminated): 1 to 255 bytes of valid UTF-8, no
 * control character. Returns 0 or AL_ETOOL (also for NULL). Every function
 * taking a tool name applies it; the Python binding's PolicyFile does too. */
int al_tool_check(const char *tool);

/* Length of a derived hash suffix: '~' and 16 lowercase hex digits. */
#define AL_KEY_HASH_LEN 17u
/* Raw ids kept as they are are at most this long. */
#define AL_KEY_ASIS_MAX 200u
/* Derived keys keep at most this many bytes of the sanitised id. */
#define AL_KEY_PREFIX_MAX 100u

/* Derives the store key for a raw tool call id of LEN bytes (any bytes,
 * NUL included). Deterministic, no store needed:
 * - an id that is a valid key (store rules), at most 200 bytes long and
 *   not itself of the derived form (below) is used as it is;
 * - any other id becomes PREFIX "~" HASH: PREFIX is the id with every
 *   byte that may not appear in a key ('/', controls, invalid UTF-8) and
 *   every space replaced by '_', leading dots dropped, clipped to 100
 *   bytes on a character boundary; HASH is the first 16 hex digits of the
 *   SHA-256 of the whole raw id.
 * Derived keys always end in '~' and 16 lowercase hex digits, and ids kept
 * as they are never do (such an id is derived too), so a raw id can never
 * take the key of another id; two derived keys are equal only when the
 * 64-bit SHA-256 prefixes of two different ids collide.
 * On success *KEY is a NUL-terminated key you own (at most 255 bytes).
 * Errors: ENOMEM, EINVAL (RAW NULL with LEN > 0 or KEY NULL). */
int al_key_derive(const void *raw, size_t len, char **key);

/* ---- Text helpers (pure) ---------------------------------------------- */
typedef struct al_textinfo {
    uint64_t chars;         /* code points; each invalid byte counts as one */
    uint64_t invalid_bytes; /* bytes not part of a valid UTF-8 sequence */
    uint64_t lines;         /* '\n' count, plus one for an unterminated last line */
} al_textinfo;

/* Fills *INFO for LEN bytes at DATA. Never fails. */
void al_text_info(const void *data, size_t len, al_textinfo *info);

/* Cuts LEN bytes at DATA down to at most MAX bytes, keeping the head and
 * the tail: a quarter of the room goes to the head, the rest to the tail
 * (errors live at the end of build logs), each cut snapped to a line end
 * when one lies within 4 KiB (otherwise to a UTF-8 character boundary),
 * and between them one marker line:
 *     "[... offloadfs: N bytes cut here ...]"   (N = bytes dropped)
 * preceded by '\n' unless the head already ends with one, followed by '\n'.
 * When MAX is too small for the marker (under 64 bytes), only the last
 * MAX bytes (from a character boundary) are kept.
 * When LEN <= MAX nothing is cut: *OUT is set to NULL and *OUTLEN to LEN.
 * Otherwise *OUT is the cut copy you own, *OUTLEN its length (<= MAX);
 * a NUL follows it (not counted) so it may be used as a C string.
 * Errors: ENOMEM, EINVAL (MAX 0 or a NULL out pointer). */
int al_cut(const void *data, size_t len, uint64_t max, void **out,
           size_t *outlen);

/* The same cut over a value that arrives in pieces (a pipe, a file of
 * any length): a cutter keeps the head and a ring of the tail, so its
 * memory stays under about MAX bytes whatever the length, and it ends with
 * exactly the bytes al_cut() gives for the whole value.
 *
 *     al_cutter *c;  const void *kept;  size_t n;  int cut;
 *     al_cutter_new(&c, max);
 *     while ((len = read(fd, buf, sizeof buf)) > 0) al_cutter_add(c, buf, len);
 *     al_cutter_finish(c, &kept, &n, &cut);   // KEPT valid until al_cutter_free
 *     al_cutter_free(c);
 */
typedef struct al_cutter al_cutter;

/* Starts a cutter to MAX bytes. It allocates as bytes arrive, never more
 * than MAX + 1 bytes. On success *OUT is yours (al_cutter_free()).
 * Errors: EINVAL (OUT NULL, MAX 0 or MAX >= SIZE_MAX / 2), ENOMEM. */
int al_cutter_new(al_cutter **out, uint64_t max);

/* Adds the LEN bytes at DATA to the value. Errors: EINVAL (C NULL, DATA
 * NULL with LEN > 0, or after al_cutter_finish()), EOVERFLOW (the value
 * would pass SIZE_MAX / 2 bytes), ENOMEM; on error C is as before. */
int al_cutter_add(al_cutter *c, const void *data, size_t len);

/* The bytes added so far, and the cutter's MAX (0 for a NULL C). */
uint64_t al_cutter_total(const al_cutter *c);
uint64_t al_cutter_max(const al_cutter *c);

/* Ends the value: *OUT and *OUTLEN are the bytes kept, exactly what
 * al_cut(the whole value, MAX) gives (the value itself when it fits), a
 * NUL after them; they belong to C and stay valid until al_cutter_free().
 * *CUT (may be NULL) is 1 when the value was cut. Calling it again gives
 * the same. Errors: EINVAL (a NULL argument), ENOMEM. */
int al_cutter_finish(al_cutter *c, const void **out, size_t *outlen, int *cut);

/* Releases a cutter (NULL is fine). */
void al_cutter_free(al_cutter *c);

/* Parses a size: decimal digits with an optional K, M or G suffix (powers
 * of 1024, either case). Sets *OUT. Errors: AL_ESIZE (empty, sign, other
 * suffix, zero, or overflow). */
int al_size_parse(const char *text, uint64_t *out);

/* ---- The offload policy ------------------------------------------------ */
typedef struct al_policy al_policy;

/* How many lines the pointer text previews, and how long each may be. */
typedef struct al_preview {
    unsigned head_lines;     /* default 5 */
    unsigned tail_lines;     /* default 5 */
    unsigned max_line_chars; /* default 1000, code points */
} al_preview;

#define AL_OFFLOAD_NEVER 0
#define AL_OFFLOAD_ALWAYS 1
#define AL_OFFLOAD_OVER_CHARS 2
#define AL_OFFLOAD_OVER_BYTES 3
#define AL_OFFLOAD_OVER_TOKENS 4 /* tokens = ceil(chars / 4) */

/* Loads the policy file PATH (the JSON of doc/contract.md). PATH NULL means
 * $OFFLOADFS_CONFIG when it is set and not empty, else the built-in
 * default; PATH "" means the built-in default: no mount, no namespace,
 * preview 5/5/1000, rules [{"tools": ["*"], "offload": {"over_bytes": 32768}}].
 * Rules: a tool name in "tools" may contain '*' wildcards; a rule naming
 * the tool exactly beats any wildcard pattern, a pattern with more literal
 * characters beats one with fewer ("*" is the weakest), whatever their
 * order; between equal patterns the first rule wins. A name or pattern may
 * appear in only one rule. A tool no rule matches is not offloaded. A file
 * without "rules" gets the default rules; "rules": [] offloads nothing.
 * On success *OUT is a policy you own (al_policy_free()).
 * Errors: AL_ECONFIG (unreadable, not JSON, unknown field, wrong type or
 * value), ENOMEM. On AL_ECONFIG and when ERRMSG is not NULL, *ERRMSG is a
 * message you own naming the file, the field and what was expected, e.g.
 * "config 'p.json': field 'rules[1].offload.over_chars': expected a
 * non-negative integer, got a string"; otherwise *ERRMSG is set to NULL. */
int al_policy_load(al_policy **out, const char *path, char **errmsg);

/* As al_policy_load() for LEN bytes of JSON at TEXT; ORIGIN names them in
 * messages ("config 'ORIGIN': ..."), NULL reads "<string>". */
int al_policy_parse(al_policy **out, const char *text, size_t len,
                    const char *origin, char **errmsg);

/* Releases a policy (NULL is fine). */
void al_policy_free(al_policy *pol);

/* The file the policy came from (NULL for the built-in default), its
 * "mount" and "namespace" (NULL when the file does not set them). Valid
 * until al_policy_free(). POL may be NULL: all return NULL. */
const char *al_policy_path(const al_policy *pol);
const char *al_policy_mount(const al_policy *pol);
const char *al_policy_namespace(const al_policy *pol);

/* Fills *OUT with the policy's preview settings (defaults for NULL POL). */
void al_policy_preview(const al_policy *pol, al_preview *out);

/* Decides whether LEN bytes at DATA, the result of tool TOOL (NULL: only
 * "*"-style rules match), go to the store. POL NULL is the built-in
 * default. Returns 1 (offload) or 0 (keep in the conversation). An empty
 * result is never offloaded. *KIND and *LIMIT (each may be NULL) get the
 * deciding rule's AL_OFFLOAD_* and threshold (AL_OFFLOAD_NEVER, 0 when no
 * rule matches). Never fails. */
int al_policy_decide(const al_policy *pol, const char *tool, const void *data,
                     size_t len, int *kind, uint64_t *limit);

/* ---- Pointer text (pure) ---------------------------------------------- */
/* Writes what goes into the conversation in place of an offloaded result:
 * the full PATH under the mount, TOOL (may be NULL), the stored size and
 * line count, ORIGINAL_SIZE when the value was cut (ORIGINAL_SIZE > LEN),
 * a preview of the first and last lines of the LEN bytes at STORED (the
 * bytes actually stored), with their line numbers, each line clipped to
 * PV->max_line_chars (PV NULL: defaults) and the whole preview to about
 * 6 KiB (lines are clipped shorter, and the last ones left out, when the
 * settings ask for more), how to read the rest with cat, head, grep and
 * sed -n, and that "No data available" on PATH means the result was
 * evicted and the tool must be run again. The text is valid UTF-8 (invalid
 * bytes and control characters are shown as U+FFFD, terminal escape
 * sequences and a CR before LF are dropped) and under 8 KiB plus five
 * times the length of PATH and once that of TOOL.
 * On success *OUT is NUL-terminated text you own, *OUTLEN (may be NULL)
 * its length. Errors: ENOMEM, EINVAL (PATH or OUT NULL). */
int al_pointer_text(const char *path, const char *tool, const void *stored,
                    size_t len, uint64_t original_size, const al_preview *pv,
                    char **out, size_t *outlen);

/* ---- A store handle ---------------------------------------------------- */
typedef struct al_store al_store;

/* Opens a handle on the store in directory DIR, for namespace NS, with
 * results shown under mount directory MOUNT. Each NULL argument is taken,
 * in this order, from the environment ($OFFLOADFS_STORE,
 * $OFFLOADFS_NAMESPACE, $OFFLOADFS_MOUNT, when set and not empty), from POL
 * (its "namespace" and "mount"; POL may be NULL), else the default:
 * "/var/lib/offloadfs" for root, else "${XDG_STATE_HOME:-$HOME/.local/state}/offloadfs";
 * "default"; "/large_tool_results". Trailing slashes of MOUNT are dropped.
 * A missing store is not an error here: it is created (directory 0700,
 * files 0600, default limits) by the first write.
 * On success *OUT is a handle you own (al_store_close()).
 * Errors: EINVAL (DIR "" or no HOME to derive the default from),
 * AL_ENAME_* (namespace), AL_EMOUNT, EACCES, ENOTDIR, AL_ECORRUPT,
 * AL_EVERSION (an existing store that cannot be used), ENOMEM. */
int al_store_open(al_store **out, const char *dir, const char *ns,
                  const char *mount, const al_policy *pol);

/* Releases a handle (NULL is fine). Never fails. */
void al_store_close(al_store *h);

/* The resolved store directory, namespace and mount (no trailing slash).
 * Valid until al_store_close(). */
const char *al_store_dir(const al_store *h);
const char *al_store_namespace(const al_store *h);
const char *al_store_mount(const al_store *h);

/* What the mount at a handle's mount path says it serves. */
typedef struct al_mount_info {
    char *store; /* its user.offloadfs.store (the store's real path), or NULL */
    char *ns;    /* its user.offloadfs.namespace, or NULL */
    char *why;   /* one sentence for a message or a log, naming the mount and
                    what it serves or why it says nothing */
} al_mount_info;

/* Checks whether the mount at H's mount path serves H's store and
 * namespace, from the mount itself: offloadfs sets user.offloadfs.store and
 * user.offloadfs.namespace on its root (offloadfs(1)). The store matches
 * when it is the same directory as H's (device and inode; the real path
 * when either cannot be stat'ed), the namespace when the bytes are equal.
 * A reader acting for a writer (the deepagents backend, through
 * 'agentlink stats --json') reads through a mount only when this returns 0.
 * The attributes are read in a thread, which has ended when the call
 * returns in time; after TIMEOUT_MS (<= 0: no bound) the call returns
 * ETIMEDOUT and leaves that thread to end when the daemon answers or its
 * mount goes.
 * Returns 0 (it serves them), AL_EMOUNT_OTHER (another store or namespace:
 * INFO says which), AL_EMOUNT_NONE (nothing there carries the attributes:
 * a plain directory, another filesystem, an older offloadfs), ETIMEDOUT,
 * ENOTCONN (the daemon of the mount is gone), ENOENT (no such path),
 * EACCES, EINVAL (H or INFO NULL), ENOMEM, or another errno of
 * getxattr(2) or pthread_create(3).
 * INFO is filled on every return but EINVAL and ENOMEM (store and ns only
 * when the mount gave them); release it with al_mount_info_release(). */
int al_store_mount_check(const al_store *h, int timeout_ms, al_mount_info *info);

/* Frees what INFO holds and zeroes it. NULL is fine. */
void al_mount_info_release(al_mount_info *info);

/* What the store knows about one key. */
typedef struct al_entry {
    uint64_t size;          /* stored bytes */
    uint64_t created_ns;    /* write time, ns since the Unix epoch (UTC) */
    uint64_t original_size; /* bytes before the cut */
    int truncated;          /* 1 when the value was cut */
    int has_tool;           /* 0 when no tool was recorded */
    char tool[256];         /* "" when has_tool is 0 */
    /* Set when a call returns AL_EEVICTED: */
    uint64_t gone_ns;       /* when it was evicted or removed */
    int gone_reason;        /* AL_REASON_EVICTED or AL_REASON_REMOVED */
    /* Where the bytes of a live key are (set by every call that fills an
     * al_entry of a live key): */
    int where;              /* AL_WHERE_HERE, AL_WHERE_REMOTE or AL_WHERE_CACHED */
} al_entry;

#define AL_WHERE_HERE   0 /* in this host's store */
#define AL_WHERE_REMOTE 1 /* only on the store's remote (evicted here, or written by another host) */
#define AL_WHERE_CACHED 2 /* here, as a cached copy of the remote's version (read from it before) */

#define AL_REASON_EVICTED 1 /* evicted to keep the store under max_total_bytes */
#define AL_REASON_REMOVED 2 /* removed by agentlink rm or drop-referenced */

/* "evicted" or "removed". Static. */
const char *al_reason_name(int reason);

/* Formats NS (ns since the epoch) as RFC 3339 UTC, "2024-05-01T12:00:00Z",
 * into BUF (at least 32 bytes). Returns BUF. */
char *al_time_format(uint64_t ns, char *buf, size_t size);

/* Sets *PATH to MOUNT "/" KEY, the key's path under the mount, yours.
 * Errors: AL_ENAME_* (KEY invalid), ENOMEM. */
int al_store_path_of(const al_store *h, const char *key, char **path);

/* Turns REF, a path directly under the mount or a bare key, into the key.
 * On success *KEY is yours. Errors: AL_ENOTMOUNT (a path containing '/'
 * that is not MOUNT "/" KEY), AL_ENAME_*, ENOMEM. */
int al_store_key_of(const al_store *h, const char *ref, char **key);

/* Stores LEN bytes at DATA under KEY with tool name TOOL (NULL: none),
 * creating the store when missing. A value longer than the store's
 * max_result_bytes is first cut (al_cut) and recorded as truncated with
 * its original size. The write replaces any earlier value of KEY and
 * evicts the oldest results to stay under max_total_bytes.
 * E (may be NULL) gets the new entry; *PATH (PATH may be NULL) the key's
 * path under the mount, yours. Errors: AL_ENAME_* (key), AL_ETOOL,
 * AL_EFULL, AL_ECORRUPT, AL_EVERSION, EACCES, ENOSPC, EIO, ENOMEM; on
 * error nothing was written and *PATH is NULL. */
int al_store_put(al_store *h, const char *key, const void *data, size_t len,
                 const char *tool, al_entry *e, char **path);

/* Starts a cutter (see al_cutter_new()) for a value to be stored in H:
 * its MAX is the store's max_result_bytes in force, or the default of a
 * new store (64 MiB) when there is no store yet (nothing is created).
 * Errors: those of al_cutter_new() and al_store_stats() but AL_ENOSTORE. */
int al_store_cutter(al_store *h, al_cutter **out);

/* As al_store_put(), for the value C holds (al_cutter_finish() is called
 * when it was not): its kept bytes are stored, with the value's whole
 * length (al_cutter_total()) as original size and truncated set when it
 * was cut. When the store's max_result_bytes is by now below C's MAX, the
 * kept bytes are cut again to it. C stays yours. An empty value is stored
 * as an empty entry. Errors: those of al_store_put(), EINVAL (C NULL). */
int al_store_put_cutter(al_store *h, const char *key, al_cutter *c,
                        const char *tool, al_entry *e, char **path);

/* Reads KEY: *DATA gets its bytes (yours; never NULL on success, even for
 * an empty value; a NUL follows them, not counted), *LEN their count, E
 * (may be NULL) the entry.
 * One answer for every reader, the mount's (doc/remote.md, "One answer"):
 * the key live here; else, on a store with a remote, the remote's object
 * (E's where is AL_WHERE_REMOTE; a result evicted here or written by
 * another host); else a tombstone, here or on the remote (AL_EEVICTED);
 * else never written (AL_ENOTFOUND). A key removed here whose tombstone is
 * still pending reads as removed, whatever the remote holds.
 * Errors: AL_ENOTFOUND (never written), AL_EEVICTED (E's gone_ns and
 * gone_reason say when and why), AL_EUNREACHABLE (the key is not live
 * here and the remote could not answer: al_store_remote_message() names
 * the remote and the cause), AL_ENOSTORE (no store there: never written
 * either), AL_ENAME_*, ENOMEM, LMDB failures. */
int al_store_get(al_store *h, const char *key, void **data, size_t *len,
                 al_entry *e);

/* Looks KEY up without reading its bytes (on the remote: a HEAD), with
 * al_store_get()'s answer. Returns 0 and fills E for a live key (E's where
 * says whether the bytes are here); errors as al_store_get(). */
int al_store_stat(al_store *h, const char *key, al_entry *e);

/* Removes KEY; it then reads as evicted (reason "removed") on every host.
 * A key live here is removed here, then its tombstone goes to the remote
 * (AL_EREMOTE: removed here, the tombstone pending). A key not live here
 * that the remote holds (evicted here, or written by another host) gets
 * its tombstone on the remote at once.
 * Errors: AL_ENOTFOUND, AL_EEVICTED (already gone everywhere; E says when
 * and why), AL_EREMOTE, AL_EUNREACHABLE (not live here, and the remote
 * could not be asked or told: nothing was removed), AL_ENOSTORE,
 * AL_ENAME_*, AL_EFULL, EIO. E may be NULL. */
int al_store_remove(al_store *h, const char *key, al_entry *e);

/* Called once per live key by al_store_list(), in byte order of keys. KEY
 * and E are valid only during the call. Return 0 to go on; anything else
 * stops the listing and becomes al_store_list()'s result. */
typedef int (*al_list_fn)(const char *key, const al_entry *e, void *ctx);

/* Lists the namespace's live keys: those here and, on a store with a
 * remote, those only the remote holds (E's where AL_WHERE_REMOTE; their
 * size and created come from the listing, their tool is not known), in
 * byte order, each once. Errors: AL_ENOSTORE, LMDB failures, the
 * callback's value, or AL_EUNREACHABLE after every local key was listed
 * (the remote's listing failed: the answer is partial). */
int al_store_list(al_store *h, al_list_fn fn, void *ctx);

/* Store-wide figures. */
typedef struct al_stats {
    uint64_t entries;          /* live entries, all namespaces */
    uint64_t bytes;            /* sum of their sizes (before compression) */
    uint64_t max_total_bytes;
    uint64_t max_result_bytes;
    uint64_t evictions;        /* evicted to keep the bound, ever */
    uint64_t removals;         /* removed by callers, ever */
    uint64_t tombstones;       /* evicted/removed names remembered */
    uint64_t file_bytes;       /* size of data.mdb */
    uint64_t stored_bytes;     /* bytes the results occupy (compressed):
                                  what max_total_bytes bounds */
    unsigned compression;      /* AL_COMPRESS_* of later writes */
    uint64_t pending;          /* results waiting for their upload to the remote */
} al_stats;

/* Fills *OUT. Errors: AL_ENOSTORE, LMDB failures. */
int al_store_stats(al_store *h, al_stats *out);

/* The local store as a cache of the remote: results read from the remote
 * are kept as cached copies of their version (doc/remote.md, "The local
 * store as a cache"). A struct apart from al_stats so that programs built
 * against an earlier al_stats keep working. */
typedef struct al_cache_stats {
    uint64_t entries;          /* live entries that are cached copies (al_stats'
                                  entries counts them too) */
    uint64_t bytes;            /* the sum of their sizes */
    uint64_t hits;             /* reads a cached copy served, ever */
    uint64_t misses;           /* reads that fetched from the remote, ever */
} al_cache_stats;

/* Fills *OUT. Errors: AL_ENOSTORE, LMDB failures. */
int al_store_cache_stats(al_store *h, al_cache_stats *out);

/* The largest max_total_bytes a store can have: 16 TiB. */
#define AL_MAX_TOTAL_LIMIT (UINT64_C(1) << 44)
/* The smallest max_total_bytes or max_result_bytes: room for the cut's
 * marker line and a few bytes of head and tail (see al_cut). */
#define AL_MIN_LIMIT 64u

/* Creates the store when missing, then changes the limits given (0 keeps a
 * limit). The max_result_bytes in force is the configured one (the last
 * given) or max_total_bytes, whichever is lower: lowering the bound below
 * it holds it down, and raising the bound again gives the configured value
 * back (al_store_max_result() tells both). Lowering the bound evicts the
 * oldest results at once, *NEVICTED (may be NULL) gets how many.
 * Errors: AL_ELIMITS (a limit under AL_MIN_LIMIT, max_total_bytes above
 * AL_MAX_TOTAL_LIMIT, max_result_bytes above max_total_bytes), AL_EFULL,
 * EACCES, EIO; nothing changes on error, and a refused call creates no
 * store. */
int al_store_init(al_store *h, uint64_t max_total_bytes,
                  uint64_t max_result_bytes, uint64_t *nevicted);

/* The store's max_result_bytes: *IN_FORCE (may be NULL) the limit results
 * are cut to now, never above max_total_bytes (al_stats's
 * max_result_bytes); *CONFIGURED (may be NULL) the value last set, above
 * *IN_FORCE while a lower max_total_bytes holds it down.
 * Errors: AL_ENOSTORE, LMDB failures. */
int al_store_max_result(al_store *h, uint64_t *in_force, uint64_t *configured);

/* *PUTS gets how many results were written into the store since it was
 * made, by every writer (a replace counts, a refused write does not). The
 * count is kept in the store by each write, so it never goes backwards;
 * a store made by an earlier version counts its past writes too. With
 * al_stats's evictions and removals, what agentlink stats --prometheus
 * reports as counters. Errors: AL_ENOSTORE, LMDB failures. */
int al_store_puts(al_store *h, uint64_t *puts);

/* How a store keeps results: compressed with zstd (the default for new
 * stores; a result that does not shrink is kept raw) or always raw. */
#define AL_COMPRESS_NONE 0u
#define AL_COMPRESS_ZSTD 1u

/* Creates the store when missing, then sets how later writes are stored
 * (AL_COMPRESS_*); results already stored stay as they are and readable.
 * Errors: EINVAL (not an AL_COMPRESS_* value), EACCES, AL_EFULL, EIO. */
int al_store_set_compression(al_store *h, unsigned compression);

/* Removes every live entry of the namespace whose path under the mount
 * (MOUNT "/" KEY) appears in the LEN bytes of TEXT (say, a span of
 * conversation that was just summarised). Where several keys match at one
 * place, the longest is taken. FN (may be NULL) is called with each key
 * removed (E is its entry before removal). *NDROPPED (may be NULL) gets
 * the count. Errors: AL_ENOSTORE is not one (nothing to drop: 0),
 * LMDB failures, ENOMEM, or FN's non-zero value (keys removed so far
 * stay removed). */
int al_store_drop_referenced(al_store *h, const void *text, size_t len,
                             al_list_fn fn, void *ctx, size_t *ndropped);

/* ---- The remote tier (doc/remote.md) ------------------------------------
 * A store may name a remote, "s3://BUCKET/PREFIX" on an S3 API; endpoint,
 * region and credentials come from the AWS variables and files. Then every
 * write (al_store_put, al_store_put_cutter, al_offload, al_offload_cutter)
 * commits here, uploads, and returns 0 once the remote has the result. If
 * the upload fails, the write returns AL_EUPLOAD *with everything a success
 * gives* (entry, path, pointer text): the result is stored here and
 * pending, al_store_remote_message() says why, and al_store_sync() or a
 * later write sends it. Removals (al_store_remove, drop-referenced) leave a
 * tombstone on the remote; when that fails they return AL_EREMOTE after
 * the local removal, and the tombstone is pending in the store:
 * al_store_sync() or a later write sends it. */

/* Sets the store's remote to URL ("s3://BUCKET[/PREFIX]"; NULL, "" or
 * "none" removes it), creating the store when missing. A URL is checked
 * first: its syntax, the AWS configuration, and one listing of the prefix
 * (bucket there, credentials accepted); nothing is recorded when a check
 * fails. Errors: AL_EREMOTE (al_store_remote_message() says which check
 * and why), EACCES, EIO. */
int al_store_set_remote(al_store *h, const char *url);

/* Copies the store's remote URL into BUF (CAP bytes; "" when none).
 * Errors: AL_ENOSTORE, ERANGE, LMDB failures. */
int al_store_remote(al_store *h, char *buf, size_t cap);

/* Why the last remote step of H failed: "" when it did not. Valid until
 * the next call on H. Never names a secret. */
const char *al_store_remote_message(const al_store *h);

/* Uploads every result pending in the store (all namespaces), then writes
 * every pending tombstone. *UPLOADED, *LEFT (may be NULL) get the counts,
 * tombstones included. Returns 0 when nothing is left
 * pending, AL_EUPLOAD when some is (al_store_remote_message() says why),
 * AL_EREMOTE when the remote cannot be used, AL_ENOSTORE; a store naming no
 * remote has nothing to send (0). */
int al_store_sync(al_store *h, unsigned *uploaded, unsigned *left);

/* Removes from the remote, with tombstones, the results of every
 * namespace older than MAX_AGE_S seconds (0: any age), then the oldest
 * until at most MAX_BYTES remain (0: no bound): for operators, on a timer.
 * *REMOVED, *KEPT_BYTES (may be NULL) get what was removed and what
 * remains. Errors: AL_EREMOTE (no remote, or it failed), AL_ENOSTORE. */
int al_store_gc_remote(al_store *h, uint64_t max_age_s, uint64_t max_bytes, unsigned *removed,
                       uint64_t *kept_bytes);

/* ---- Offload ----------------------------------------------------------- */
/* Applies the policy POL (NULL: built-in default) to LEN bytes at DATA, the
 * result of tool TOOL for the raw call id CALL_ID (CALL_ID_LEN bytes; see
 * al_key_derive). When the policy keeps it, *OUT is a copy of DATA (byte
 * for byte) and the store is not touched. Otherwise the result is stored
 * (cut when over max_result_bytes) under the derived key and *OUT is the
 * pointer text built from the stored bytes with POL's preview settings.
 * *OUT is yours, NUL-terminated; *OUTLEN its length (NUL excluded);
 * *OFFLOADED (may be NULL) 1 when stored, else 0.
 * Errors: AL_ETOOL, the errors of al_store_put(), ENOMEM, EINVAL; on error
 * *OUT is NULL and nothing was written. */
int al_offload(al_store *h, const al_policy *pol, const char *tool,
               const void *call_id, size_t call_id_len, const void *data,
               size_t len, char **out, size_t *outlen, int *offloaded);

/* As al_offload() for the value C holds (from al_store_cutter()), once the
 * caller knows it goes to the store: the policy is not applied, only its
 * preview settings used. The value is stored as al_store_put_cutter() does
 * under the key derived from CALL_ID, and *OUT is the pointer text built
 * from the bytes stored, naming the value's whole length. For a caller
 * reading a result that may be far longer than max_result_bytes: agentlink
 * offload reads a prefix until the policy's rule is sure to offload (say,
 * past its over_bytes), then streams the prefix and the rest into C.
 * Errors: as al_offload(); EINVAL (C NULL). */
int al_offload_cutter(al_store *h, const al_policy *pol, const char *tool,
                      const void *call_id, size_t call_id_len, al_cutter *c,
                      char **out, size_t *outlen);

#ifdef __cplusplus
}
#endif
#endif
