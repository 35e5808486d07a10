# shellcheck shell=bash
# Sourced by scripts/test. A test process that runs longer than COURIER_TEST_STALL_SECONDS (when
# set) is taken for stalled: the stacks of all its threads are printed, grouped (threads with the
# same stack counted once), then it is killed, so the run fails at once with a picture of the stall
# instead of running into its step's time limit with none.
#
# Why: a run that stalled in CI printed nothing for 15 minutes until `timeout` ended it, and no run
# here could reproduce it. The stacks are what tell a deadlock (which lock, which queue) from a
# slow machine.
#
# The clock starts when the test process does (not when scripts/test does: the build comes first).
# gdb (Debian's gdb package) reads the stacks; without it the watchdog says so and only kills. The
# whole dump is kept in .build/stall-stacks.txt; the grouped digest goes to standard error.

stall_watchdog_pid=""
stall_watchdog_fired=""

# stall_watchdog_start SECONDS: watches this run's test processes (started after this call).
stall_watchdog_start() {
    local limit=$1
    local root=$PWD
    # Made when the watchdog fires: scripts/test then waits for its report instead of ending it.
    stall_watchdog_fired=$root/.build/stall-watchdog.fired
    rm -f "$stall_watchdog_fired"
    (
        # Bounded: a run never lasts longer than a day.
        for _ in $(seq 1 17280); do
            sleep 5
            for pid in $(pgrep -f "$root/.*PackageTests\.xctest" || true); do
                local age
                age=$(ps -o etimes= -p "$pid" 2>/dev/null | tr -d ' ' || true)
                [[ "$age" =~ ^[0-9]+$ ]] || continue
                ((age > limit)) || continue
                : >"$stall_watchdog_fired"
                stall_watchdog_report "$pid" "$limit" "$root/.build/stall-stacks.txt"
                exit 0
            done
        done
    ) &
    stall_watchdog_pid=$!
}

stall_watchdog_stop() {
    if [ -n "$stall_watchdog_pid" ]; then
        # A report under way is waited for (gdb has 120 s); otherwise the watchdog is ended.
        if [ ! -e "$stall_watchdog_fired" ]; then kill "$stall_watchdog_pid" 2>/dev/null || true; fi
        wait "$stall_watchdog_pid" 2>/dev/null || true
        stall_watchdog_pid=""
    fi
}

# stall_watchdog_report PID LIMIT FILE
stall_watchdog_report() {
    local pid=$1 limit=$2 file=$3
    echo "scripts/test: STALL: the test process $pid has run for more than $limit s: reading its stacks" >&2
    if command -v gdb >/dev/null 2>&1; then
        timeout 120 gdb -p "$pid" -batch -nx -ex "set pagination off" -ex "thread apply all bt 40" >"$file" 2>&1 || true
    else
        echo "gdb is not installed: no stacks (apt-get install gdb)" >"$file"
    fi
    kill -KILL "$pid" 2>/dev/null || true
    # After the kill, so the digest is not interleaved with the tests' own output.
    sleep 2
    local demangle=(cat)
    if command -v swift-demangle >/dev/null 2>&1; then demangle=(swift-demangle --simplified); fi
    {
        echo "scripts/test: STALL: the stacks of the test process $pid, grouped (top frame first; whole dump: $file):"
        "${demangle[@]}" <"$file" | python3 "$(dirname "${BASH_SOURCE[0]}")/stack_digest.py" || true
        # What the machine was like: a full disk or an exhausted memory stalls a run as well.
        echo "scripts/test: STALL: load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null);" \
            "disk free: $(df -Pk "${TMPDIR:-/tmp}" . 2>/dev/null | awk 'NR > 1 { printf "%s %d MiB; ", $6, $4 / 1024 }')" \
            "memory available: $(awk '/MemAvailable/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo 2>/dev/null)"
        echo "scripts/test: STALL: the test process $pid was killed after $limit s (COURIER_TEST_STALL_SECONDS)"
    } >&2
}

# stall_watchdog_self_test: the watchdog, on a stand-in test process that never ends (a shell loop
# named like a test bundle): it must be killed within a bounded time and reported, with its stacks
# when gdb is here. Run by CI before the test steps rely on it.
stall_watchdog_self_test() {
    mkdir -p .build
    local dir
    dir=$(mktemp -d "$PWD/.build/stall-self-test.XXXXXX")
    printf '%s\n' 'for _ in $(seq 1 600); do sleep 0.1; done' >"$dir/StandInPackageTests.xctest"
    stall_watchdog_start 1 2>"$dir/report"
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
    if command -v gdb >/dev/null 2>&1; then
        grep -Eq "^stacks: [1-9][0-9]* threads" "$dir/report" || failures+=" no stacks read by gdb;"
    fi
    cat "$dir/report"
    rm -rf "$dir"
    if [ -n "$failures" ]; then
        echo "stall watchdog self-test failed:$failures"
        return 1
    fi
    echo "stall watchdog self-test passed"
}
