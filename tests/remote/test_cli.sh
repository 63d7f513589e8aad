#!/bin/bash
# agentlink with a remote tier, against the real radosgw tests/run.sh
# started: init --remote (checked first, nothing recorded on a failure),
# stats (URL, never a secret), put/offload uploading (exit 0), pending when
# the remote is stopped (exit 5, a stderr line, output as usual), sync,
# rm and drop-referenced leaving tombstones, gc --remote, --remote none.
# run.sh: alone (stops the radosgw the other remote suites share)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
AL=$T_BUILD/agentlink
r_require_s3
PREFIX=cli-$$-$(date +%s%N)
URL=s3://$OFFLOADFS_S3_BUCKET/$PREFIX
S=$T_TMP/s
# A stopped remote costs one 1 s stall per request here, not 3 x 2 s.
export OFFLOADFS_REMOTE_STALL_SECONDS=1 OFFLOADFS_REMOTE_RETRIES=0
# The object as any S3 client sees it.
s3get() {
    curl -s -f --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
        -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$AWS_ENDPOINT_URL/$OFFLOADFS_S3_BUCKET/$PREFIX/$1"
}

t_rc "init --remote s3://Bad is bad usage" 2 "$AL" --store "$S" init --remote s3://Bad
grep -q "bucket name 'Bad'" "$T_TMP/err" && t_ok "  naming the rule" || t_not_ok "  naming the rule"
t_rc "init --remote with a missing bucket fails" 1 "$AL" --store "$S" init --remote "s3://offloadfs-nosuch-$$/p"
grep -q "not recorded: CHECK .*HTTP 404 NoSuchBucket" "$T_TMP/err" && t_ok "  saying why" ||
    { t_not_ok "  saying why"; cat "$T_TMP/err"; }
t_rc "init --remote with a wrong secret fails" 1 env AWS_SECRET_ACCESS_KEY=wrong-secret "$AL" --store "$S" init --remote "$URL"
grep -q "HTTP 403 SignatureDoesNotMatch" "$T_TMP/err" && ! grep -q wrong-secret "$T_TMP/err" &&
    t_ok "  saying why, never the secret" || { t_not_ok "  saying why, never the secret"; cat "$T_TMP/err"; }
t_rc "  and records nothing" 0 "$AL" --store "$S" --json stats
grep -q '"remote":null' "$T_TMP/out" && t_ok "  (stats: remote null)" || t_not_ok "  (stats: remote null)"
t_rc "init --remote URL" 0 "$AL" --store "$S" init --remote "$URL"
t_rc "stats --json" 0 "$AL" --store "$S" --json stats
grep -q "\"remote\":\"$URL\",\"pending\":0" "$T_TMP/out" && t_ok "  names the remote, 0 pending" ||
    { t_not_ok "  names the remote, 0 pending"; cat "$T_TMP/out"; }
grep -q "$AWS_SECRET_ACCESS_KEY\|$AWS_ACCESS_KEY_ID" "$T_TMP/out" && t_not_ok "  no credential" || t_ok "  no credential"

printf 'result one\n' >"$T_TMP/one"
t_rc "put uploads (exit 0)" 0 "$AL" --store "$S" put k1 --tool web <"$T_TMP/one"
t_eq "  the object holds exactly the bytes" "$(s3get default/k1)" "result one"
head -c 100000 /dev/urandom | base64 -w 100 >"$T_TMP/big"
t_rc "offload uploads (exit 0)" 0 "$AL" --store "$S" offload --tool web --call-id call-9 <"$T_TMP/big"
t_eq "  the object holds exactly the bytes" "$(s3get default/call-9 | md5sum)" "$(md5sum <"$T_TMP/big")"

rgw_stop "$RGW"
t_rc "remote stopped: put exits 5" 5 timeout 120 "$AL" --store "$S" put k2 <"$T_TMP/one"
t_eq "  still printing the path" "$(cat "$T_TMP/out")" /large_tool_results/k2
grep -q "'k2' is stored here but not yet on the remote (PUT s3://.*/default/k2: .*); it is pending" "$T_TMP/err" &&
    t_ok "  and a line saying why" || { t_not_ok "  and a line saying why"; cat "$T_TMP/err"; }
t_rc "remote stopped: offload exits 5" 5 timeout 120 "$AL" --store "$S" offload --tool web --call-id call-10 <"$T_TMP/big"
grep -q "Full result saved to /large_tool_results/call-10\|/large_tool_results/call-10" "$T_TMP/out" &&
    t_ok "  still printing the pointer" || t_not_ok "  still printing the pointer"
t_eq "  the result reads here" "$("$AL" --store "$S" get k2)" "result one"
t_eq "  stats: 2 pending" "$("$AL" --store "$S" stats | sed -n 's/^pending: //p')" 2
t_rc "remote stopped: sync exits 5" 5 timeout 60 "$AL" --store "$S" sync
t_eq "  and says 2 pending" "$(cat "$T_TMP/out")" "0 uploaded, 2 pending"
kill -CONT "$RGW"
out=
for _ in 1 2 3 4 5; do out=$("$AL" --store "$S" sync 2>/dev/null) && break; sleep 0.3; done
t_eq "remote back: sync uploads both" "$out" "2 uploaded, 0 pending"
t_eq "  k2 on the remote" "$(s3get default/k2)" "result one"
t_eq "  stats: 0 pending" "$("$AL" --store "$S" stats | sed -n 's/^pending: //p')" 0

t_rc "rm" 0 "$AL" --store "$S" rm k1
t_check "  the object is gone" bash -c "! s3get default/k1 >/dev/null 2>&1"
t_check "  its tombstone is there" bash -c "$(declare -f s3get); PREFIX=$PREFIX; s3get .tomb/default/k1 >/dev/null"
echo "see /large_tool_results/k2 here" | "$AL" --store "$S" drop-referenced >/dev/null
t_check "drop-referenced leaves a tombstone too" \
    bash -c "$(declare -f s3get); PREFIX=$PREFIX; s3get .tomb/default/k2 >/dev/null"

t_rc "gc --remote without a bound is bad usage" 2 "$AL" --store "$S" gc --remote
t_rc "gc --remote --max-bytes 1" 0 "$AL" --store "$S" gc --remote --max-bytes 1
t_eq "  removes what is left" "$(cat "$T_TMP/out")" "removed 2 results from the remote, 0 bytes kept"

t_rc "init --remote none" 0 "$AL" --store "$S" init --remote none
t_rc "  stats --json" 0 "$AL" --store "$S" --json stats
grep -q '"remote":null' "$T_TMP/out" && t_ok "  shows no remote" || t_not_ok "  shows no remote"
rgw_stop "$RGW"
t_rc "  and a put no longer touches the remote (exit 0 with radosgw stopped)" 0 timeout 120 "$AL" --store "$S" put k3 <"$T_TMP/one"
kill -CONT "$RGW"
t_done
