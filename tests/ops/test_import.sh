#!/bin/bash
# test_import.sh -- agentlink import DIR: what is moved, what is skipped and
# left in place, the summary line, the progress bar, the exit codes, and that
# no file is ever half-imported (the store has it whole or the original stays).
# run.sh: alone (make, an install or a machine-wide path)
. "$(dirname "$0")/../lib.sh"

al() { $AGENTLINK "$@"; }
# For checks that read hundreds of entries: the CLI without a valgrind wrapper.
al_plain() { "$T_BUILD/agentlink" "$@"; }
unset OFFLOADFS_NAMESPACE OFFLOADFS_MOUNT OFFLOADFS_CONFIG XDG_STATE_HOME
export OFFLOADFS_STORE=$T_TMP/store
OUT=$T_TMP/out ERR=$T_TMP/err
has() { case $2 in *"$3"*) t_ok "$1" ;; *) t_not_ok "$1"; printf '  %q lacks %q\n' "$2" "$3" ;; esac; }
lacks() { case $2 in *"$3"*) t_not_ok "$1"; printf '  %q has %q\n' "$2" "$3" ;; *) t_ok "$1" ;; esac; }
json_get() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(($2))" "$1"; }
# Runs a command as root without the capabilities that bypass file
# permissions, so a mode 000 file is unreadable (as for any other user).
if [ "$(id -u)" -eq 0 ]; then
    nocap() { setpriv --inh-caps=-all --bounding-set=-dac_override,-dac_read_search -- "$@"; }
else
    nocap() { "$@"; }
fi
# same_as_store DESC KEY FILE : the store holds exactly FILE's bytes under KEY
same_as_store() {
    al get "$2" >"$T_TMP/got" 2>/dev/null && cmp -s "$T_TMP/got" "$3" && t_ok "$1" || t_not_ok "$1"
}

# Store limits: results up to 8 KiB, 1 MiB in all.
t_rc "init exits 0" 0 al init --max-total-bytes 1M --max-result-bytes 8K

# ---- a directory as Haystack and deepagents leave it ---------------------------
D=$T_TMP/spill K=$T_TMP/copies
mkdir -p "$D" "$K"
printf 'search results\nline 2\n' >"$D/2_web_search_call-123.txt"   # Haystack: STEP_TOOL_ID.txt
seq 1 1000 >"$D/toolu_01H8kZ3vQm9rX2"                              # deepagents: the call id
{ head -c 3000 /dev/urandom; printf '\0end'; } >"$D/bin"           # any bytes
printf 'x' >"$D/.partial"                                          # bad names
printf 'y' >"$D/$(printf 'tab\there')"
printf 'z' >"$D/$(printf 'latin\xe9')"
head -c 9000 /dev/zero | tr '\0' 'b' >"$D/big"                     # over max_result_bytes
: >"$D/empty"
mkdir "$D/subdir"; echo inner >"$D/subdir/inner.txt"                # a directory: not entered
ln -s toolu_01H8kZ3vQm9rX2 "$D/link"                               # a symlink
echo secret >"$D/locked"; chmod 000 "$D/locked"                     # unreadable
for f in "$D"/* "$D"/.partial; do [ -f "$f" ] && [ ! -L "$f" ] && cp -p "$f" "$K/"; done
chmod 644 "$K/locked"
good_bytes=$(( $(stat -c %s "$D/2_web_search_call-123.txt") + $(stat -c %s "$D/toolu_01H8kZ3vQm9rX2") + $(stat -c %s "$D/bin") ))

nocap $AGENTLINK import "$D" --tool web_search >"$OUT" 2>"$ERR"; rc=$?
t_eq "import with skipped files exits 2" "$rc" 2
t_eq "text mode prints nothing on stdout" "$(cat "$OUT")" ""
t_eq "the summary line counts what was imported, skipped and why" "$(tail -1 "$ERR")" \
    "agentlink: imported 3, skipped 8 (3 bad names, 2 not regular files, 1 empty, 1 too big, 1 unreadable), $good_bytes bytes"
t_eq "one line per skipped file plus the summary" "$(wc -l <"$ERR")" 9
lacks "no progress bar when stderr is not a terminal" "$(cat "$ERR")" $'\r'
has "a dot file is reported with the rule" "$(cat "$ERR")" \
    "agentlink: skipped '.partial': the name starts with '.', so it is not a valid key; left in place"
has "a control character is escaped in the report" "$(cat "$ERR")" "skipped 'tab\\x09here': the name contains a NUL or control character"
has "invalid UTF-8 is escaped in the report" "$(cat "$ERR")" "skipped 'latin\\xe9': the name is not valid UTF-8"
has "an oversized file is reported with the bound" "$(cat "$ERR")" \
    "agentlink: skipped 'big': 9000 bytes, over max_result_bytes 8192 (put would cut it); left in place"
has "a directory is reported" "$(cat "$ERR")" "skipped 'subdir': a directory, not a regular file"
has "a symlink is reported" "$(cat "$ERR")" "skipped 'link': a symbolic link, not a regular file"
has "an empty file is reported" "$(cat "$ERR")" "skipped 'empty': empty file, nothing to store"
has "an unreadable file is reported" "$(cat "$ERR")" "skipped 'locked': cannot open: Permission denied"

for f in 2_web_search_call-123.txt toolu_01H8kZ3vQm9rX2 bin; do
    same_as_store "'$f' is in the store byte for byte" "$f" "$K/$f"
    t_check "'$f' was removed after its put" test ! -e "$D/$f"
done
t_rc "stat of an imported file exits 0" 0 al stat --json toolu_01H8kZ3vQm9rX2
t_eq "--tool is recorded" "$(json_get "$OUT" 'j["tool"], j["truncated"], j["size"]')" "('web_search', False, 3893)"
t_rc "put path: the key is the file name under the mount" 0 al put --json 2_web_search_call-123.txt --file "$K/2_web_search_call-123.txt"
t_eq "path under the mount" "$(json_get "$OUT" 'j["path"]')" "/large_tool_results/2_web_search_call-123.txt"
for f in .partial "$(printf 'tab\there')" "$(printf 'latin\xe9')" big empty locked; do
    t_check "skipped '$f' is left in place, unchanged" cmp -s "$D/$f" "$K/$f"
done
t_check "the directory is left in place and not entered" test -f "$D/subdir/inner.txt"
t_check "the symlink is left in place" test -L "$D/link"
t_rc "the oversized file is not in the store" 3 al get big
t_rc "nothing of the directory is in the store" 3 al get inner.txt
t_eq "the store holds exactly the three imported files" "$(al ls | cut -f1 | sort | tr '\n' ' ')" \
    "2_web_search_call-123.txt bin toolu_01H8kZ3vQm9rX2 "

# ---- --keep, a clean run, replace ------------------------------------------------
C=$T_TMP/clean
mkdir -p "$C"
printf 'new run\n' >"$C/bin"
seq 1 50 >"$C/call_a"
t_rc "a clean import with --keep exits 0" 0 al import "$C" --keep
t_eq "--keep says the originals stay" "$(cat "$ERR")" "agentlink: imported 2, skipped 0, 149 bytes; originals kept"
t_check "--keep leaves the originals" test -f "$C/bin" -a -f "$C/call_a"
same_as_store "an existing key is replaced by the imported file" bin "$C/bin"
t_rc "importing the same directory again exits 0" 0 al import "$C"
t_eq "the second run moves them" "$(ls -A "$C")" ""
t_rc "an empty directory exits 0" 0 al import "$C"
t_eq "and says so" "$(cat "$ERR")" "agentlink: imported 0, skipped 0, 0 bytes"

# ---- --json, --namespace ------------------------------------------------------------
J=$T_TMP/json
mkdir -p "$J"
printf 'one' >"$J/r1"; printf 'x' >"$J/.tmp"
t_rc "--json with a skip exits 2" 2 al --namespace run7 --json import "$J"
t_eq "--json counts" "$(json_get "$OUT" 'j["imported"], j["skipped"], j["bytes"], j["not_removed"], j["kept"]')" \
    "(1, 1, 3, 0, False)"
t_eq "--json entries carry file, key and path" \
    "$(json_get "$OUT" 'j["entries"][0]["file"], j["entries"][0]["key"], j["entries"][0]["path"], j["entries"][0]["size"]')" \
    "('r1', 'r1', '/large_tool_results/r1', 3)"
t_eq "--json skips carry the reason" "$(json_get "$OUT" 'j["skips"][0]["file"], j["skips"][0]["reason"]')" "('.tmp', 'bad name')"
t_eq "--namespace puts them in that namespace" "$(al --namespace run7 ls | cut -f1)" "r1"
t_rc "and not in the default one" 3 al get r1

# ---- the bound: a run never evicts what it imported itself ---------------------------
R=$T_TMP/room
mkdir -p "$R"
for i in 1 2 3; do head -c 7000 /dev/zero | tr '\0' "$i" >"$R/r$i"; touch -d "2024-01-0$i" "$R/r$i"; done
export OFFLOADFS_STORE=$T_TMP/small
al init --max-total-bytes 16K --max-result-bytes 8K >/dev/null
t_rc "a run over max_total_bytes exits 2" 2 al import "$R"
t_eq "the oldest files go first, the one that does not fit is skipped" "$(tail -1 "$ERR")" \
    "agentlink: imported 2, skipped 1 (1 no room), 14000 bytes"
has "no room is reported" "$(cat "$ERR")" "skipped 'r3': 7000 bytes would evict results imported by this run (max_total_bytes 16384); left in place"
t_eq "r1 and r2 are in the store" "$(al ls | cut -f1 | tr '\n' ' ')" "r1 r2 "
t_eq "r3 is left in place" "$(ls "$R")" "r3"
export OFFLOADFS_STORE=$T_TMP/store

# ---- a progress bar on a terminal ------------------------------------------------------
P=$T_TMP/pty
mkdir -p "$P"
for i in $(seq 1 20); do seq 1 $((i * 10)) >"$P/f$i"; done
pty_bytes=$(cat "$P"/* | wc -c)
script -qec "$AGENTLINK import $P" /dev/null >"$T_TMP/tty" 2>&1; rc=$?
t_eq "import on a terminal exits 0" "$rc" 0
has "a terminal gets a progress bar" "$(cat "$T_TMP/tty")" "] 20/20 files"
has "the bar is redrawn in place" "$(cat "$T_TMP/tty")" $'\r'
has "and the summary after it" "$(cat "$T_TMP/tty")" "agentlink: imported 20, skipped 0, $pty_bytes bytes"

# ---- refusals ------------------------------------------------------------------------------
t_rc "a missing directory exits 2" 2 al import "$T_TMP/nope"
t_eq "it says so" "$(cat "$ERR")" "agentlink: cannot import directory '$T_TMP/nope': No such file or directory"
t_rc "a file instead of a directory exits 2" 2 al import "$K/bin"
t_eq "it says so" "$(cat "$ERR")" "agentlink: cannot import directory '$K/bin': Not a directory"
t_rc "import without DIR exits 2" 2 al import
t_eq "usage" "$(head -1 "$ERR")" "agentlink: usage: agentlink import DIR"
t_rc "import takes one DIR" 2 al import "$C" "$J"
t_rc "import does not take --file" 2 al import "$C" --file x
t_eq "it says which" "$(head -1 "$ERR")" "agentlink: import does not take --file"
t_rc "put does not take --keep" 2 al put k --keep
t_rc "a bad --tool exits 2 before anything moves" 2 al import "$D" --tool "$(printf 'a\tb')"
t_check "the bad --tool moved nothing" test -f "$D/.partial" -a -f "$D/big"
U=$T_TMP/ro
mkdir -p "$U"; printf 'keep me' >"$U/r"; chmod 555 "$U"
nocap $AGENTLINK import "$U" >"$OUT" 2>"$ERR"; rc=$?
t_eq "a directory the files cannot be removed from exits 2" "$rc" 2
t_eq "it says to use --keep" "$(cat "$ERR")" \
    "agentlink: cannot remove files from directory '$U': Permission denied; use --keep to import copies"
t_check "nothing was imported" test -f "$U/r"
t_rc "and nothing is in the store" 3 al get r
nocap $AGENTLINK import --keep "$U" >"$OUT" 2>"$ERR"; rc=$?
t_eq "--keep imports from a read-only directory" "$rc" 0
chmod 755 "$U"
printf 'not a dir' >"$T_TMP/notastore"
t_rc "a store that cannot be opened exits 1" 1 al --store "$T_TMP/notastore" import "$J"
t_check "the file was left in place" test -f "$J/.tmp"

# ---- killed half-way: every file is whole in the store, or still on disk ------------------
X=$T_TMP/kill XC=$T_TMP/killcopies
mkdir -p "$X" "$XC"
for i in $(seq 1 300); do { echo "result $i"; head -c $((i * 13)) /dev/urandom; } >"$X/r$i"; done
cp -p "$X"/* "$XC/"
export OFFLOADFS_STORE=$T_TMP/killstore
al init >/dev/null
$AGENTLINK import "$X" 2>/dev/null &
pid=$!
t_wait_until 10 test ! -e "$X/r5"
kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
bad=0 moved=0
for i in $(seq 1 300); do
    if al_plain get "r$i" >"$T_TMP/got" 2>/dev/null; then
        cmp -s "$T_TMP/got" "$XC/r$i" || { bad=$((bad + 1)); echo "  r$i: store bytes differ"; }
        [ -e "$X/r$i" ] || moved=$((moved + 1))
    else
        cmp -s "$X/r$i" "$XC/r$i" || { bad=$((bad + 1)); echo "  r$i: neither in the store nor intact on disk"; }
    fi
done
t_eq "after SIGKILL each file is whole in the store or intact on disk" "$bad" 0
t_check "some files had been moved before the kill" test "$moved" -gt 0
t_rc "running the import again finishes the move" 0 al import "$X"
t_eq "the directory is empty" "$(ls -A "$X")" ""
t_eq "the store holds all 300" "$(al ls | wc -l)" 300
t_check "and byte for byte" bash -c 'for i in $(seq 1 300); do '"$T_BUILD"'/agentlink get r$i | cmp -s - '"$XC"'/r$i || exit 1; done'

t_done
