# shellcheck shell=bash
# Sourced by scripts/test. A test process that runs longer than COURIER_TEST_STALL_SECONDS (when
# set) is taken for stalled. Before it is killed, this prints what it was doing: the stacks of all
# its threads, grouped (threads with the same stack counted once), the tests it had started and not
# finished (from Swift Testing's event stream), and the machine's load, free disk and memory. The
# run then fails at once with a picture of the stall, instead of running into its step's time limit
# with none.
#
# Why: a run that stalled in CI printed nothing for 15 minutes until `timeout` ended it, and no run
# here could reproduce it. The stacks tell a deadlock (which lock, which queue) from a slow machine.
#
# The clock starts when the test process does (not when scripts/test does: the build comes first).
# Only a process started after the watchdog, with an argument that is a `…PackageTests.xctest` path
# in this checkout, is watched. gdb (Debian's gdb package) reads the stacks; without it, or where
# the system forbids attaching, the report says so. The whole dump is kept beside the event stream
# (.build/stall-stacks.txt); the digest goes to standard error, the most telling part last (a CI log
# excerpt keeps the end).

stall_watchdog_pid=""
stall_watchdog_fired=""

# stall_watchdog_start SECONDS [DUMP [EVENTS]]: watches the test processes started from now on.
# EVENTS is Swift Testing's event stream (JSON lines), if the run writes one.
stall_watchdog_start() {
    local limit=$1
    local root=$PWD
    local dump=${2:-$root/.build/stall-stacks.txt}
    local events=${3:-}
    local parent=$$
    local started=$SECONDS
    # Made when the watchdog fires: scripts/test then waits for its report instead of ending it.
    stall_watchdog_fired=$dump.fired
    rm -f "$stall_watchdog_fired"
    (
        set +e
        # Bounded: a run never lasts longer than a day; ends with the script that started it.
        for _ in $(seq 1 17280); do
            sleep 5
            kill -0 "$parent" 2>/dev/null || exit 0
            for pid in $(pgrep -f 'PackageTests\.xctest'); do
                stall_watchdog_is_ours "$pid" "$root" || continue
                local age
                age=$(ps -o etimes= -p "$pid" 2>/dev/null | tr -d ' ')
                [[ "$age" =~ ^[0-9]+$ ]] || continue
                # Started after the watchdog (an older process is not this run's).
                ((age <= SECONDS - started + 1)) || continue
                ((age > limit)) || continue
                : >"$stall_watchdog_fired"
                stall_watchdog_report "$pid" "$limit" "$dump" "$events"
                exit 0
            done
        done
    ) &
    stall_watchdog_pid=$!
}

# Whether PID was started with an argument that is a `…PackageTests.xctest` path under ROOT.
stall_watchdog_is_ours() {
    local pid=$1 root=$2 argument
    [ -r "/proc/$pid/cmdline" ] || return 1
    while IFS= read -r -d '' argument; do
        if [[ "$argument" == "$root"/* && "$argument" == *PackageTests.xctest ]]; then return 0; fi
    done <"/proc/$pid/cmdline"
    return 1
}

stall_watchdog_stop() {
    if [ -n "$stall_watchdog_pid" ]; then
        # A report under way is waited for (gdb has 120 s); otherwise the watchdog is ended.
        if [ ! -e "$stall_watchdog_fired" ]; then kill "$stall_watchdog_pid" 2>/dev/null || true; fi
        wait "$stall_watchdog_pid" 2>/dev/null || true
        stall_watchdog_pid=""
    fi
}

# stall_watchdog_report PID LIMIT DUMP EVENTS
stall_watchdog_report() {
    local pid=$1 limit=$2 dump=$3 events=$4
    local support
    support=$(dirname "${BASH_SOURCE[0]}")
    echo "scripts/test: STALL: the test process $pid has run for more than $limit s: reading its stacks" >&2
    local states
    # Each thread's state (R running, S sleeping, D waiting for the disk), before gdb stops them.
    states=$(ps -L -o stat= -p "$pid" 2>/dev/null | cut -c1 | sort | uniq -c | awk '{ printf "%s %s, ", $1, $2 }')
    if command -v gdb >/dev/null 2>&1; then
        timeout -k 5 120 gdb -p "$pid" -batch -nx -ex "set pagination off" \
            -ex "thread apply all bt 40" >"$dump" 2>&1
    else
        echo "gdb is not installed: no stacks (apt-get install gdb)" >"$dump"
    fi
    kill -KILL "$pid" 2>/dev/null
    # After the kill, so the digest is not interleaved with the tests' own output.
    sleep 2
    local demangle=(cat)
    if command -v swift-demangle >/dev/null 2>&1; then demangle=(swift-demangle --simplified); fi
    {
        echo "scripts/test: STALL: the stacks of the test process $pid, grouped (whole dump: $dump):"
        "${demangle[@]}" <"$dump" | python3 "$support/stack_digest.py"
        if [ -n "$events" ]; then python3 "$support/running_tests.py" "$events"; fi
        echo "scripts/test: STALL: threads by state: ${states:-unknown}load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null);" \
            "disk free: $(df -Pk "${TMPDIR:-/tmp}" . 2>/dev/null | awk 'NR > 1 { printf "%s %d MiB; ", $6, $4 / 1024 }')" \
            "memory available: $(awk '/MemAvailable/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo 2>/dev/null)"
        echo "scripts/test: STALL: the test process $pid was killed after $limit s (COURIER_TEST_STALL_SECONDS)"
    } >&2
}

# stall_watchdog_self_test: the watchdog, on a stand-in test process that never ends (a shell loop
# named like a test bundle): it must be killed within a bounded time and reported. Its stacks are
# checked where gdb can read them (a system that forbids attaching is reported, not failed). Run by
# CI before the test steps rely on it.
stall_watchdog_self_test() {
    mkdir -p .build
    local dir
    dir=$(mktemp -d "$PWD/.build/stall-self-test.XXXXXX")
    printf '%s\n' 'for _ in $(seq 1 600); do sleep 0.1; done' >"$dir/StandInPackageTests.xctest"
    stall_watchdog_start 1 "$dir/stacks.txt" 2>"$dir/report"
    bash "$dir/StandInPackageTests.xctest" &
    local stand_in=$!
    local status=0
    wait "$stand_in" || status=$?
    # The report is finished after the kill: wait for the watchdog, bounded by gdb's own limit.
    for _ in $(seq 1 300); do
        grep -q "was killed after" "$dir/report" 2>/dev/null && break
        sleep 0.5
    done
    stall_watchdog_stop
    local failures=""
    [ "$status" = 137 ] || failures+=" the stand-in was not killed (status $status);"
    grep -q "STALL: the stacks of the test process $stand_in" "$dir/report" || failures+=" no stacks report;"
    grep -q "was killed after 1 s" "$dir/report" || failures+=" no kill line;"
    cat "$dir/report"
    if command -v gdb >/dev/null 2>&1 && ! grep -Eq "^stacks: [1-9][0-9]* threads" "$dir/report"; then
        echo "stall watchdog self-test: gdb read no stacks here (attaching forbidden?); a stall will be reported without them:"
        head -n 5 "$dir/stacks.txt"
    fi
    rm -rf "$dir"
    if [ -n "$failures" ]; then
        echo "stall watchdog self-test failed:$failures"
        return 1
    fi
    echo "stall watchdog self-test passed"
}
