"""Groups a gdb `thread apply all bt` dump (standard input) by stack and prints one line per
distinct stack, most threads first: how many threads, their names, then the frames from the top,
shortened (arguments dropped, file paths cut). Used by stall-watchdog.sh; the digest must fit in
the few dozen lines a CI log excerpt keeps."""

import re
import sys
from collections import OrderedDict

FRAMES_SHOWN = 14
LINE_WIDTH = 900
GROUPS_SHOWN = 30

thread_header = re.compile(r'^Thread \d+ \(.*?"(?P<name>[^"]*)"\)?:?\s*$|^Thread \d+ ')
frame_line = re.compile(r"^#(?P<n>\d+)\s+(?:0x[0-9a-f]+ in )?(?P<rest>.*)$")


def short(frame: str) -> str:
    for marker in (" at /", " from ", " at ./", " at ../"):
        cut = frame.find(marker)
        if cut > 0:
            frame = frame[:cut]
    # Arguments: the last parenthesised group when it holds `name=value` pairs or nothing.
    frame = re.sub(r"\s\((?:[^()]*=[^()]*|)\)$", "", frame.strip())
    frame = re.sub(r"\s+", " ", frame)
    return frame[:160]


def main() -> None:
    groups: "OrderedDict[tuple, list]" = OrderedDict()
    name = None
    frames: list = []

    def flush() -> None:
        if name is not None:
            groups.setdefault(tuple(frames[:FRAMES_SHOWN]), []).append(name)

    for line in sys.stdin:
        line = line.rstrip("\n")
        if line.startswith("Thread "):
            flush()
            match = re.search(r'"([^"]*)"', line)
            name = match.group(1) if match else "?"
            frames = []
            continue
        match = frame_line.match(line)
        if match and name is not None:
            frames.append(short(match.group("rest")))
    flush()
    total = sum(len(names) for names in groups.values())
    print(f"stacks: {total} threads, {len(groups)} distinct stacks (top frame first)")
    ordered = sorted(groups.items(), key=lambda item: -len(item[1]))
    for stack, names in ordered[:GROUPS_SHOWN]:
        labels = ",".join(sorted(set(names)))[:60]
        text = " < ".join(stack) or "(no frames)"
        print(f"{len(names)}x [{labels}] {text}"[:LINE_WIDTH])
    if len(ordered) > GROUPS_SHOWN:
        print(f"... {len(ordered) - GROUPS_SHOWN} more stacks in the whole dump")


main()
