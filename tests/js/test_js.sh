#!/bin/bash
# test_js.sh -- agentlink/js (OffloadBackend, the deepagents backend) against
# real stores and real offloadfs mounts: installs the pinned npm packages
# (scripts/npm-deps.sh, outside the tree; a failed install fails the suite),
# makes and mounts the stores, then runs node's test runner on
# tests/js/*.test.mjs (each node test prints one TAP "ok"/"not ok" line) and
# checks the daemons exit cleanly. index.d.ts is type-checked with tsc.
# run.sh: npm clients
. "$(dirname "$0")/../lib.sh"
. "$T_TOP/tests/fs/mountlib.sh"
m_require_fuse
if ! command -v node >/dev/null; then t_not_ok "node is installed (Node 20)"; t_done; fi
if "$T_TOP/scripts/npm-deps.sh" "$T_TOP/tests/js" >"$T_TMP/npm.log" 2>&1; then
    t_ok "scripts/npm-deps.sh installs tests/js's pinned packages"
else
    t_not_ok "scripts/npm-deps.sh installs tests/js's pinned packages"; sed 's/^/  /' "$T_TMP/npm.log"; t_done
fi

# index.d.ts against deepagents' own declarations (tests/js/types/use.ts).
t_rc "tsc: index.d.ts type-checks as deepagents' BackendProtocolV2" 0 \
    bash -c "cd '$T_TOP/tests/js' && node_modules/.bin/tsc -p tsconfig.json"
[ -s "$T_TMP/out" ] && sed 's/^/  /' "$T_TMP/out"

# A mount whose daemon the tests stop (SIGSTOP) and continue.
PS=$(m_store stopped) && t_check "mount a store whose daemon the tests stop" m_mount "$PS" "$T_TMP/stopmnt"
_m_dead_mount() { ! ls "$1" >/dev/null 2>&1 && ! kill -0 "${M_PIDS[$1]}" 2>/dev/null; }

# The CLI the backend runs (tests/run.sh runs this suite in make test only).
AL_BIN=$T_BUILD/agentlink

BOUND=$((1536 * 1024))
S=$(m_store main 64M) && O=$(m_store other) && SB=$T_TMP/bound &&
    "$M_AL" --store "$SB" init --max-total-bytes "$BOUND" >/dev/null
t_check "stores made" test -d "$S" -a -d "$O" -a -d "$SB"
t_check "mount the main store" m_mount "$S" "$T_TMP/mnt"
t_check "mount its namespace ns" m_mount "$S" "$T_TMP/nsmnt" -o namespace=ns
t_check "mount another store" m_mount "$O" "$T_TMP/othermnt"
FS=$(m_store foo) && t_check "mount a third store as -o fsname=foo" m_mount "$FS" "$T_TMP/foomnt" -o fsname=foo
t_check "mount the small-bound store" m_mount "$SB" "$T_TMP/boundmnt"
# A mount whose daemon died: still listed, every access ENOTCONN.
DS=$(m_store dead) && t_check "mount a store, then kill its daemon" m_mount "$DS" "$T_TMP/deadmnt" &&
    kill -9 "${M_PIDS[$T_TMP/deadmnt]}" && t_wait_until 10 _m_dead_mount "$T_TMP/deadmnt"

export OFL_AGENTLINK=$AL_BIN OFL_TMP=$T_TMP OFL_BOUND=$BOUND
export OFL_STORE=$S OFL_MOUNT=$T_TMP/mnt OFL_NS_MOUNT=$T_TMP/nsmnt
export OFL_OTHER_STORE=$O OFL_OTHER_MOUNT=$T_TMP/othermnt
export OFL_FOO_STORE=$FS OFL_FOO_MOUNT=$T_TMP/foomnt
export OFL_BOUND_STORE=$SB OFL_BOUND_MOUNT=$T_TMP/boundmnt
export OFL_DEAD_STORE=$DS OFL_DEAD_MOUNT=$T_TMP/deadmnt
export OFL_STOP_STORE=$PS OFL_STOP_MOUNT=$T_TMP/stopmnt OFL_STOP_PID=${M_PIDS[$T_TMP/stopmnt]}
unset OFFLOADFS_STORE OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG
for f in "$T_TOP"/tests/js/*.test.mjs; do
    echo "# node --test $(basename "$f")"
    # Top-level tests print "ok N - name" / "not ok N - name" (TAP).
    if ! (cd "$T_TOP/tests/js" && node --test --test-reporter=tap "$f"); then
        T_FAILS=$((T_FAILS + 1))
    fi
done

fusermount3 -uz "$T_TMP/deadmnt"
kill -CONT "$OFL_STOP_PID" 2>/dev/null # whatever a failed test left
for m in mnt nsmnt othermnt foomnt boundmnt stopmnt; do
    m_umount "$T_TMP/$m"; rc=$?
    t_eq "offloadfs on $m exits 0 after unmount" "$rc" 0
done
t_done
