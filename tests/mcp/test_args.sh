#!/bin/bash
# test_args.sh -- read_offloaded_result's arguments are taken whole or
# refused: a NUL (\u0000) inside one, or a lone surrogate escape, is an
# isError answer naming the argument and what is wrong, never a cut string
# ("99\u0000" searched as /99/) nor "needs \"path\""; a tool whose name
# only starts with the read tool's (a NUL after it) goes to the server.
. "$(dirname "$0")/../lib.sh"

unset OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG OFFLOADFS_STORE XDG_STATE_HOME
SERVER="python3 $T_TOP/tests/mcp/mcp_server.py"
ST=$T_TMP/store
IN=$T_TMP/in OUT=$T_TMP/out
export MCP_SERVER_LOG=$T_TMP/server.log
$AGENTLINK --store "$ST" init >/dev/null || { t_not_ok "agentlink init"; t_done; }
seq 1 120 | $AGENTLINK --store "$ST" put nums >/dev/null

has() { case $2 in *"$3"*) t_ok "$1" ;; *) t_not_ok "$1"; printf '  %q lacks %q\n' "${2:0:600}" "$3" ;; esac; }
# rd ID ARGS-JSON: a read tool call (ARGS as JSON text, escapes kept)
rd() { printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"read_offloaded_result","arguments":%s}}\n' "$1" "$2"; }
# field I EXPR: EXPR of the answer with id I (r is its result); answers come
# in any order: a pattern search is answered when it ends, others at once
field() { python3 -c "import json,sys; m={json.loads(l)['id']: json.loads(l) for l in open(sys.argv[1],'rb')}; r=m[$1]['result']; print($2)" "$OUT"; }

{ rd 0 '{"path":"nums","pattern":"99"}'
  rd 1 '{"path":"nums","pattern":"99\u0000"}'
  rd 2 '{"path":"nums","pattern":"\u0000x"}'
  rd 3 '{"path":"nums\u0000junk"}'
  rd 4 '{"path":"nums\ud800"}'
  rd 5 '{"path":"nums","pattern":"\udc00x"}'
  rd 6 '{"path":"nums","pattern":"\ud800\u0041"}'
  rd 7 '{"path\u0000x":"nums"}'
  rd 8 '{"path":"nums","pattern":"\ud83d\ude00|^12$"}'
  rd 9 '{"path":"nums","pattern":"\\u0000|^13$"}'
  printf '%s\n' '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"read_offloaded_result\u0000x","arguments":{"path":"nums"}}}'
} >"$IN"
timeout 300 $AGENTLINK mcp-proxy --store "$ST" -- $SERVER <"$IN" >"$OUT" 2>"$T_TMP/err"
t_eq "proxy exit 0" "$?" 0
t_eq "eleven answers" "$(wc -l <"$OUT")" 11

t_eq "control: pattern 99 finds line 99" "$(field 0 'r["isError"], r["content"][0]["text"].split("\n")[1]')" \
    $'False 99\t99'
for i in 1 2; do
    t_eq "pattern with a NUL ($(sed -n "$((i + 1))p" "$IN" | grep -o '"pattern":"[^"]*"')): isError" \
        "$(field $i 'r["isError"]')" True
    t_eq "... the answer names the argument and the NUL" "$(field $i 'r["content"][0]["text"]')" \
        'read_offloaded_result: "pattern" holds a NUL character (\u0000), which no offloaded result'"'"'s path, key or pattern can hold: send the text without it'
done
t_eq "path with a NUL: isError" "$(field 3 'r["isError"]')" True
has "... the answer names \"path\" and the NUL, not the key nums" "$(field 3 'r["content"][0]["text"]')" \
    'read_offloaded_result: "path" holds a NUL character (\u0000)'
t_eq "path with a lone high surrogate: isError" "$(field 4 'r["isError"]')" True
has "... names \"path\" and the escape (not 'needs \"path\"')" "$(field 4 'r["content"][0]["text"]')" \
    'read_offloaded_result: "path" holds an ill-formed escape (\ud800: a lone UTF-16 surrogate, no character)'
has "pattern with a lone low surrogate: names \"pattern\" and it" "$(field 5 'r["isError"], r["content"][0]["text"]')" \
    'True read_offloaded_result: "pattern" holds an ill-formed escape (\udc00: a lone UTF-16 surrogate'
has "a high surrogate followed by no low one: refused" "$(field 6 'r["content"][0]["text"]')" \
    '"pattern" holds an ill-formed escape (\ud800'
has "an argument name with a NUL: refused, saying so" "$(field 7 'r["isError"], r["content"][0]["text"]')" \
    "True read_offloaded_result: an argument's name holds a NUL character (\\u0000)"
t_eq "a surrogate pair is one character: searched, line 12 found" \
    "$(field 8 'r["isError"], r["content"][0]["text"].split("\n")[1]')" $'False 12\t12'
t_eq "an escaped backslash before u0000 is no NUL: searched, line 13 found" \
    "$(field 9 'r["isError"], r["content"][0]["text"].split("\n")[1]')" $'False 13\t13'
t_eq "a tool named read_offloaded_result\\u0000x is the server's: its answer, not the read tool's" \
    "$(field 10 'r["content"][0]["text"]')" "$(printf 'line %s xxxxxxxxxx\n' 1 2 3)"
t_done
