# Sourced by .ci/run and the scripts it calls: the few commands that differ between Linux and
# macOS, so the same scripts run on both (see README, "Platforms").
#   timeout SECONDS CMD…   GNU coreutils' timeout; on macOS gtimeout (Homebrew coreutils) or a
#                          perl alarm (the process is killed with SIGALRM when time runs out).
#   docc …                 the toolchain's docc; on macOS through xcrun when not on PATH.
#   cpu_count              nproc, or sysctl hw.ncpu.
#   linux_only WHAT        returns 1 and says why on anything but Linux (the caller skips WHAT).
if ! command -v timeout >/dev/null 2>&1; then
    if command -v gtimeout >/dev/null 2>&1; then
        timeout() { gtimeout "$@"; }
    else
        timeout() {
            local seconds=$1
            shift
            perl -e 'alarm shift; exec @ARGV or die "exec: $!"' "$seconds" "$@"
        }
    fi
fi
if ! command -v docc >/dev/null 2>&1 && command -v xcrun >/dev/null 2>&1; then
    docc() { xcrun docc "$@"; }
fi
cpu_count() {
    if command -v nproc >/dev/null 2>&1; then nproc; else sysctl -n hw.ncpu; fi
}
linux_only() {
    if [ "$(uname -s)" != Linux ]; then
        echo "skipped on $(uname -s): $1 is Linux-only (${2:-see README, Platforms})"
        return 1
    fi
    return 0
}
