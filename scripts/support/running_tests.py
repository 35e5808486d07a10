"""Reads Swift Testing's event stream (JSON lines, `--event-stream-output-path`) and prints the
tests and test cases that started and did not end, oldest first, with how long they had been
running when this ran (just after the kill): what a stalled run was doing. Used by
stall-watchdog.sh."""

import json
import sys
import time

SHOWN = 16


def main(path: str) -> None:
    running: dict = {}
    events = 0
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            for line in stream:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # a line cut by the kill
                if not isinstance(record, dict) or record.get("kind") != "event":
                    continue
                payload = record.get("payload")
                if not isinstance(payload, dict):
                    continue
                events += 1
                kind = payload.get("kind")
                case = payload.get("_testCase")
                key = (payload.get("testID"), case.get("id") if isinstance(case, dict) else None)
                if kind in ("testStarted", "testCaseStarted"):
                    instant = payload.get("instant")
                    since = instant.get("since1970") if isinstance(instant, dict) else None
                    messages = payload.get("messages")
                    text = " ".join(
                        str(message.get("text", "")) for message in messages if isinstance(message, dict)
                    ) if isinstance(messages, list) else ""
                    running[key] = (since, text)
                elif kind in ("testEnded", "testCaseEnded"):
                    running.pop(key, None)
    except OSError as error:
        print(f"tests running: unknown ({error})")
        return
    # Suites and parameterized tests stay open while their cases run: list the innermost ones.
    ids = [key[0] for key in running if key[0]]
    leaves = [
        (key, value)
        for key, value in running.items()
        if key[1] is not None
        or not any(other != key[0] and other.startswith((f"{key[0]}/", f"{key[0]}.")) for other in ids)
        and not any(other_key[0] == key[0] and other_key[1] is not None for other_key in running)
    ]
    leaves.sort(key=lambda item: item[1][0] or 0)
    now = time.time()
    print(f"tests running: {len(leaves)} (started, not ended; oldest first; {events} events read)")
    for (test_id, _), (since, text) in leaves[:SHOWN]:
        age = f"{now - since:.0f} s" if isinstance(since, (int, float)) else "?"
        name = str(test_id or "?").split("/")[0]
        print(f"  {age}: {name}: {text[:160]}")
    if len(leaves) > SHOWN:
        print(f"  ... {len(leaves) - SHOWN} more")


main(sys.argv[1])
