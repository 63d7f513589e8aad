#!/bin/bash
# agentlink mcp-proxy on a store with a remote tier, against the real
# radosgw tests/run.sh started: a tools/call result over the budget whose
# upload fails is still stored here and still becomes a pointer (the client
# can read it on this host), the proxy says on stderr that it is pending,
# and `agentlink sync` later uploads exactly the stored bytes. The remote is
# made unreachable for the proxy alone by pointing its endpoint at a closed
# local port (the store keeps only the URL), so radosgw is not stopped.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
r_require_s3
unset OFFLOADFS_STORE OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG
PREFIX=mcp-$$-$(date +%s%N)
ST=$T_TMP/store
SERVER="python3 $T_TOP/tests/mcp/mcp_server.py"
s3get() {
    curl -s -f --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
        -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$AWS_ENDPOINT_URL/$OFFLOADFS_S3_BUCKET/$PREFIX/$1"
}

t_rc "init --remote" 0 $AGENTLINK --store "$ST" init --remote "s3://$OFFLOADFS_S3_BUCKET/$PREFIX"
CLOSED=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$T_TMP/in" <<'EOF'
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"text","arguments":{"n":5000,"width":20}}}
EOF
# No retries for the proxy's refused upload; the later sync keeps the default
# limits (a 1 s stall limit there failed under valgrind on a loaded machine).
AWS_ENDPOINT_URL_S3=http://127.0.0.1:$CLOSED OFFLOADFS_REMOTE_RETRIES=0 \
    $AGENTLINK mcp-proxy --store "$ST" -- $SERVER <"$T_TMP/in" >"$T_TMP/proxied" 2>"$T_TMP/perr"
t_eq "remote unreachable: the proxy exits 0" "$?" 0
$SERVER <"$T_TMP/in" >"$T_TMP/direct"
answer() { # answer FILE: the text of the tools/call answer's first part
    python3 -c 'import json,sys; m=[json.loads(l) for l in open(sys.argv[1])]; print(m[-1]["result"]["content"][0]["text"], end="")' "$1"
}
ptr=$(answer "$T_TMP/proxied")
case $ptr in
"[offloadfs] The result of tool 'text' was too large"*) t_ok "the client gets the pointer" ;;
*) t_not_ok "the client gets the pointer"; echo "  got: ${ptr:0:200}" ;;
esac
key=$(printf '%s\n' "$ptr" | sed -n 's|^  /large_tool_results/\(.*\)$|\1|p' | head -1)
t_check "the pointer names a key" test -n "$key"
case $(cat "$T_TMP/perr") in
*"is stored here but not yet on its remote"*"pending: agentlink sync sends it"*) t_ok "stderr says the result is pending" ;;
*) t_not_ok "stderr says the result is pending"; head -c 600 "$T_TMP/perr" ;;
esac
answer "$T_TMP/direct" >"$T_TMP/want"
$AGENTLINK --store "$ST" get "$key" >"$T_TMP/got" 2>/dev/null
t_check "the stored bytes are the server's text, exactly" cmp -s "$T_TMP/got" "$T_TMP/want"
t_eq "stats: 1 pending" \
    "$($AGENTLINK --store "$ST" --json stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["pending"])')" 1
t_rc "remote reachable: sync exits 0" 0 $AGENTLINK --store "$ST" sync
t_eq "  1 uploaded, 0 pending" "$(cat "$T_TMP/out")" "1 uploaded, 0 pending"
s3get "default/$key" >"$T_TMP/obj"
t_check "the object holds the stored bytes, exactly" cmp -s "$T_TMP/obj" "$T_TMP/want"
t_done
