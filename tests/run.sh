#!/bin/bash
# Runs every test: cmocka unit binaries, shell tests (real CLI, real FUSE
# mounts), the Python binding's unittest suite. Prints each suite's output
# and closes with one "N passed, N failed" line; exits non-zero on failure.
#   tests/run.sh            everything
#   tests/run.sh unit       cmocka binaries only
#   tests/run.sh FILTER     suites whose path contains FILTER
#   tests/run.sh check-faults  only the slow fault and load checks,
#                           tests/faults/check_*.sh (make check-faults)
set -u
cd "$(dirname "$0")/.."
filter=${1:-}
checks=
if [ "$filter" = check-faults ]; then checks=1; filter=tests/faults/check_; fi
# OFFLOADFS_BUILD picks another build dir (make test-asan); OFFLOADFS_VALGRIND=1
# runs the binaries under memcheck (make test-valgrind).
export OFFLOADFS_BUILD=${OFFLOADFS_BUILD:-build}
case $OFFLOADFS_BUILD in /*) ;; *) OFFLOADFS_BUILD=$PWD/$OFFLOADFS_BUILD ;; esac
export AGENTLINK_LIB=${AGENTLINK_LIB:-$OFFLOADFS_BUILD/libagentlink.so}
# A forked child that does not exec (the read tool's pattern search) leaves
# with _exit() holding its parent's memory: --child-silent-after-fork keeps
# its leak report out (ASan still checks it: a child that dies of an error
# ends its search early, which the tests' exact answers catch).
if [ -n "${OFFLOADFS_VALGRIND:-}" ]; then
    export OFFLOADFS_WRAP="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --track-fds=no --child-silent-after-fork=yes"
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}
sanitized=
if ldd "$OFFLOADFS_BUILD/offloadfs" 2>/dev/null | grep -q libasan; then sanitized=1; fi
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
passed=0 failed=0 skipped=0 bad_suites=()
logdir=$(mktemp -d /tmp/offloadfs-tests.XXXXXX)

count() { # count LOGFILE KIND SUITE RC
    local log=$1 kind=$2 suite=$3 rc=$4 p=0 f=0 s=0
    case $kind in
    cmocka)
        p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
        f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
        s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -1) ;;
    sh)
        p=$(grep -c '^ok ' "$log"); f=$(grep -c '^not ok ' "$log")
        s=$(grep -c '^skip ' "$log") ;;
    py)
        local ran; ran=$(sed -n 's/^Ran \([0-9]*\) test.*/\1/p' "$log" | tail -1)
        f=$(sed -n 's/^FAILED (\(.*\))/\1/p' "$log" | tr ',' '\n' | grep -v skipped | awk -F= '{s += $2} END {print s + 0}')
        s=$(sed -n 's/.*skipped=\([0-9]*\).*/\1/p' "$log" | tail -1)
        p=$(( ${ran:-0} - ${f:-0} - ${s:-0} )) ;;
    esac
    p=${p:-0} f=${f:-0} s=${s:-0}
    # A suite that crashed or exited non-zero without reporting a failure
    # still counts as one failure.
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    if [ "$rc" -eq 0 ] && [ "$p" -eq 0 ] && [ "$s" -eq 0 ]; then f=$((f + 1)); echo "no test ran in $suite" >>"$log"; fi
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
    [ "$f" -ne 0 ] && bad_suites+=("$suite")
    return 0
}

# Suites run side by side, OFFLOADFS_TEST_JOBS at a time (default: the
# cores plus one, since most suites spend their time waiting on a mount, a
# server or a child). Each writes its own log; a suite's output is printed
# whole when it ends, so the order of the suites in the output is the order
# they ended in. Every suite uses its own scratch directory, mountpoints,
# ports and user names; a suite that changes something machine-wide (make,
# an install, the default mountpoint) says "# run.sh: alone" and runs with no
# other suite beside it. Those run last, one after another: each would
# otherwise first wait for every suite running to end, with cores idle.
jobs_max=${OFFLOADFS_TEST_JOBS:-$(( $(nproc 2>/dev/null || echo 1) + 1 ))}
alone_later=() alone_now=
declare -A job_suite=() job_kind=() job_log=() job_start=()

reap() { # reap : wait for one running suite to end and report it
    local pid rc
    wait -n -p pid; rc=$?
    [ -n "${pid:-}" ] || return 0
    echo "=== ${job_suite[$pid]}"
    cat "${job_log[$pid]}"
    echo "--- ${job_suite[$pid]}: $((SECONDS - job_start[$pid])) s"
    count "${job_log[$pid]}" "${job_kind[$pid]}" "${job_suite[$pid]}" "$rc"
    unset "job_suite[$pid]" "job_kind[$pid]" "job_log[$pid]" "job_start[$pid]"
}
drain() { while [ ${#job_suite[@]} -gt 0 ]; do reap; done; } # drain : wait for every running suite

run_suite() { # run_suite KIND PATH CMD...
    local kind=$1 suite=$2; shift 2
    case $suite in *"$filter"*) ;; *) [ "$filter" = unit ] || return 0 ;; esac
    case $suite in */check_*) [ -n "$checks" ] || return 0 ;; esac
    [ "$filter" = unit ] && [ "$kind" != cmocka ] && return 0
    local log="$logdir/$(echo "$suite" | tr / _).log" alone=
    [ "$kind" = sh ] && grep -q '^# run.sh: alone' "$suite" && alone=1
    if [ -n "$alone" ] && [ -z "$alone_now" ]; then alone_later+=("$suite"); return 0; fi
    [ -n "$alone" ] && drain
    while [ ${#job_suite[@]} -ge "$jobs_max" ]; do reap; done
    timeout 1200 "$@" >"$log" 2>&1 </dev/null &
    job_suite[$!]=$suite job_kind[$!]=$kind job_log[$!]=$log job_start[$!]=$SECONDS
    [ -n "$alone" ] && drain
    return 0
}

# The remote suites (tests/remote, tests/tier) run against one real S3 server for the
# whole run: a one-node radosgw (scripts/s3-server.sh) in a scratch dir,
# started only when one of them is selected, stopped and removed on exit.
s3_wanted=
for t in "$OFFLOADFS_BUILD"/tests/remote/test_* tests/remote/test_*.sh tests/remote/test_*.py \
    "$OFFLOADFS_BUILD"/tests/tier/test_* tests/tier/test_*.sh; do
    [ -e "$t" ] || continue
    case $t in */test_mem_*) continue ;; esac # over the in-memory remote: no server
    case ${t#"$PWD"/} in *"$filter"*) s3_wanted=1 ;; esac
    [ "$filter" = unit ] && [ "${t%.sh}" = "$t" ] && s3_wanted=1
done
if [ -n "$s3_wanted" ]; then
    s3dir=$(mktemp -d /tmp/offloadfs-s3.XXXXXX)
    rmdir "$s3dir"
    trap 'scripts/s3-server.sh destroy "$s3dir" >/dev/null 2>&1' EXIT
    echo "=== scripts/s3-server.sh up (radosgw for tests/remote)"
    start=$SECONDS
    if s3env=$(scripts/s3-server.sh up "$s3dir" 2>"$logdir/s3-server.log"); then
        eval "$s3env"
        echo "--- radosgw at $AWS_ENDPOINT_URL: $((SECONDS - start)) s"
        unset AWS_PROFILE AWS_DEFAULT_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL_S3
    else
        cat "$logdir/s3-server.log"
        failed=$((failed + 1)) bad_suites+=("scripts/s3-server.sh up")
    fi
fi

for t in "$OFFLOADFS_BUILD"/tests/*/test_*; do
    [ -x "$t" ] || continue
    run_suite cmocka "${t#"$PWD"/}" ${OFFLOADFS_WRAP:-} "$t"
done
for t in tests/*/test_*.sh tests/faults/check_*.sh; do
    [ -f "$t" ] || continue
    # Under make test-asan the daemon's memory is mostly ASan's (shadow,
    # quarantine), so test_scale.sh's memory bounds cannot hold; it runs in
    # make test and under valgrind (doc/faults.md).
    if [ "$t" = tests/fs/test_scale.sh ] && [ -n "$sanitized" ] &&
        case $t in *"$filter"*) true ;; *) false ;; esac; then
        echo "=== $t: not under sanitizers (memory bounds); make test runs it"
        skipped=$((skipped + 1))
        continue
    fi
    # A check of the sources and the build's symbols ("# run.sh: static")
    # runs no code of ours: the plain build's run is the whole answer.
    if [ "$OFFLOADFS_BUILD" != "$PWD/build" ] || [ -n "${OFFLOADFS_VALGRIND:-}" ]; then
        if grep -q '^# run.sh: static' "$t" && case $t in *"$filter"*) true ;; *) false ;; esac; then
            echo "=== $t: a static check, run by make test only"
            skipped=$((skipped + 1))
            continue
        fi
    fi
    # The npm-client suites (a "# run.sh: npm clients" line) drive the real
    # SDK, servers and deepagents through our programs; the C they reach runs
    # under sanitizers and memcheck in the suites that test it directly, so
    # make test-asan and test-valgrind do not repeat them.
    if { [ -n "$sanitized" ] || [ -n "${OFFLOADFS_VALGRIND:-}" ]; } &&
        grep -q '^# run.sh: npm clients' "$t" &&
        case $t in *"$filter"*) true ;; *) false ;; esac; then
        echo "=== $t: npm-client suite, run by make test, not under sanitizers or valgrind"
        skipped=$((skipped + 1))
        continue
    fi
    run_suite sh "$t" bash "$t"
done
# make test-tsan builds the libraries under ThreadSanitizer: an interpreter
# that is not instrumented cannot load them (it crashes at start), so the
# Python suites run in make test and make test-asan only.
tsan=
if ldd "$AGENTLINK_LIB" 2>/dev/null | grep -q libtsan; then tsan=1; fi
for t in tests/*/test_*.py; do
    [ -f "$t" ] || continue
    if [ -n "${OFFLOADFS_VALGRIND:-}" ]; then continue; fi # the library runs under memcheck through the CLI
    if [ -n "$tsan" ]; then continue; fi
    if [ "$OFFLOADFS_BUILD" != "$PWD/build" ]; then # an ASan library inside a plain python
        run_suite py "$t" env LD_PRELOAD="$(${CC:-gcc} -print-file-name=libasan.so)" \
            ASAN_OPTIONS=detect_leaks=0 python3 -m unittest -v "$t"
    else
        run_suite py "$t" python3 -m unittest -v "$t"
    fi
done
alone_now=1
for t in "${alone_later[@]}"; do run_suite sh "$t" bash "$t"; done
drain

echo
[ ${#bad_suites[@]} -gt 0 ] && printf 'failed suite: %s\n' "${bad_suites[@]}"
echo "logs in $logdir"
if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
