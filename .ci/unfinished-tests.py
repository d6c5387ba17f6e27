#!/usr/bin/env python3
"""Which Swift tests started and never finished, read from Swift Testing's event stream (the JSON lines that
`--event-stream-output-path` writes as the run goes, version 0). .ci/run calls it when the test run was stopped by its
time bound: a test blocked in a synchronous call, or one whose time limit ran out but whose task never returned,
keeps the run from ending, and this names it (the stream survives the kill; console output may not).

    python3 .ci/unfinished-tests.py EVENTS.jsonl

Prints each unfinished test function with its file and line, how long it had run, and the issues it recorded (a
"Time limit was exceeded" one means the trait fired but the test could not be cancelled). Exits 1 when any test is
unfinished, 0 otherwise.
"""
import json
import sys
import time


def main(path):
    tests, started, issues = {}, {}, {}
    ended = set()
    with open(path, encoding="utf-8", errors="replace") as stream:
        for line in stream:
            try:
                record = json.loads(line)
            except ValueError:
                continue  # the last line may be cut short by the kill
            payload = record.get("payload", {})
            if record.get("kind") == "test":
                tests[payload.get("id")] = payload
                continue
            kind, test_id = payload.get("kind"), payload.get("testID")
            at = payload.get("instant", {}).get("since1970", 0.0)
            if kind == "testStarted":
                started[test_id] = at
            elif kind == "testEnded":
                ended.add(test_id)
            elif kind == "issueRecorded":
                texts = [m.get("text", "") for m in payload.get("messages", [])]
                issues.setdefault(test_id, []).append("; ".join(texts))
    unfinished = [t for t in started if t not in ended and tests.get(t, {}).get("kind") != "suite"]
    if not unfinished:
        print(f"unfinished tests: none ({len(started)} started, all finished)")
        return 0
    now = time.time()
    print(f"unfinished tests: {len(unfinished)} started and never finished:")
    for test_id in sorted(unfinished, key=lambda t: started[t]):
        location = tests.get(test_id, {}).get("sourceLocation", {})
        place = f'{location.get("fileID", "?")}:{location.get("line", "?")}'
        print(f"  {test_id} ({place}), started {now - started[test_id]:.0f} s ago")
        for issue in issues.get(test_id, []):
            print(f"    recorded: {issue}")
    return 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
