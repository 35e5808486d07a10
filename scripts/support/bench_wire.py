"""Where one request's CPU goes on the wire, from `perf record -g` of WireLoop: see scripts/bench-wire.

Input: for each client (raw, transport, courier) the `perf script -F ip,sym` output of its run and
WireLoop's own line (requests, CPU per request by getrusage). A sample is CPU time of one thread
(perf's cpu-clock, at HZ samples a second), so samples / HZ / requests is CPU seconds per request.

For Courier's clients the samples whose stack holds a Courier frame are grouped by the innermost
(leaf-most) Courier frame and the function it called: that splits what Courier's own code costs
from the calls into FoundationNetworking that the raw client makes too (creating and resuming the
task). Samples without a Courier frame are FoundationNetworking, libcurl, Dispatch and the kernel
doing the transfer, in both clients.
"""

import collections
import re
import subprocess
import sys

COURIER = ("$s7Courier", "$s22CourierAsyncHTTPClient")
# Calls Courier's transports make that the raw clients make as well, shown apart from Courier's own
# work: on URLSession, creating and resuming the task (`resume()` waits on the session's work queue);
# on AsyncHTTPClient, anything in AsyncHTTPClient or SwiftNIO (by the callee's mangled module name).
SHARED_WITH_RAW = ("URLSession.dataTask(with:)", "DispatchQueue.sync(execute:)", "URLSessionTask.resume()")
SHARED_MODULES = ("$s15AsyncHTTPClient", "$s7NIOCore", "$s8NIOPosix", "$s8NIOHTTP1", "$s8NIOHTTP2", "$s6NIOSSL")


def stacks(path):
    """The sampled stacks, leaf first."""
    result, current = [], []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                if current:
                    result.append(current)
                    current = []
                continue
            parts = line.split(None, 1)
            current.append(parts[1] if len(parts) > 1 else "?")
    if current:
        result.append(current)
    return result


def demangled(names):
    names = sorted(names)
    if not names:
        return {}
    output = subprocess.run(
        ["swift", "demangle", "--simplified"], input="\n".join(names), capture_output=True, text=True, check=True
    ).stdout.splitlines()
    return dict(zip(names, output))


def main():
    hz = float(sys.argv[1])
    runs = []  # (client, requests, getrusage µs, stacks)
    for argument in sys.argv[2:]:
        client, perf_script, line_file = argument.split("=", 1)[0], *argument.split("=", 1)[1].split(",")
        line = open(line_file, encoding="utf-8").read()
        match = re.search(r"(\d+) requests, .*CPU ([\d.]+) µs/req", line)
        if not match:
            sys.exit(f"bench_wire: no WireLoop result in {line_file}: {line!r}")
        runs.append((client, int(match.group(1)), float(match.group(2)), stacks(perf_script)))

    print("| client | CPU µs/req (getrusage) | CPU µs/req (perf samples) | of which in Courier's frames |")
    print("|---|---:|---:|---:|")
    for client, requests, rusage, sampled in runs:
        per = 1e6 / hz / requests
        courier = sum(1 for stack in sampled if any(frame.startswith(COURIER) for frame in stack))
        print(f"| {client} | {rusage:.1f} | {len(sampled) * per:.1f} | {courier * per:.1f} |")

    for client, requests, _, sampled in runs:
        if client.startswith("raw"):
            continue
        per = 1e6 / hz / requests
        groups = collections.Counter()
        for stack in sampled:
            frames = [index for index, frame in enumerate(stack) if frame.startswith(COURIER)]
            if not frames:
                continue
            inner = min(frames)
            groups[(stack[inner], stack[inner - 1] if inner > 0 else "(itself)")] += 1
        names = demangled({name for pair in groups for name in pair})
        own = shared = 0
        rows = []
        for (frame, callee), count in groups.most_common():
            callee_name = names.get(callee, callee)
            is_shared = any(callee_name.startswith(prefix) for prefix in SHARED_WITH_RAW) or callee.startswith(
                SHARED_MODULES
            )
            if is_shared:
                shared += count
            else:
                own += count
            rows.append((count, names.get(frame, frame), callee_name, is_shared))
        print()
        print(f"#### {client}: Courier's frames, by innermost Courier function and what it called")
        print()
        print(f"Courier's own work {own * per:.1f} µs/req; calls the raw client makes too {shared * per:.1f} µs/req.")
        print()
        print("| µs/req | Courier function | calls | raw makes it too |")
        print("|---:|---|---|---|")
        for count, frame, callee, is_shared in rows[:15]:
            if count * per < 0.1:
                break
            print(f"| {count * per:.2f} | `{frame[:90]}` | `{callee[:70]}` | {'yes' if is_shared else ''} |")


if __name__ == "__main__":
    main()
