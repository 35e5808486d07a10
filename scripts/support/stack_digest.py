"""Groups a gdb `thread apply all bt` dump (standard input) by stack and prints one line per
distinct stack: how many threads, what they wait in (from the innermost frame out: a lock, a
semaphore, a dispatch_sync, a write…; `idle` for a Dispatch worker with no work), their names,
then the frames from the top with the C library's and libdispatch's plumbing left out and
arguments dropped. Groups with nothing but system frames are only counted. The largest groups
come last and a summary line ends it: a CI log excerpt keeps the end. Used by stall-watchdog.sh."""

import re
import sys

GROUPS_SHOWN = 12
FRAMES_SHOWN = 8
LINE_WIDTH = 320

frame_line = re.compile(r"^#\d+\s+(?:0x[0-9a-f]+ in )?(?P<rest>.*)$")

# Frames that say only how a thread waits or how it started (left out of the stack shown).
PLUMBING = re.compile(
    r"^(?:__|_dispatch_|_start\b|futex|lll_|do_futex|___?pthread|pthread_|start_thread\b|clone3?\b|\?\?"
    r"|syscall\b|swift::runJob|\(anonymous namespace\)::ProcessOutOfLineJob|swift_job_run\b|thunk|reabstraction thunk"
    r"|partial apply|sem_|epoll_wait\b|poll\b|select\b|ppoll\b|read\b|write\b|nanosleep\b|clock_nanosleep\b"
    r"|sigsuspend\b|<signal handler called>)"
)

# What a thread waits in, tried on each frame from the innermost out; the first match names it.
WAITS = [
    ("signal", re.compile(r"sigsuspend|sigwait")),
    ("dispatch_sync", re.compile(r"_dispatch_sync|DISPATCH_WAIT_FOR_QUEUE|DispatchQueue\.sync")),
    ("lock", re.compile(r"lll_lock|pthread_mutex_lock|NSLock|os_unfair|_lockSlow|futex_lock|swift_once|once_slow")),
    ("condition", re.compile(r"pthread_cond")),
    ("semaphore", re.compile(r"sem_wait|sem_timedwait|_dispatch_sema4_wait|_dispatch_semaphore_wait")),
    ("write", re.compile(r"^(?:__GI___libc_|__libc_)?write\b|^_IO_")),
    ("read", re.compile(r"^(?:__GI___libc_|__libc_)?read\b")),
    ("poll", re.compile(r"epoll_wait|^(?:__GI___)?poll\b|^__ppoll|\bselect\b")),
    ("child", re.compile(r"wait4|waitpid")),
    ("sleep", re.compile(r"nanosleep")),
]

# A Dispatch worker waiting for work (its semaphore, inside `_dispatch_worker_thread`).
IDLE = re.compile(r"_dispatch_sema4_timedwait|_dispatch_semaphore_wait_slow|sem_timedwait")


def short(frame: str) -> str:
    for marker in (" at /", " from ", " at ./", " at ../"):
        cut = frame.find(marker)
        if cut > 0:
            frame = frame[:cut]
    frame = re.sub(r"\s\((?:[^()]*=[^()]*|)\)$", "", frame.strip())
    frame = re.sub(r"^(?:specialized |merged |closure #\d+ in )+", "", frame)
    return re.sub(r"\s+", " ", frame)[:120]


def summarize(frames: list) -> tuple:
    telling = tuple(frame for frame in frames if not PLUMBING.match(frame))[:FRAMES_SHOWN]
    if not frames:
        return "unknown", telling
    waits = "running"
    for frame in frames[:12]:
        word = next((word for word, pattern in WAITS if pattern.search(frame)), None)
        if word:
            waits = word
            break
    if waits == "semaphore" and not telling and any(IDLE.search(frame) for frame in frames[:6]):
        waits = "idle"
    return waits, telling


def main() -> None:
    threads = []
    name, frames = None, []
    for line in sys.stdin:
        line = line.rstrip("\n")
        if line.startswith("Thread "):
            if name is not None:
                threads.append((name, frames))
            match = re.search(r'"([^"]*)"', line)
            name, frames = (match.group(1) if match else "?"), []
            continue
        match = frame_line.match(line)
        if match and name is not None:
            frames.append(short(match.group("rest")))
    if name is not None:
        threads.append((name, frames))
    if not threads:
        print("stacks: 0 threads (gdb could not read the process)")
        return
    groups: dict = {}
    waits_count: dict = {}
    for name, frames in threads:
        key = summarize(frames)
        groups.setdefault(key, []).append(name)
        waits_count[key[0]] = waits_count.get(key[0], 0) + 1
    shown = sorted(((key, names) for key, names in groups.items() if key[1]), key=lambda item: len(item[1]))
    system_only = sum(len(names) for key, names in groups.items() if not key[1])
    if len(shown) > GROUPS_SHOWN:
        print(f"... {len(shown) - GROUPS_SHOWN} smaller groups in the whole dump")
    for (waits, stack), names in shown[-GROUPS_SHOWN:]:
        labels = ",".join(sorted(set(names)))[:40]
        print(f"{len(names)}x {waits} [{labels}] {' < '.join(stack)}"[:LINE_WIDTH])
    summary = ", ".join(f"{count} {word}" for word, count in sorted(waits_count.items(), key=lambda i: -i[1]))
    print(
        f"stacks: {len(threads)} threads, {len(groups)} distinct ({system_only} with system frames only);"
        f" waiting in: {summary}"
    )


main()
