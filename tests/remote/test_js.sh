#!/bin/bash
# agentlink/js (OffloadBackend) on a store with a remote tier, against the
# real radosgw tests/run.sh started: a write whose upload fails (the CLI
# exits 5: stored here, pending) is a successful write that carries the
# path and says it is pending (metadata.pending); sync then uploads it.
# The remote is made unreachable for the writes by pointing them at a
# closed local port (the store keeps the URL; the endpoint comes from the
# environment), so radosgw is not stopped. Needs node only, no npm package.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
AL=$T_BUILD/agentlink
r_require_s3
if ! command -v node >/dev/null; then t_not_ok "node is installed (Node 20)"; t_done; fi
PREFIX=js-$$-$(date +%s%N)
S=$T_TMP/s
export OFFLOADFS_REMOTE_STALL_SECONDS=1 OFFLOADFS_REMOTE_RETRIES=0
unset OFFLOADFS_STORE OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG
s3get() {
    curl -s -f --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
        -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$AWS_ENDPOINT_URL/$OFFLOADFS_S3_BUCKET/$PREFIX/$1"
}

t_rc "init --remote" 0 "$AL" --store "$S" init --remote "s3://$OFFLOADFS_S3_BUCKET/$PREFIX"
# A port nothing listens on: bound, then closed (connections are refused).
CLOSED=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "# node --test js_pending.mjs (remote at a closed port $CLOSED)"
if ! (cd "$T_TOP/tests/remote" && OFL_AGENTLINK=$AL OFL_STORE=$S OFL_TMP=$T_TMP \
    AWS_ENDPOINT_URL_S3=http://127.0.0.1:$CLOSED node --test --test-reporter=tap js_pending.mjs); then
    T_FAILS=$((T_FAILS + 1))
fi
t_rc "remote reachable again: sync uploads the pending writes" 0 "$AL" --store "$S" sync
t_eq "  says so" "$(cat "$T_TMP/out")" "3 uploaded, 0 pending"
t_eq "  the object of write() holds its bytes" "$(s3get default/call_p1.txt)" "a result kept here"
t_eq "  the object of uploadFiles() holds its bytes" "$(s3get default/call_p2.txt)" "uploaded bytes"
t_done
