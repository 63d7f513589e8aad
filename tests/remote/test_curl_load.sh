#!/bin/bash
# libcurl is loaded only when a store's remote is used (remote/curl_load.h),
# against the real radosgw tests/run.sh started:
# - a store without a remote: `agentlink put`, `get`, `--version` and the
#   library (Python, in-process) load no libcurl (LD_DEBUG=libs names every
#   library the dynamic linker loads, dlopen() included; /proc/self/maps);
# - a store with a remote: the same put loads it (so the check above can
#   fail), and uploads;
# - a remote configured and libcurl unloadable ($OFFLOADFS_LIBCURL naming a
#   missing file, or a library that is not libcurl): put stores the result
#   here and exits 5 (pending) naming the library, nothing is lost; rm and
#   sync say the same; init --remote records nothing (exit 1); the daemon refuses to
#   mount (exit 1); then with libcurl back, sync uploads the exact bytes.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../fs/mountlib.sh"
r_require_s3
PREFIX=curlload-$$-$(date +%s%N)
URL=s3://$OFFLOADFS_S3_BUCKET/$PREFIX
s3get() {
    curl -s -f --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
        -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$AWS_ENDPOINT_URL/$OFFLOADFS_S3_BUCKET/$PREFIX/$1"
}
printf 'result one\n' >"$T_TMP/one"
MISSING=$T_TMP/no-such-dir/libcurl.so.4
AGENTLINK_LIB=${AGENTLINK_LIB:-$T_BUILD/libagentlink.so}

# libs NAME CMD... : runs CMD with LD_DEBUG=libs (its lines in
# $T_TMP/NAME.*, one file per process), stdout/stderr to $T_TMP/out, err;
# returns CMD's status.
libs() {
    local name=$1; shift
    rm -f "$T_TMP/$name".*
    LD_DEBUG=libs LD_DEBUG_OUTPUT=$T_TMP/$name "$@" >"$T_TMP/out" 2>"$T_TMP/err"
}
# loaded NAME WHAT : true when a process of `libs NAME` loaded a library
# whose file name contains WHAT.
loaded() { cat "$T_TMP/$1".* 2>/dev/null | grep -q "calling init: .*$2"; }
# The TLS and HTTP stack libcurl brings: none may be loaded without a remote.
STACK='libcurl\|libssl\|libcrypto\|libgnutls\|libnghttp2\|libssh\|libkrb5\|libgssapi\|libldap\|libsasl\|libbrotli\|libpsl\|librtmp\|libidn2'
stack_loaded() { cat "$T_TMP/$1".* 2>/dev/null | grep "calling init: " | grep -o "$STACK" | sort -u | tr '\n' ' '; }

# ---- no remote: nothing of libcurl -------------------------------------------
L=$T_TMP/local
"$T_BUILD/agentlink" --store "$L" init >/dev/null
libs ver $AGENTLINK --version
t_eq "--version loads no HTTP or TLS library" "$(stack_loaded ver)" ""
loaded ver libcjson && t_ok "  (LD_DEBUG=libs sees the libraries agentlink links)" ||
    { t_not_ok "  (LD_DEBUG=libs sees the libraries agentlink links)"; head -5 "$T_TMP"/ver.*; }
libs put $AGENTLINK --store "$L" put k1 <"$T_TMP/one"
t_eq "put on a store without a remote exits 0" "$(cat "$T_TMP/out")" /large_tool_results/k1
t_eq "  and loads no HTTP or TLS library" "$(stack_loaded put)" ""
libs get $AGENTLINK --store "$L" get k1
t_eq "get: the bytes, and no HTTP or TLS library" "$(cat "$T_TMP/out")|$(stack_loaded get)" "result one|"
t_rc "a missing libcurl does not matter without a remote (put exits 0)" 0 \
    env OFFLOADFS_LIBCURL="$MISSING" $AGENTLINK --store "$L" put k2 <"$T_TMP/one"
# The library in one process: what Python (ctypes) maps after a write.
py_maps() {
    local pre=
    if ldd "$AGENTLINK_LIB" 2>/dev/null | grep -q libasan; then pre=$(${CC:-gcc} -print-file-name=libasan.so); fi
    AGENTLINK_LIB=$AGENTLINK_LIB LD_PRELOAD=$pre ASAN_OPTIONS=detect_leaks=0 PYTHONPATH="$T_TOP/agentlink/python" python3 -c '
import sys, agentlink
agentlink.ToolResultStore(store=sys.argv[1]).write(key="py1", content="from python")
print(" ".join(sorted({l.split("/")[-1].split(".so")[0] for l in open("/proc/self/maps") if ".so" in l})))' "$1"
}
maps=$(py_maps "$L")
case " $maps " in *" libagentlink "*) t_ok "libagentlink.so in Python writes" ;;
*) t_not_ok "libagentlink.so in Python writes"; echo "  maps: $maps" ;; esac
t_eq "  and maps no libcurl, libssl or libgnutls" "$(echo "$maps" | tr ' ' '\n' | grep -x 'libcurl\|libssl\|libgnutls\|libcurl-gnutls')" ""

# ---- a remote: loaded when used ------------------------------------------------
S=$T_TMP/s
t_rc "init --remote" 0 "$T_BUILD/agentlink" --store "$S" init --remote "$URL"
libs rput $AGENTLINK --store "$S" put r1 <"$T_TMP/one"; rc=$?
t_eq "put on a store with a remote uploads (exit 0)" "$rc|$(s3get default/r1)" "0|result one"
loaded rput libcurl && t_ok "  and loads libcurl (LD_DEBUG sees the dlopen)" ||
    { t_not_ok "  and loads libcurl (LD_DEBUG sees the dlopen)"; grep -h "calling init" "$T_TMP"/rput.* | head; }
maps=$(py_maps "$S")
case " $maps " in *" libcurl "*) t_ok "  so does the library (Python, in-process)" ;;
*) t_not_ok "  so does the library (Python, in-process)"; echo "  maps: $maps" ;; esac

# ---- a remote, libcurl unloadable ----------------------------------------------
t_rc "libcurl missing: put exits 5 (stored here, pending)" 5 \
    env OFFLOADFS_LIBCURL="$MISSING" $AGENTLINK --store "$S" put r2 <"$T_TMP/one"
t_eq "  still printing the path" "$(cat "$T_TMP/out")" /large_tool_results/r2
grep -q "'r2' is stored here but not yet on the remote (remote $URL: cannot load libcurl '$MISSING' (.*No such file or directory): the remote tier needs it; install libcurl4 .* or name the library in OFFLOADFS_LIBCURL); it is pending" "$T_TMP/err" &&
    t_ok "  the message names the library and why" || { t_not_ok "  the message names the library and why"; cat "$T_TMP/err"; }
t_eq "  nothing is lost: get gives the bytes" "$("$T_BUILD/agentlink" --store "$S" get r2)" "result one"
t_eq "  stats: 1 pending" "$("$T_BUILD/agentlink" --store "$S" stats | sed -n 's/^pending: //p')" 1
t_check "  and it is not on the remote" bash -c "$(declare -f s3get); PREFIX=$PREFIX; ! s3get default/r2 >/dev/null 2>&1"
t_rc "libcurl missing: rm exits 5 (removed here, its tombstone pending)" 5 \
    env OFFLOADFS_LIBCURL="$MISSING" $AGENTLINK --store "$S" rm r1
grep -q "cannot load libcurl '$MISSING'" "$T_TMP/err" && t_ok "  naming the library" ||
    { t_not_ok "  naming the library"; cat "$T_TMP/err"; }
t_eq "  stats: 2 pending" "$("$T_BUILD/agentlink" --store "$S" stats | sed -n 's/^pending: //p')" 2
t_rc "libcurl missing: sync exits 5" 5 env OFFLOADFS_LIBCURL="$MISSING" $AGENTLINK --store "$S" sync
grep -q "cannot load libcurl '$MISSING'" "$T_TMP/err" && t_ok "  naming the library" ||
    { t_not_ok "  naming the library"; cat "$T_TMP/err"; }
t_rc "not libcurl (libzstd): put exits 5" 5 env OFFLOADFS_LIBCURL=libzstd.so.1 $AGENTLINK --store "$S" put r3 <"$T_TMP/one"
grep -q "cannot use libcurl 'libzstd.so.1': it has no curl_easy_init" "$T_TMP/err" &&
    t_ok "  saying it is not libcurl" || { t_not_ok "  saying it is not libcurl"; cat "$T_TMP/err"; }
S2=$T_TMP/s2
t_rc "libcurl missing: init --remote fails (exit 1)" 1 \
    env OFFLOADFS_LIBCURL="$MISSING" $AGENTLINK --store "$S2" init --remote "$URL"
grep -q "remote '$URL' not recorded: remote $URL: cannot load libcurl '$MISSING'" "$T_TMP/err" &&
    t_ok "  naming the library" || { t_not_ok "  naming the library"; cat "$T_TMP/err"; }
t_check "  and records nothing" bash -c "'$T_BUILD/agentlink' --store '$S2' --json stats | grep -q '\"remote\":null'"
MNT=$T_TMP/mnt; mkdir -p "$MNT"
OFFLOADFS_LIBCURL=$MISSING M_REFUSED_RC=1 m_refused "libcurl missing: the daemon refuses the mount (exit 1)" \
    "$MNT" "$S" "$MNT"
grep -q "store '$S': its remote: cannot load libcurl '$MISSING'.*; nothing was mounted" "$T_TMP/err" &&
    t_ok "  naming the library" || { t_not_ok "  naming the library"; cat "$T_TMP/err"; }

# ---- libcurl back ---------------------------------------------------------------
t_rc "libcurl back: sync exits 0" 0 $AGENTLINK --store "$S" sync
t_eq "  sending all three (r2, r3, r1's tombstone)" "$(cat "$T_TMP/out")" "3 uploaded, 0 pending"
t_eq "  r2 on the remote, exact bytes" "$(s3get default/r2)" "result one"
t_check "  r1 gone from the remote, its tombstone there" \
    bash -c "$(declare -f s3get); PREFIX=$PREFIX; ! s3get default/r1 >/dev/null 2>&1 && s3get .tomb/default/r1 >/dev/null"
t_done
