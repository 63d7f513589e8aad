/* internal.h -- helpers shared by the agentlink sources, and by the programs
 * built on the library's static archive (the command, the MCP proxy, the
 * tests). What every program shares, the daemon included, is in common/
 * (policy loading, settings, buffers). Not installed, and not exported by
 * libagentlink.so: everything declared here is hidden (the pragma below),
 * so the shared library's exports are exactly agentlink.h. */
#ifndef OFFLOADFS_AGENTLINK_INTERNAL_H
#define OFFLOADFS_AGENTLINK_INTERNAL_H

#include "agentlink/agentlink.h"
#include "store/store.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#pragma GCC visibility push(hidden)

/* Counts characters as al_text_info() does, over a buffer that grows:
 * decodes the LEN bytes at DATA from *POS on and adds the characters to
 * *CHARS, stopping where fewer than 4 bytes are left (a sequence may be
 * incomplete there) unless FINAL (the buffer holds the whole text). Call
 * again with the same *POS and *CHARS after the buffer grew. */
void al_text_count(const void *data, size_t len, size_t *pos, uint64_t *chars, int final);

/* The SHA-256 (FIPS 180-4) of the LEN bytes at DATA, as 64 lowercase hex
 * digits and a NUL into HEX. Cannot fail. (key.c: what al_key_derive()
 * hashes with; the tests check it against the FIPS vectors.) */
void al_sha256_hex(const void *data, size_t len, char hex[65]);

/* Appends to the pointer text *TEXT (NUL-terminated, malloc'd; *LEN, may
 * be NULL, its new length) the paragraph saying the result is pending:
 * readable on this host now, "No such file or directory" on another until
 * it is uploaded (doc/remote.md, "Pending on another host"). 0 or ENOMEM
 * (*TEXT unchanged). */
int al_pointer_add_pending(char **text, size_t *len);

/* Converts a store error code into the AL_E* code at the same offset;
 * errno values and 0 pass through. The one place that translates. */
int al_err_from_store(int rc);

/* ---- the policy (policy.c) -----------------------------------------------
 * An al_policy wraps the policy common/ loads (common/policy.h); the
 * settings resolution (common/settings.h) takes that one. */

/* The common/ policy POL wraps, or NULL for NULL (the built-in default). */
const struct common_policy *al_policy_common(const al_policy *pol);

/* al_store_open(), whose handle checks every page of data.mdb when it opens
 * the store when FULL (what al_store_open does: a library handle may live
 * long), else only the quick check (store_open without STORE_VERIFY): for
 * the CLI, a process per command, which cannot spend a walk of every page
 * on each (about 50 ms for a full 1 GiB store) and turns a fault on a
 * damaged page into a clear error instead (cli/setup.c). */
int al_store_open_checked(al_store **out, const char *dir, const char *ns,
                          const char *mount, const al_policy *pol, int full);

/* ---- the remote tier (tier_use.c) ---------------------------------------- */
struct tier;
struct remote_conn;
struct remote_info;
typedef struct al_tier al_tier;

/* Makes *TP follow the remote ST names now (reopening when the URL
 * changed); *HAS 1 when it names one. Returns 0; AL_EREMOTE when the
 * remote's configuration is unusable (al_tier_message() says why); store
 * errors; ENOMEM. */
int al_tier_use(store *st, al_tier **tp, int *has);

/* ---- uploads without the handle's lock (tier_use.c, inflight.c) ---------
 * A write commits with the handle's lock held, then uploads without it, so
 * threads on one handle (and handles in one process) upload at the same
 * time: al_tier_upload_begin() under the lock takes what the upload needs
 * (a reference on the tier, a connection of its own), al_tier_upload_run()
 * sends without the lock, al_tier_upload_end() under the lock again gives
 * them back and records the outcome. The store stays open meanwhile: the
 * handle closes it only when no upload runs (handle.c). The version's
 * pending mark is cleared by version (tier_upload()): a result replaced
 * or removed meanwhile is never marked uploaded for the wrong bytes. */
typedef struct al_tref al_tref;
typedef struct al_upload {
    al_tref *ref;            /* NULL: nothing to send (no remote) */
    struct remote_conn *c;   /* this upload's own connection */
    store *st;
    dev_t dev;               /* the store's data file: the in-flight set's */
    ino_t ino;
    const char *ns, *key;    /* the caller's, valid until al_tier_upload_end() */
    uint64_t version;
    int rc;                  /* al_tier_upload_run()'s outcome */
    char msg[STORE_REMOTE_MAX + 600];
} al_upload;

/* With the handle's lock held, after a write committed VERSION of (NS, KEY)
 * in ST (whose data file is DEV, INO): fills *U for al_tier_upload_run().
 * No remote: 0 and U->ref NULL (run and end then do nothing). Returns 0;
 * AL_EUPLOAD when the remote's configuration is unusable (the result
 * stays pending; al_tier_message() says why); store errors; ENOMEM. NS and
 * KEY must stay valid until al_tier_upload_end(). */
int al_tier_upload_begin(store *st, al_tier **tp, dev_t dev, ino_t ino, const char *ns,
                         const char *key, uint64_t version, al_upload *u);

/* Without the handle's lock: uploads U's version (tier_upload()), then,
 * when that worked, sends what earlier writes left pending and nobody in
 * this process is sending now (the in-flight set), stopping at the first
 * failure (those stay pending: not this write's error). U->rc gets 0 or
 * the upload's error; never fails otherwise. */
void al_tier_upload_run(al_upload *u);

/* With the handle's lock held again: gives back what U took (the
 * connection to the tier's idle ones, the reference, released with the
 * tier when the remote was changed meanwhile) and records the outcome as
 * the handle's message. Returns 0 (sent, or replaced/removed meanwhile:
 * its own writer's to send) or AL_EUPLOAD (the result stays here,
 * pending; al_tier_message() says why). */
int al_tier_upload_end(al_tier *at, al_upload *u);

/* With the handle's lock held: *OUT a copy of *TP (al_tier_use() done on
 * ST first) for remote calls made without the lock -- al_tier_find() and
 * the others of lookup.c take &*OUT as their TP --, sharing its tier,
 * with a connection of its own. *OUT NULL when there is no usable remote:
 * then make the call with the lock held (it answers without the network).
 * 0 or ENOMEM. Give it back with al_tier_return(). */
int al_tier_borrow(store *st, al_tier **tp, al_tier **out);

/* With the handle's lock held again: gives back what B took and records
 * its failure's message, if any, as AT's. NULL B is fine. */
void al_tier_return(al_tier *at, al_tier *b);

/* The in-flight set of a process (inflight.c), per store (DEV, INO of its
 * data file): a writer holds its key from before its commit to after its
 * upload (any number of holds); a catch-up takes a key only when nobody
 * holds it. al_inflight_hold: 0 or ENOMEM. al_inflight_take: 1 when taken
 * (drop it after), 0 when in flight or without memory. al_inflight_drop:
 * releases one hold (cannot fail). */
int al_inflight_hold(dev_t dev, ino_t ino, const char *ns, const char *key);
int al_inflight_take(dev_t dev, ino_t ino, const char *ns, const char *key);
void al_inflight_drop(dev_t dev, ino_t ino, const char *ns, const char *key);

/* After (NS, KEY) was removed from ST: its tombstone on the remote. 0, or
 * AL_EREMOTE (al_tier_message() says why). */
int al_tier_after_remove(store *st, al_tier **tp, const char *ns, const char *key);

/* The tier and connection of AT after al_tier_use() said *HAS. */
struct tier *al_tier_tier(al_tier *at);
struct remote_conn *al_tier_conn(al_tier *at);

/* Records the connection's message (or RC's text) as AT's. */
void al_tier_fail(al_tier *at, int rc);

/* The last failure's message ("" after a success, or NULL AT). */
const char *al_tier_message(const al_tier *at);
void al_tier_free(al_tier *at);
/* al_tier_free() in a child of fork(): frees AT but leaves its connection
 * and remote tier as they are (never closed: a TLS session the parent may
 * be using would get our close_notify). NULL is fine. */
void al_tier_forget(al_tier *at);

/* ---- one answer for every reader (lookup.c) --------------------------------
 * The mount's order for a key: live here, else the remote's object, else a
 * tombstone (here or there), else never written (doc/remote.md). */

/* After the local store answered RC for (NS, KEY) (E filled from its
 * tombstone when RC is AL_EEVICTED): the answer with the remote. RC other
 * than AL_ENOTFOUND / AL_EEVICTED, no remote, or a removal here whose
 * tombstone is pending: RC as it is. Otherwise 0 (the remote's object: E
 * from its metadata, where AL_WHERE_REMOTE; with DATA, *DATA its bytes
 * (yours, a NUL after them) and *LEN their count; DATA NULL: a HEAD only),
 * AL_EEVICTED (a tombstone on the remote: E says when, reason removed), RC
 * (the remote has neither), AL_EUNREACHABLE (al_tier_message() says why),
 * ENOMEM. */
int al_tier_find(struct store *st, al_tier **tp, const char *ns, const char *key, int rc,
                 al_entry *e, void **data, size_t *len);

/* For a removal of (NS, KEY) that the local store answered RC (not live
 * here): when the remote holds the object, its tombstone is written and
 * the object deleted (tier_remove()): 0. Otherwise as al_tier_find():
 * RC, AL_EEVICTED (already removed there), AL_EUNREACHABLE (nothing was
 * removed). */
int al_tier_remove_key(struct store *st, al_tier **tp, const char *ns, const char *key, int rc,
                       al_entry *e);

/* ---- the local store as a cache of the remote (cache.c) ------------------ */

/* Keeps LEN bytes at DATA, fetched from the remote as version IN (its
 * ETag, metadata), as a cached copy of (NS, KEY) in ST when the store
 * takes it (store_put_cached(): a copy too big, or a name written here
 * meanwhile, is not kept), and counts a cache miss. Never fails. */
void al_cache_keep(struct store *st, const char *ns, const char *key, const void *data,
                   size_t len, const struct remote_info *in);

/* For live version VERSION of (NS, KEY) in ST: when it is a cached copy,
 * asks the remote whether it still holds that version (one HEAD). Returns
 * 0 to serve the local entry: a result written here; or a cached copy the
 * remote still holds or could not be asked about (E's where then
 * AL_WHERE_CACHED; HIT counts a cache hit). Returns AL_ENOTFOUND after
 * dropping the copy when the remote holds another version, a tombstone or
 * nothing: the caller then asks the remote as for a key not here. */
int al_cache_check(struct store *st, al_tier **tp, const char *ns, const char *key,
                   uint64_t version, int hit, al_entry *e);

/* Names of NS only the remote may hold, for a listing merged with the
 * local one (both in byte order). */
typedef struct al_rname {
    char *name;
    uint64_t size;
    int64_t mtime;
} al_rname;
typedef struct al_rnames {
    al_rname *v;
    size_t n, cap, next; /* NEXT: the first not yet emitted */
} al_rnames;

/* Fills *OUT (zeroed first; al_rnames_release() it) with the remote's
 * names of NS, less those removed here with their tombstone pending. No
 * remote: 0 and none. Errors: AL_EUNREACHABLE (al_tier_message()), ENOMEM;
 * *OUT is then empty. */
int al_tier_names(struct store *st, al_tier **tp, const char *ns, al_rnames *out);

/* Calls FN for each name of R from R->next on that sorts before UPTO (all
 * when UPTO is NULL), skipping one equal to UPTO (live here: the caller
 * lists it); E is filled from the listing (where AL_WHERE_REMOTE). Returns
 * 0 or FN's value. */
int al_rnames_emit(al_rnames *r, const char *upto, al_list_fn fn, void *ctx);

/* Frees what R holds and zeroes it (NULL is fine). */
void al_rnames_release(al_rnames *r);

/* Receives the next N bytes of a result; 0 to go on, nonzero to stop. */
typedef int (*al_sink_fn)(void *arg, const void *data, size_t n);

/* al_store_get() that hands the bytes to FN(ARG) instead of returning
 * them: a result here whole (it is bounded by max_result_bytes), one only
 * the remote holds as it arrives, so memory stays bounded whatever its
 * size (agentlink get). E (may be NULL) as al_store_get() fills it (for a
 * local result: sizes and time). Errors: as al_store_get(); EIO when FN
 * stopped it (FN said why); AL_EGONE when the remote's result was replaced
 * after some of its bytes were handed on (never a mix of two versions). */
int al_store_get_stream(al_store *h, const char *key, al_sink_fn fn, void *arg, al_entry *e);

/* ---- the handle's lock (handle_lock.c) -----------------------------------
 * Below every file that locks a handle (handle.c, lookup.c, sync.c): they
 * call down to it, it calls none of them. The handle's fields are
 * handle_lock.h's, private to agentlink/. */

/* Locks H and attaches its store (CREATE: made when missing): *ST the
 * store, *TP the handle's tier slot, both valid until al_store_unlock().
 * 0 (then unlock with al_store_unlock()), or the attach error (nothing
 * locked): AL_ENOSTORE, ENOTDIR, an errno of the data file, AL_E* store
 * errors. */
int al_store_lock(al_store *h, int create, store **st, al_tier ***tp);

/* Unlocks H after a successful al_store_lock(). */
void al_store_unlock(al_store *h);

#pragma GCC visibility pop

#endif
