#!/usr/bin/python3
"""replay's progress, on a terminal (a pty) and off one.

    progress_test.py NEWSFLOW_BIN SOURCE_DIR WORK_DIR

On a terminal one line is redrawn in place ("\\r", erased to its end) at most four times a
second, the first at once, and erased before the summary; articles and dead letters written to
the same terminal never mix with it. Off a terminal a plain line comes every five seconds.
--quiet leaves only the summary, which is the same in every case.
"""
import gzip
import json
import os
import pty
import re
import subprocess
import sys
import threading
import time

BIN, SRC, WORK = sys.argv[1:4]
ENV = dict(os.environ, NEWSFLOW_FETCH__ENABLED="false", NEWSFLOW_LOG__LEVEL="warn")
FRAME = re.compile(rb"\r([^\r\n]*?)\x1b\[K")  # a drawn line, or an erased one (empty)
failures = []


def check(ok, what, data=b""):
    if not ok:
        failures.append(what + (f"\n  output: {data[:600]!r}" if data else ""))


def feed(stream, lines, interval):
    for line in lines:
        stream.write(line)
        stream.flush()
        time.sleep(interval)
    stream.close()


def run(args, stdin_lines=None, interval=0.0, tty=True):
    """Runs replay ARGS; stdin fed slowly from a pipe when given. Returns (seconds, stderr bytes
    or, on a pty, everything the terminal showed)."""
    cmd = [BIN, "replay"] + args
    start = time.monotonic()
    stdin = subprocess.PIPE if stdin_lines is not None else subprocess.DEVNULL
    if tty:
        master, slave = pty.openpty()
        p = subprocess.Popen(cmd, stdin=stdin, stdout=slave, stderr=slave, env=ENV)
        os.close(slave)
    else:
        p = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env=ENV)
    feeder = None
    if stdin_lines is not None:
        feeder = threading.Thread(target=feed, args=(p.stdin, stdin_lines, interval))
        feeder.start()
    data = b""
    if tty:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the process closed the terminal
                break
            if not chunk:
                break
            data += chunk
        os.close(master)
    else:
        data = p.stderr.read()
    p.wait()
    if feeder:
        feeder.join()
    check(p.returncode == 0, f"replay {args} exited {p.returncode}", data)
    return time.monotonic() - start, data


def screen(data):
    """The lines a terminal shows after `data`: "\r" returns to the line's start, text
    overwrites, ESC [ K erases to the line's end, "\n" starts a new line."""
    lines, col = [bytearray()], 0
    i = 0
    while i < len(data):
        if data.startswith(b"\x1b[K", i):
            del lines[-1][col:]
            i += 3
            continue
        c = data[i:i + 1]
        if c == b"\r":
            col = 0
        elif c == b"\n":
            lines.append(bytearray())
            col = 0
        else:
            line = lines[-1]
            line[col:col + 1] = c
            col += 1
        i += 1
    return b"\n".join(bytes(l) for l in lines)


with gzip.open(f"{SRC}/samples/pages.jsonl.gz", "rb") as f:
    samples = f.read().splitlines(keepends=True)
tiny = f"{WORK}/tiny.jsonl"
with open(tiny, "wb") as f:
    f.writelines(samples[:3])
out, dlq = f"{WORK}/out.jsonl", f"{WORK}/dlq.jsonl"
files = ["--output", out, "--dlq", dlq]

# The summary off a terminal and quiet: the reference.
_, reference = run(["--input", tiny, "--quiet"] + files, tty=False)
summary = reference.strip()
check(re.fullmatch(rb"replay: 3 lines -> 3 articles \(.*\), \d+ stories", summary) is not None,
      "quiet off a terminal: only the summary", reference)

# A terminal, a small file: a line at once with the share of the file read, erased before the
# summary, which is as before.
_, data = run(["--input", tiny] + files)
frames = [m.group(1) for m in FRAME.finditer(data)]
drawn = [f for f in frames if f]
check(drawn and drawn[0].startswith(b"replay: 1 inputs, "), "no progress line at once", data)
size = os.path.getsize(tiny)
check(all(b" of " in f and b"%)" in f for f in drawn), "the share of a regular file", data)
check(all(b"articles" in f and b"duplicates" in f and b"dead letters" in f for f in drawn),
      "articles, duplicates, dead letters", data)
check(frames and frames[-1] == b"", "the line is not erased before the summary", data)
check(screen(data).strip() == summary, "the summary differs on a terminal", data)
check(b"\n" not in data.split(summary[:20])[0], "a progress line ended a line", data)

# A terminal, a slow pipe (no size): the line is redrawn in place, at most four times a second,
# and shows the pace once a second has passed.
lines = samples[:10]
seconds, data = run(["--input", "-"] + files, stdin_lines=lines, interval=0.2)
drawn = [m.group(1) for m in FRAME.finditer(data) if m.group(1)]
check(len(drawn) >= 3, f"{len(drawn)} redraws in {seconds:.1f} s", data)
check(len(drawn) <= seconds * 4 + 2, f"{len(drawn)} redraws in {seconds:.1f} s: too many", data)
check(not any(b" of " in f for f in drawn), "a share of a pipe's unknown size", data)
check(any(b"pages/s" in f for f in drawn), "no pages/s after a second", data)
counts = [int(re.match(rb"replay: (\d+) inputs", f).group(1)) for f in drawn]
check(counts == sorted(counts) and counts[-1] >= 5, f"inputs read {counts}", data)
check(screen(data).startswith(b"replay: 10 lines -> "), "the summary after a pipe",
      data)

# Articles and dead letters on the same terminal: each on a line of its own, never mixed with
# the progress line.
bad = [b"not json\n", b'{"id":"nourl","html":"<p>x</p>"}\n']
_, data = run(["--input", "-", "--output", "-"], stdin_lines=samples[:4] + bad, interval=0.3)
rest = screen(data).splitlines()
check(len(rest) == 4 + 2 + 1, f"{len(rest)} lines besides the progress line", data)
for line in rest[:-1]:
    try:
        json.loads(line)
    except ValueError:
        check(False, f"a line mixed with the progress line: {line[:80]!r}", data)
check(rest[-1].startswith(b"replay: 6 lines -> 4 articles"), "the summary last", data)

# --quiet on a terminal: only the summary.
_, data = run(["--input", tiny, "--quiet"] + files)
check(data.replace(b"\r\n", b"\n").strip() == summary, "--quiet on a terminal", data)

# Off a terminal, runs of six seconds (side by side): a plain line after five, then the
# summary; with --quiet only the summary.
results = {}
runs = [threading.Thread(target=lambda k=k, q=q: results.__setitem__(k, run(
    ["--input", "-", "--output", f"{out}.{k}", "--dlq", f"{dlq}.{k}"] + q,
    stdin_lines=samples[:13], interval=0.5, tty=False))) for k, q in (("plain", []),
                                                                    ("quiet", ["--quiet"]))]
for t in runs:
    t.start()
for t in runs:
    t.join()
seconds, data = results["plain"]
text = data.decode()
plain = [l for l in text.splitlines() if re.match(r"replay: \d+ inputs, ", l)]
check(b"\r" not in data and b"\x1b" not in data, "terminal codes off a terminal", data)
check(1 <= len(plain) <= seconds / 5 + 1, f"{len(plain)} plain lines in {seconds:.1f} s", data)
check(text.splitlines()[-1].startswith("replay: 13 lines -> "), "the summary last", data)
_, data = results["quiet"]
check(data.decode().strip().startswith("replay: 13 lines -> ") and data.count(b"\n") == 1,
      "--quiet off a terminal", data)

for f in failures:
    print("FAIL:", f, file=sys.stderr)
if failures:
    sys.exit(1)
print("1 passed, 0 failed")
