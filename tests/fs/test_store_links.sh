#!/bin/bash
# A root daemon (-o allow_other, the fstab set-up) on a store that a second
# user owns, who plants links in it and swaps them while the daemon starts.
# Root owns, in a 0700 directory, a file (0644) and a store holding the
# result "secret"; in a 0755 one, a 0666 file (the only kind of root's
# files the user may hard-link). In every case below those stay as they
# were (bytes, size, mode, owner) and the user cannot read root's result
# through the mount; the daemon either refuses, naming what it refused, or
# serves the user's own store.
#   planted: lock.mdb or data.mdb a symlink, a hard link (the user's to the
#     0666 file; root's to its own store's data, as a system without
#     protected_hardlinks would let the user make), a FIFO; the store
#     directory a symlink (absolute, relative) to root's store; its parent
#     a symlink to root's directory;
#   raced: tests/tools/wakeracer (swap) exchanges lock.mdb, data.mdb, the
#     store directory or its parent with such a link on every open it sees
#     in the store, and back 30 ms later, over STORE_LINKS_N start-ups each
#     (5; 1 under valgrind).
# And what a root daemon on a user's store does right: it mounts through the
# user's own links to the user's store, and a lock.mdb it has to make is the
# user's, 0600.
# The daemon before fs/pin.c overwrote root's 0644 file (65,664 bytes) and
# served root's result to the user in the planted cases.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mountlib.sh"
m_require_fuse
RACER=$T_BUILD/tools/wakeracer
[ -x "$RACER" ] || { t_not_ok "build/tools/wakeracer is built (run make)"; t_done; }
for c in useradd userdel setpriv mkfifo sha256sum; do
    command -v "$c" >/dev/null || { t_not_ok "$c is installed (scripts/deps.sh)"; t_done; }
done
WRAP=${OFFLOADFS_WRAP:-}
N=${STORE_LINKS_N:-$([ -n "$WRAP" ] && echo 1 || echo 5)}
m_second_user || { t_not_ok "make a second user"; t_done; }
as_user() { m_as_user "$@"; }

# ---- root's files and the user's corner --------------------------------
chmod 711 "$T_TMP"
P=$T_TMP/priv PUB=$T_TMP/pub H=$T_TMP/u M=$T_TMP/m
mkdir -m 700 "$P"
mkdir -m 755 "$PUB" "$M"
mkdir -m 755 "$H" && chown "$M_UID:$M_GID" "$H"
printf "root's secret\n" >"$P/victim" && chmod 644 "$P/victim"
printf "root's shared file\n" >"$PUB/v666" && chmod 666 "$PUB/v666"
RS=$P/rs
"$M_AL" --store "$RS" init >/dev/null && echo "root's result" | "$M_AL" --store "$RS" put secret >/dev/null \
    || { t_not_ok "make root's store"; t_done; }
# root_state: what must never change (bytes, size, mode, owner)
root_state() {
    local f
    for f in "$P/victim" "$PUB/v666" "$RS/data.mdb"; do
        echo "$(sha256sum <"$f" | cut -c1-16) $(stat -c '%s %a %u %g' "$f") $f"
    done
    stat -c '%a %u %g %F' "$RS/lock.mdb"
}
ROOT_STATE=$(root_state)

# user_store NAME: the user's own store $H/NAME, holding "mine".
user_store() {
    as_user "$M_AL" --store "$H/$1" init >/dev/null &&
        echo "the user's result" | as_user "$M_AL" --store "$H/$1" put mine >/dev/null
}

# try STORE: root starts the daemon on STORE at $M; waits until it mounts
# or exits. Mounted: the user tries root's result through the mount, then
# it is unmounted. Sets TRY (mounted|refused|hung), TRY_RC, LEAK (what the
# user read of root's result), MINE (the user's own result read).
try() {
    local pid
    LEAK= MINE= TRY_RC=
    # prefetch=0 under valgrind: fs/fs.h says why
    $WRAP "$M_FS" -f -o allow_other ${WRAP:+-o prefetch=0} "$1" "$M" >"$M.log" 2>&1 &
    pid=$!
    t_on_exit "_m_hard_cleanup $pid '$M'"
    if ! t_wait_until 30 _m_mounted_or_dead "$M" "$pid"; then
        TRY=hung; _m_hard_cleanup "$pid" "$M"; return
    fi
    if mountpoint -q "$M"; then
        TRY=mounted
        LEAK=$(timeout 120 setpriv --reuid="$M_UID" --regid="$M_GID" --clear-groups cat "$M/secret" 2>/dev/null)
        MINE=$(timeout 120 setpriv --reuid="$M_UID" --regid="$M_GID" --clear-groups cat "$M/mine" 2>/dev/null)
        fusermount3 -u "$M" 2>/dev/null || fusermount3 -uz "$M" 2>/dev/null
    else
        TRY=refused
    fi
    m_wait_gone "$pid" || { kill -9 "$pid"; wait "$pid"; M_STATUS=137; }
    TRY_RC=$M_STATUS
}

# refused DESC STORE WHY: the daemon exits 1 without mounting, its message
# contains WHY; root's files unchanged, root's result unread.
refused() {
    try "$2"
    if [ "$TRY" = refused ] && [ "$TRY_RC" -eq 1 ] && grep -qF -- "$3" "$M.log"; then
        t_ok "$1: refused ('$3')"
    else
        t_not_ok "$1: refused ('$3')"
        echo "  $TRY, exit $TRY_RC, the user read '$LEAK'; log:"; sed 's/^/    /' "$M.log"
    fi
    t_eq "$1: root's files unchanged" "$(root_state)" "$ROOT_STATE"
}

# ---- the user's own store, as root serves it ---------------------------
user_store own && rm "$H/own/lock.mdb"
try "$H/own"
t_eq "the user's store (lock.mdb removed): mounted, the user reads their result, exit 0" \
    "$TRY $MINE $TRY_RC" "mounted the user's result 0"
t_eq "the daemon made lock.mdb the user's, 0600" "$(stat -c '%U %a %F' "$H/own/lock.mdb")" \
    "$M_USER 600 regular file"
as_user ln -s "$H/own" "$H/ownlink"
try "$H/ownlink"
t_eq "through the user's own symlink to it: mounted, exit 0" "$TRY $MINE $TRY_RC" \
    "mounted the user's result 0"

# ---- planted -------------------------------------------------------------
user_store s1 && as_user rm "$H/s1/lock.mdb" && as_user ln -s "$P/victim" "$H/s1/lock.mdb"
refused "lock.mdb a symlink to root's file" "$H/s1" "lock.mdb is a symbolic link"
as_user mkdir "$H/s2" && as_user ln -s "$RS/data.mdb" "$H/s2/data.mdb"
refused "data.mdb a symlink to root's store" "$H/s2" "data.mdb is a symbolic link"
user_store s3 && as_user rm "$H/s3/lock.mdb" && as_user ln "$PUB/v666" "$H/s3/lock.mdb"
refused "lock.mdb the user's hard link to root's 0666 file" "$H/s3" "lock.mdb belongs to uid 0"
user_store s4 && as_user rm "$H/s4/data.mdb" && ln "$RS/data.mdb" "$H/s4/data.mdb"
ROOT_STATE=$(root_state) # root's data.mdb now has two links
refused "data.mdb a hard link to root's store" "$H/s4" "data.mdb belongs to uid 0"
rm "$H/s4/data.mdb"; ROOT_STATE=$(root_state)
as_user ln -s "$RS" "$H/s5"
refused "the store a symlink to root's store" "$H/s5" "its path passes through '$H', which belongs to uid $M_UID"
as_user ln -s ../priv/rs "$H/s6"
refused "the store a relative symlink to root's store" "$H/s6" "its path passes through '$H', which belongs to uid $M_UID"
as_user ln -s "$P" "$H/p"
refused "the store's parent a symlink to root's directory" "$H/p/rs" "its path passes through '$H', which belongs to uid $M_UID"
user_store s7 && as_user rm "$H/s7/lock.mdb" && as_user mkfifo -m 600 "$H/s7/lock.mdb"
refused "lock.mdb a FIFO" "$H/s7" "lock.mdb is not a regular file"
as_user mkdir "$H/s8" && as_user mkfifo -m 600 "$H/s8/data.mdb"
refused "data.mdb a FIFO" "$H/s8" "data.mdb is not a regular file"

# ---- raced ---------------------------------------------------------------
# race DESC STORE DIR NAME sym|hard TARGET: N start-ups on STORE while the
# user exchanges DIR/NAME with a link to TARGET on every open in STORE.
race() {
    local desc=$1 s=$2 dir=$3 name=$4 out=$T_TMP/racer.out rpid i ino swaps bad=0 kinds=
    ino=$(stat -c %i "$dir/$name")
    setpriv --reuid="$M_UID" --regid="$M_GID" --clear-groups \
        "$RACER" swap "$s" "$dir" "$name" "$5" "$6" >"$out" 2>&1 &
    rpid=$!
    t_on_exit "kill $rpid 2>/dev/null; wait $rpid 2>/dev/null"
    t_wait_until 10 grep -qs '^ready' "$out" || { t_not_ok "$desc: the attacker starts: $(cat "$out")"; return; }
    for ((i = 0; i < N; i++)); do
        try "$s"
        kinds+=" $TRY/$TRY_RC"
        if [ "$TRY" = hung ] || [ -n "$LEAK" ] || [ "$(root_state)" != "$ROOT_STATE" ]; then
            bad=$((bad + 1))
            echo "  attempt $i: $TRY, exit $TRY_RC, the user read '$LEAK'"; sed 's/^/    /' "$M.log"
            diff <(echo "$ROOT_STATE") <(root_state) | sed 's/^/    /'
        fi
    done
    kill "$rpid"; wait "$rpid" 2>/dev/null
    # killed between its two exchanges: the attacker's link out of the way
    # (mv cannot put a directory over it) and the user's file back in place
    if [ "$(stat -c %i "$dir/$name" 2>/dev/null)" != "$ino" ]; then
        rm -f "$dir/$name"
        mv -T "$dir/.racer-$name" "$dir/$name"
    fi
    rm -f "$dir/.racer-$name"
    swaps=$(grep -c '^swap' "$out")
    echo "# $desc: $N start-ups, $swaps swaps; outcomes:$(tr ' ' '\n' <<<"$kinds" | sort | uniq -c | tr -s ' \n' ' ')"
    t_check "$desc: the attacker raced the daemon ($swaps swaps)" [ "$swaps" -gt 0 ]
    t_eq "$desc: root's files unchanged, root's result unread, no hang ($N start-ups)" "$bad" 0
}

user_store r
race "lock.mdb swapped for a symlink to root's file" "$H/r" "$H/r" lock.mdb sym "$P/victim"
race "data.mdb swapped for a symlink to root's store" "$H/r" "$H/r" data.mdb sym "$RS/data.mdb"
race "lock.mdb swapped for a hard link to root's 0666 file" "$H/r" "$H/r" lock.mdb hard "$PUB/v666"
race "the store swapped for a symlink to root's store" "$H/r" "$H" r sym "$RS"
as_user mkdir "$H/q" && user_store q/rs
race "the store's parent swapped for a symlink to root's directory" "$H/q/rs" "$H" q sym "$P"

t_eq "root's files unchanged at the end" "$(root_state)" "$ROOT_STATE"
t_eq "the user's store still serves the user's result" "$(as_user "$M_AL" --store "$H/r" get mine)" \
    "the user's result"
t_done
