"""Per-request instruction counts from two callgrind runs (N and 2N requests): see scripts/bench-breakdown.

Every figure is (cost in the 2N run - cost in the N run) / N, so start-up and warm-up cancel out.
The pipeline's async functions run as one chain of continuations (a stubbed request never
suspends), which callgrind sees as a cycle: their inclusive costs are meaningless, so the stages are
the inclusive costs of the synchronous functions that do each stage's work, and "the rest" is the
total minus those.
"""

import re
import sys

LINE = re.compile(r"^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(.*)$")

# (label, [name patterns]): a stage's cost is the sum over its patterns of the costliest function
# whose demangled name contains the pattern. Indented rows are part of the row above.
STAGES = [
    ("target → endpoint (`Endpoint.init(target:)`, the default endpoint mapping)", ["Endpoint.init<A>(target:)"]),
    ("  of which the target's own `baseURL` (the benchmark's `URL(string:)`)", ["TargetType.baseURL.getter"]),
    ("  of which URL building and parsing (`URLBuilder.url`)", ["static URLBuilder.url(baseURL:path:)"]),
    ("endpoint → URLRequest (`Endpoint.urlRequest()`)", ["Endpoint.urlRequest()"]),
    ("final request checks (`RequestValidation`)", ["static RequestValidation.validate(", "static RequestValidation.validateBody("]),
    ("stub answer (`SampleTransport.response`)", ["static SampleTransport.response(for:sample:)"]),
    ("  of which `HTTPURLResponse.init`", ["HTTPURLResponse.init(url:statusCode:httpVersion:headerFields:)"]),
    ("  the target's `sampleResponse` (the benchmark's `Data`)", ["TargetType.sampleResponse.getter"]),
    ("response completion (`Transfer.completeBuffered`)", ["Transfer.completeBuffered("]),
    ("status validation (`Provider.validate`)", ["static Provider.validate("]),
    ("call plan (`Provider.plan`)", ["Provider.plan(_:mode:headers:)"]),
    ("decoding (`Response.map`)", ["Response.map<A>("]),
]
TOP_LEVEL = [label for label, _ in STAGES if not label.startswith(" ")]


def normalize(name):
    name = name.split(" [", 1)[0]
    if not name.startswith("???") and ":" in name.split("(", 1)[0]:
        name = name.split(":", 1)[1]
    elif name.startswith("???:"):
        name = name[4:]
    return name


def read(path):
    costs = {}
    total = 0
    with open(path) as handle:
        for text in handle:
            match = LINE.match(text)
            if not match or "=>" in text or "events annotated" in text:
                continue
            value = int(match.group(1).replace(",", ""))
            name = match.group(2).strip()
            if name.startswith("PROGRAM TOTALS"):
                total = value
                continue
            if "'2" in name:
                continue
            key = normalize(name)
            costs[key] = max(costs.get(key, 0), value)
    return total, costs


def calls(path, function):
    """Calls of `function` (e.g. "malloc") in a `callgrind_annotate --tree=caller` listing."""
    count, pending = 0, 0
    with open(path) as handle:
        for text in handle:
            match = re.match(r"^\s*[\d,]+\s+(?:\([^)]*\)\s+)?([<>*])\s+(.*)$", text)
            marker, rest = (match.group(1), match.group(2)) if match else ("", "")
            if marker == "<":
                counted = re.search(r"\(([\d,]+)x\)", rest)
                pending += int(counted.group(1).replace(",", "")) if counted else 0
            elif marker == "*":
                if re.match(r"\S*:" + re.escape(function) + r" \[", rest):
                    count += pending
                pending = 0
            else:
                pending = 0
    return count


def main():
    n = int(sys.argv[1])
    (total_a, inc_a), (total_b, inc_b), (_, own_a), (_, own_b) = (read(path) for path in sys.argv[2:6])
    total = (total_b - total_a) / n
    print(f"instructions per request: {total:,.0f}")
    if len(sys.argv) > 7:
        for function in ("malloc", "free"):
            per = (calls(sys.argv[7], function) - calls(sys.argv[6], function)) / n
            print(f"{function} calls per request: {per:.1f}")
    print()
    print("| stage | instructions per request | share |")
    print("|---|---:|---:|")
    accounted = 0
    for label, patterns in STAGES:
        value = 0
        for pattern in patterns:
            matches = [
                (inc_b[name] - inc_a.get(name, 0)) / n
                for name in inc_b
                if pattern in name and "closure" not in name and "thunk" not in name
            ]
            value += max(matches, default=0)
        if label in TOP_LEVEL:
            accounted += value
        print(f"| {label} | {value:,.0f} | {100 * value / total:.0f} % |")
    rest = total - accounted
    print(f"| the rest: pipeline, plugins' loops, metrics, async frames, retain/release | {rest:,.0f} | {100 * rest / total:.0f} % |")
    print(f"| **total** | **{total:,.0f}** | 100 % |")
    print()
    print("Costliest functions by their own cost (instructions per request):")
    own = {name: (own_b[name] - own_a.get(name, 0)) / n for name in own_b}
    for name, value in sorted(own.items(), key=lambda item: -item[1])[:25]:
        if value < 50:
            break
        print(f"  {value:8,.0f}  {name[:140]}")


main()
