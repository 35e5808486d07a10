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
# Only a process started after the watchdog whose program (argv[0]) is a `…PackageTests.xctest`
# path in this checkout is watched. gdb (Debian's gdb package) reads the stacks; without it, or where
# the system forbids attaching, the report says so. The whole dump is kept beside the event stream
# (.build/stall-stacks.txt); the digest goes to standard error, the most telling part last (a CI log
# excerpt keeps the end).

stall_watchdog_pid=""
stall_watchdog_fired=""

# stall_watchdog_start SECONDS [DUMP [EVENTS]]: watches the test processes started from now on.
# EVENTS is Swift Testing's event stream (JSON lines), if the run writes one.
stall_watchdog_start() {
    local limit=$1
    # The physical path: SwiftPM names the bundle from getcwd(), not from a symlinked $PWD.
    local root
    root=$(pwd -P)
    local dump=${2:-$root/.build/stall-stacks.txt}
    local events=${3:-}
    local parent=$$
    if ! command -v pgrep >/dev/null 2>&1 || ! command -v ps >/dev/null 2>&1; then
        echo "scripts/test: the stall watchdog is off: it needs pgrep and ps (procps)" >&2
        return 0
    fi
    # Made when the watchdog fires: scripts/test then waits for its report instead of ending it.
    stall_watchdog_fired=$dump.fired
    rm -f "$stall_watchdog_fired"
    (
        set +e
        # This subshell's PID (read here: inside `$(…)`, BASHPID would be that subshell's).
        local me=$BASHPID
        # Bounded: a run never lasts longer than a day; ends with the script that started it.
        for _ in $(seq 1 17280); do
            sleep 5
            kill -0 "$parent" 2>/dev/null || exit 0
            # Ages from ps (monotonic): a process older than the watchdog is not this run's.
            local own age
            own=$(ps -o etimes= -p "$me" 2>/dev/null | tr -d ' ')
            [[ "$own" =~ ^[0-9]+$ ]] || continue
            for pid in $(pgrep -f 'PackageTests\.xctest'); do
                stall_watchdog_is_ours "$pid" "$root" || continue
                age=$(ps -o etimes= -p "$pid" 2>/dev/null | tr -d ' ')
                [[ "$age" =~ ^[0-9]+$ ]] || continue
                ((age <= own)) || continue
                ((age > limit)) || continue
                : >"$stall_watchdog_fired"
                stall_watchdog_report "$pid" "$limit" "$dump" "$events"
                exit 0
            done
        done
    ) &
    stall_watchdog_pid=$!
}

# Whether PID's program (argv[0]) is a `…PackageTests.xctest` path under ROOT: the test bundle
# itself, not a linker writing one (`-o …PackageTests.xctest`).
stall_watchdog_is_ours() {
    local pid=$1 root=$2 program=""
    [ -r "/proc/$pid/cmdline" ] || return 1
    IFS= read -r -d '' program <"/proc/$pid/cmdline"
    [[ "$program" == "$root"/* && "$program" == *PackageTests.xctest ]]
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
    # The test process runs in a process group of its own (SwiftPM's): if the step's `timeout` ends
    # this report, the test process is killed all the same.
    trap 'kill -KILL "$pid" 2>/dev/null; exit 143' TERM INT
    local states
    # Each thread's state (R running, S sleeping, D waiting for the disk), before gdb stops them.
    states=$(ps -L -o stat= -p "$pid" 2>/dev/null | cut -c1 | sort | uniq -c | awk '{ printf "%s %s, ", $1, $2 }')
    local gdb_status=0
    if command -v gdb >/dev/null 2>&1; then
        # --foreground: gdb stays in this script's process group, so a step's `timeout` reaches it.
        timeout --foreground -k 5 120 gdb -p "$pid" -batch -nx -iex "set debuginfod enabled off" \
            -ex "set pagination off" -ex "thread apply all bt 40" >"$dump" 2>&1 || gdb_status=$?
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
        if [ "$gdb_status" = 124 ] || [ "$gdb_status" = 137 ]; then echo "(gdb ran out of its 120 s: the dump is partial)"; fi
        "${demangle[@]}" <"$dump" | python3 "$support/stack_digest.py"
        if [ -n "$events" ]; then python3 "$support/running_tests.py" "$events"; fi
        echo "scripts/test: STALL: threads by state: ${states:-unknown}load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null);" \
            "disk free: $(df -Pk "${TMPDIR:-/tmp}" . 2>/dev/null | awk 'NR > 1 && !seen[$6]++ { printf "%s %d MiB; ", $6, $4 / 1024 }')" \
            "memory available: $(awk '/MemAvailable/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo 2>/dev/null)"
        echo "scripts/test: STALL: the test process $pid was killed after $limit s (COURIER_TEST_STALL_SECONDS)"
    } >&2
}

# stall_watchdog_self_test: the watchdog, on a stand-in test process that never ends (a shell loop
# whose argv[0] is a test bundle's path) and a one-line event stream: the stand-in must be killed
# within a bounded time and reported, with the test it was running. Its stacks are checked where
# gdb can read them (a system that forbids attaching is reported, not failed). Run by CI before
# the test steps rely on it.
stall_watchdog_self_test() {
    mkdir -p .build
    local dir
    dir=$(mktemp -d "$(pwd -P)/.build/stall-self-test.XXXXXX")
    printf '{"kind":"event","payload":{"instant":{"absolute":1,"since1970":%s},"kind":"testStarted","messages":[{"symbol":"default","text":"Test standIn() started."}],"testID":"SelfTest.standIn()"},"version":0}\n' \
        "$(date +%s)" >"$dir/events.jsonl"
    stall_watchdog_start 1 "$dir/stacks.txt" "$dir/events.jsonl" 2>"$dir/report"
    (exec -a "$dir/StandInPackageTests.xctest" bash -c 'for _ in $(seq 1 600); do sleep 0.1; done') &
    local stand_in=$!
    local status=0
    wait "$stand_in" 2>/dev/null || status=$?
    # The report is finished after the kill: wait for the watchdog, bounded by gdb's own limit.
    for _ in $(seq 1 300); do
        grep -q "was killed after" "$dir/report" 2>/dev/null && break
        sleep 0.5
    done
    stall_watchdog_stop
    local failures=""
    [ "$status" = 137 ] || failures+=" the stand-in was not killed (status $status);"
    grep -q "STALL: the stacks of the test process $stand_in" "$dir/report" || failures+=" no stacks report;"
    grep -q "^stacks: " "$dir/report" || failures+=" no stacks digest;"
    grep -q "SelfTest.standIn()" "$dir/report" || failures+=" the running test not named;"
    grep -q "Traceback" "$dir/report" && failures+=" a digest script failed;"
    grep -q "was killed after 1 s" "$dir/report" || failures+=" no kill line;"
    # Each line labelled, so that a search of a CI log for a real stall does not find the rehearsal.
    sed 's/^/[stall watchdog self-test, a rehearsal] /' "$dir/report"
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
