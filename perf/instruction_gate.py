"""The instruction-count gate: per-call instructions against perf/instructions.txt.

    python perf/instruction_gate.py            # measure, compare; exit 1 on a rise
    python perf/instruction_gate.py --update   # measure, rewrite the baseline

Measures the gated scenarios with perf/callgrind_calls.py (callgrind: counts that do not
move with the machine's load) and compares each with its line in the baseline file.
A count more than 3% above its baseline fails (exit 1), naming the scenario and both
counts; a count more than 3% below is reported (the change that earned it updates the
baseline in the same commit: ``--update``). tests/run_all.sh runs it.

The baseline has one line per scenario and mode, so that two changes that move different
scenarios merge without a conflict; a change whose counts moved for a good reason (new
behaviour that costs instructions) rewrites it with ``--update`` and says why in its
commit message.

Options: ``--baseline FILE`` (default perf/instructions.txt), ``--only ID[,ID]`` (a
subset: scenario ids, ``ID:socket`` for socket mode), ``--threshold PCT`` (3), and, to
test the gate itself, ``--slowdown ID=PCT[,...]``: each segment of scenario ID also runs
PCT% of its baseline count in empty Python loop turns (the ``pad`` scenario), as a
change that made ID that much slower would.
"""
from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys

PERF = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, PERF)

import callgrind_calls  # noqa: E402  (perf/ is not a package)

BASELINE = os.path.join(PERF, "instructions.txt")
# (scenario, mode) pairs the gate measures, in the baseline's order; "pad" measures the
# interpreter itself (shown, not gated: a turn of an empty loop moves by 1-2% with the
# process's memory layout) and sizes --slowdown.
GATED = [("M1", "inproc"), ("M1-bound", "inproc"), ("M2a", "inproc"), ("M4", "inproc"),
         ("X4", "inproc"), ("X7-16k", "inproc"), ("X8-16k", "inproc"), ("pad", "inproc"),
         ("M1", "socket")]
N = 2000  # operations per segment
HEADER = """\
# Instructions per operation (call; X4: callback; pad: loop turn) of py4jni under
# callgrind, main thread only: the baseline of perf/instruction_gate.py, which
# tests/run_all.sh runs. A count more than 3% above its line fails the test command.
# After a change that moves a count (down: it earned it; up: new work the change
# needs, said in its commit message), rewrite this file in the same commit:
#     python perf/instruction_gate.py --update
# One line per scenario and mode: scenario, mode, instructions per operation."""


def environment() -> str:
    """What the counts depend on besides the code: Python, Java, valgrind, machine."""
    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True)
        jv = re.search(r'version "([^"]+)"', java.stderr)
        jver = jv.group(1) if jv else "?"
    except OSError:
        jver = "?"
    try:
        vg = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout
    except OSError:
        vg = "?"
    return (f"CPython {platform.python_version()}, Java {jver}, {vg.strip() or '?'}, "
            f"{platform.machine()}")


def read_baseline(path: str) -> tuple[dict[tuple[str, str], int], str]:
    """The counts of a baseline file, and the environment it names ("" when none)."""
    counts: dict[tuple[str, str], int] = {}
    env = ""
    with open(path) as fh:
        for line in fh:
            if line.startswith("# measured with:"):
                env = line.split(":", 1)[1].strip()
            line = line.split("#", 1)[0].strip()
            if line:
                sid, mode, count = line.split()
                counts[(sid, mode)] = int(count)
    return counts, env


def write_baseline(path: str, counts: dict[tuple[str, str], int]) -> None:
    """Writes `counts` (every gated pair first, in order, then any others) to `path`."""
    order = [k for k in GATED if k in counts] + sorted(k for k in counts if k not in GATED)
    with open(path, "w") as fh:
        fh.write(HEADER + "\n")
        fh.write(f"# measured with: {environment()}\n")
        for sid, mode in order:
            fh.write(f"{sid:10s} {mode:7s} {counts[(sid, mode)]}\n")


def parse_only(text: str) -> list[tuple[str, str]]:
    """--only's pairs: "M1,M1:socket" -> [("M1", "inproc"), ("M1", "socket")]."""
    pairs = []
    for item in filter(None, text.split(",")):
        sid, _, mode = item.partition(":")
        pairs.append((sid, mode or "inproc"))
    return pairs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default=BASELINE, help="baseline file (perf/instructions.txt)")
    ap.add_argument("--update", action="store_true", help="rewrite the baseline from this run")
    ap.add_argument("--only", help="a subset: ID[:socket],...")
    ap.add_argument("--threshold", type=float, default=3.0, help="percent (default 3)")
    ap.add_argument("--slowdown", default="", help="test the gate: ID=PCT,... (see above)")
    args = ap.parse_args()
    pairs = parse_only(args.only) if args.only else list(GATED)
    old: dict[tuple[str, str], int] = {}
    old_env = ""
    if os.path.exists(args.baseline):
        old, old_env = read_baseline(args.baseline)
    elif not args.update:
        print(f"instruction gate: no baseline {args.baseline}; make it with --update",
              file=sys.stderr)
        return 2
    slow = {}
    for item in filter(None, args.slowdown.split(",")):
        sid, pct = item.split("=")
        if (sid, "inproc") not in old or ("pad", "inproc") not in old:
            print(f"--slowdown {sid}: the baseline needs lines for {sid} and pad",
                  file=sys.stderr)
            return 2
        slow[sid] = float(pct)
    if slow and ("pad", "inproc") not in pairs:
        pairs.append(("pad", "inproc"))
    now: dict[tuple[str, str], float] = {}
    for mode in ("inproc", "socket"):
        names = [s for s, m in pairs if m == mode]
        if not names:
            continue
        pads = {sid: [pct / 100 * old[(sid, "inproc")], float(old[("pad", "inproc")])]
                for sid, pct in slow.items()}
        try:
            got = callgrind_calls.measure(names, N, socket=mode == "socket",
                                          pads=pads if mode == "inproc" else None)
        except RuntimeError as e:
            print(f"instruction gate: the {mode} measurement failed: {e}", file=sys.stderr)
            return 1
        for sid in names:
            now[(sid, mode)] = got[sid]["ir"]
    rises, falls = [], []
    print(f"{'scenario':10s} {'mode':7s} {'baseline':>9s} {'now':>9s} {'change':>8s}")
    for key in pairs:
        count = now[key]
        base = old.get(key)
        change = "" if base is None else f"{100 * (count - base) / base:+.1f}%"
        print(f"{key[0]:10s} {key[1]:7s} {base if base is not None else '-':>9} "
              f"{count:9,.0f} {change:>8s}")
        if base is None:
            continue
        if key[0] == "pad":  # the interpreter's own count: a note, not the code's cost
            continue
        if count > base * (1 + args.threshold / 100):
            rises.append((key, base, count))
        elif count < base * (1 - args.threshold / 100):
            falls.append((key, base, count))
    if args.update:
        merged = dict(old)
        merged.update({k: round(v) for k, v in now.items()})
        write_baseline(args.baseline, merged)
        print(f"instruction gate: baseline {args.baseline} rewritten "
              f"({len(now)} line{'s' * (len(now) != 1)} measured)")
        return 0
    how = f"python perf/instruction_gate.py --update{'' if args.baseline == BASELINE else ' --baseline ' + args.baseline}"
    for (sid, mode), base, count in falls:
        print(f"instruction gate: {sid} ({mode}) fell to {count:,.0f} instructions per "
              f"operation from the baseline's {base:,} ({100 * (count - base) / base:+.1f}%): "
              f"record the gain in this commit with `{how}`")
    env = environment()
    if rises:
        for (sid, mode), base, count in rises:
            print(f"instruction gate: FAILED: {sid} ({mode}) rose to {count:,.0f} instructions "
                  f"per operation from the baseline's {base:,} ({100 * (count - base) / base:+.1f}%"
                  f", over {args.threshold:g}%)")
        print("instruction gate: find what the change added (python perf/callgrind_calls.py "
              "--scenarios ID --breakdown 20, this build against the last one's with "
              "--pythonpath) and take it out; if the work is needed, rewrite the baseline in "
              f"the same commit with `{how}` and say why in the commit message")
        if old_env and old_env != env:
            print(f"instruction gate: note: the baseline was measured with {old_env}; "
                  f"this machine has {env}")
        return 1
    print(f"instruction gate: ok ({len(pairs)} counts within {args.threshold:g}% of "
          f"{os.path.relpath(args.baseline, os.path.dirname(PERF))} or below)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
