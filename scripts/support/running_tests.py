"""Reads Swift Testing's event stream (JSON lines, `--event-stream-output-path`) and prints the
tests and test cases that started and did not end, oldest first, with how long before the last
event they started: what a stalled run was doing. Used by stall-watchdog.sh."""

import json
import sys

SHOWN = 16


def main(path: str) -> None:
    running: dict = {}
    last = None
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            for line in stream:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # a line cut by the kill
                if record.get("kind") != "event":
                    continue
                payload = record.get("payload", {})
                kind = payload.get("kind")
                instant = payload.get("instant", {}).get("absolute")
                last = instant if instant is not None else last
                key = (payload.get("testID"), (payload.get("_testCase") or {}).get("id"))
                if kind in ("testStarted", "testCaseStarted"):
                    text = " ".join(message.get("text", "") for message in payload.get("messages", []))
                    running[key] = (instant, text)
                elif kind in ("testEnded", "testCaseEnded"):
                    running.pop(key, None)
    except OSError as error:
        print(f"tests running: unknown ({error})")
        return
    # Suites and parameterized tests stay open while their cases run: list the innermost ones.
    cases = {key: value for key, value in running.items() if key[1] is not None}
    tests = {key: value for key, value in running.items() if key[1] is None}
    open_tests = {key[0] for key in cases}
    leaves = list(cases.items()) + [
        (key, value)
        for key, value in tests.items()
        if key[0] not in open_tests
        and not any(other and other != key[0] and other.startswith((f"{key[0]}/", f"{key[0]}.")) for other, _ in running)
    ]
    leaves.sort(key=lambda item: item[1][0] or 0)
    print(f"tests running: {len(leaves)} (started, not ended; oldest first)")
    for _, (instant, text) in leaves[:SHOWN]:
        age = f"{last - instant:.0f} s before the last event" if last is not None and instant is not None else ""
        print(f"  {text[:200]} ({age})")
    if len(leaves) > SHOWN:
        print(f"  ... {len(leaves) - SHOWN} more")


main(sys.argv[1])
