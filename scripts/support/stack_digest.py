"""Groups a gdb `thread apply all bt` dump (standard input) by stack and prints one line per
distinct stack: how many threads, what they wait in (a lock, a semaphore, a dispatch_sync, a
write, a poll), their names, then the frames from the top with the C library's and libdispatch's
plumbing left out and arguments dropped. The largest groups come last, and a summary line ends it:
a CI log excerpt keeps the end. Used by stall-watchdog.sh."""

import re
import sys

GROUPS_SHOWN = 12
FRAMES_SHOWN = 8
LINE_WIDTH = 320

frame_line = re.compile(r"^#\d+\s+(?:0x[0-9a-f]+ in )?(?P<rest>.*)$")

# Frames that say only how a thread waits (kept as its "waits in" word), or how it started.
PLUMBING = re.compile(
    r"^(?:__|_dispatch_(?:sema4|semaphore|thread_event|wait|sync_f_slow|sync_wait|lane|root_queue_drain|worker_thread"
    r"|continuation|client_callout|queue_invoke|async_redirect|lane_serial|event_loop)|futex|lll_|do_futex|___?pthread"
    r"|pthread_|start_thread|clone|\?\?|swift::runJob|\(anonymous namespace\)|swift_job_run|thunk|reabstraction thunk"
    r"|partial apply|sem_|epoll_wait|poll|select|ppoll|read|write|nanosleep|clock_nanosleep)"
)

WAITS = [
    ("dispatch_sync", re.compile(r"_dispatch_sync|dispatch_sync")),
    ("lock", re.compile(r"lll_lock|pthread_mutex_lock|NSLock|os_unfair")),
    ("semaphore", re.compile(r"sem_wait|_dispatch_sema4_wait|_dispatch_semaphore_wait|sema4_timedwait")),
    ("condition", re.compile(r"pthread_cond")),
    ("write", re.compile(r"^(?:__GI___libc_)?write\b|__libc_write\b|^_IO_")),
    ("read", re.compile(r"^(?:__GI___libc_)?read\b|__libc_read\b")),
    ("poll", re.compile(r"epoll_wait|^(?:__GI___)?poll\b|^__ppoll|select\b")),
    ("child", re.compile(r"wait4|waitpid")),
    ("sleep", re.compile(r"nanosleep")),
]


def short(frame: str) -> str:
    for marker in (" at /", " from ", " at ./", " at ../"):
        cut = frame.find(marker)
        if cut > 0:
            frame = frame[:cut]
    frame = re.sub(r"\s\((?:[^()]*=[^()]*|)\)$", "", frame.strip())
    frame = re.sub(r"^(?:specialized |merged |closure #\d+ in )+", "", frame)
    return re.sub(r"\s+", " ", frame)[:120]


def summarize(frames: list) -> tuple:
    waits = "running"
    for word, pattern in WAITS:
        if any(pattern.search(frame) for frame in frames[:10]):
            waits = word
            break
    telling = [frame for frame in frames if not PLUMBING.match(frame)]
    return waits, tuple(telling[:FRAMES_SHOWN])


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
    ordered = sorted(groups.items(), key=lambda item: len(item[1]))
    if len(ordered) > GROUPS_SHOWN:
        print(f"... {len(ordered) - GROUPS_SHOWN} smaller groups in the whole dump")
    for (waits, stack), names in ordered[-GROUPS_SHOWN:]:
        labels = ",".join(sorted(set(names)))[:40]
        text = " < ".join(stack) or "(only system frames)"
        print(f"{len(names)}x {waits} [{labels}] {text}"[:LINE_WIDTH])
    summary = ", ".join(f"{count} {word}" for word, count in sorted(waits_count.items(), key=lambda i: -i[1]))
    print(f"stacks: {len(threads)} threads, {len(groups)} distinct; waiting in: {summary}")


main()
