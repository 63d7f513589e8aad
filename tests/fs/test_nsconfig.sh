#!/bin/bash
# test_nsconfig.sh -- offloadfs picks its namespace as agentlink does:
# -o namespace= > $OFFLOADFS_NAMESPACE > the policy file's "namespace"
# ($OFFLOADFS_CONFIG) > default, so the pointer agentlink offload prints
# leads to the result through the mount; a policy file agentlink refuses
# stops the daemon with the same message.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mountlib.sh"
m_require_fuse
[ -x "$M_AL" ] || { t_not_ok "build/agentlink is built"; t_done; }
unset OFFLOADFS_NAMESPACE OFFLOADFS_CONFIG OFFLOADFS_STORE OFFLOADFS_MOUNT

S=$(m_store s) || { t_not_ok "store"; t_done; }
for ns in default cfgns envns optns; do printf 'in %s\n' "$ns" | m_put "$S" which "$ns"; done
P=$T_TMP/policy.json
printf '{"namespace": "cfgns", "rules": [{"tools": ["*"], "offload": {"over_bytes": 100}}]}\n' >"$P"
M=$T_TMP/mnt

# ---- an agent's run: offload with the policy, read the pointer's path -------------
seq 1 5000 >"$T_TMP/result"
OFFLOADFS_CONFIG=$P "$M_AL" --store "$S" --mount "$M" offload --tool bash --call-id call_ns1 \
    <"$T_TMP/result" >"$T_TMP/pointer"
t_eq "agentlink offload stored into the policy's namespace" \
    "$("$M_AL" --store "$S" --namespace cfgns get call_ns1 | cmp - "$T_TMP/result" && echo same)" same
t_check "the pointer names the path under the mount" grep -qxF "  $M/call_ns1" "$T_TMP/pointer"
OFFLOADFS_CONFIG=$P m_mount "$S" "$M" || { t_not_ok "mount with the policy file"; t_done; }
t_check "the pointer's path reads back the result, byte for byte" cmp -s "$M/call_ns1" "$T_TMP/result"
t_eq "the mount shows the policy's namespace" "$(cat "$M/which")" "in cfgns"
m_umount "$M"; t_eq "that daemon exits 0" "$?" 0

# ---- precedence --------------------------------------------------------------------
OFFLOADFS_CONFIG=$P OFFLOADFS_NAMESPACE=envns m_mount "$S" "$M" || t_not_ok "mount with env + policy"
t_eq "\$OFFLOADFS_NAMESPACE beats the policy file" "$(cat "$M/which")" "in envns"
m_umount "$M"
OFFLOADFS_CONFIG=$P OFFLOADFS_NAMESPACE=envns m_mount "$S" "$M" -o namespace=optns || t_not_ok "mount with -o namespace"
t_eq "-o namespace= beats both" "$(cat "$M/which")" "in optns"
m_umount "$M"
m_mount "$S" "$M" || t_not_ok "mount without any"
t_eq "without any: default" "$(cat "$M/which")" "in default"
m_umount "$M"
OFFLOADFS_CONFIG= m_mount "$S" "$M" || t_not_ok "mount with an empty OFFLOADFS_CONFIG"
t_eq "an empty \$OFFLOADFS_CONFIG is no policy file (as for agentlink)" "$(cat "$M/which")" "in default"
m_umount "$M"
printf '{"mount": "/elsewhere"}\n' >"$T_TMP/nons.json"
OFFLOADFS_CONFIG=$T_TMP/nons.json m_mount "$S" "$M" || t_not_ok "mount with a policy without namespace"
t_eq "a policy file without a namespace: default" "$(cat "$M/which")" "in default"
m_umount "$M"

# ---- a policy file agentlink refuses stops the daemon, with agentlink's words --------
# core MSG : the message without its program prefix and its closing clause
core() { sed -e 's/^[a-z]*: //' -e 's/; nothing was written$//' -e 's/; nothing was mounted$//' "$1"; }
check_refused() { # check_refused DESC POLICY [ARGS...]
    local desc=$1 pol=$2; shift 2
    OFFLOADFS_CONFIG=$pol "$M_AL" --store "$S" put k2 >/dev/null 2>"$T_TMP/alerr" <<<x
    OFFLOADFS_CONFIG=$pol m_refused "$desc: the daemon exits 2, nothing mounted" "$M" "$@" "$S" "$M"
    t_eq "$desc: the same message as agentlink" "$(core "$T_TMP/err")" "$(core "$T_TMP/alerr")"
    t_check "$desc: the message names the file" grep -qF "config '$pol'" "$T_TMP/err"
    t_check "$desc: and says nothing was mounted" grep -q '; nothing was mounted$' "$T_TMP/err"
}
printf '{"namespace": "cfgns", "bogus": 1}\n' >"$T_TMP/unknown.json"
check_refused "unknown field" "$T_TMP/unknown.json"
printf '{"namespace": "a/b"}\n' >"$T_TMP/badns.json"
check_refused "invalid namespace" "$T_TMP/badns.json"
printf '{"namespace": ' >"$T_TMP/trunc.json"
check_refused "malformed JSON" "$T_TMP/trunc.json"
check_refused "missing file" "$T_TMP/no-such.json"
check_refused "refused even with -o namespace=" "$T_TMP/unknown.json" -o namespace=optns
t_done
