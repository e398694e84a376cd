#!/usr/bin/env python3
"""Turns the results of perf/bench.py into results.json, report.md and PNG charts.

    python perf/report.py perf/results/<run>/results.json   # redraw report and charts

Figures are medians of round means with their [min-max]; ratios compare medians of the
same run. Times per operation are "lower is better"; bandwidths and speed-ups "higher".
"""
import json
import math
import os
import sys

BACKEND_ORDER = ["py4jni", "py4jni-socket", "py4j", "jpype"]
LABEL = {"py4jni": "py4jni", "py4jni-socket": "py4jni socket", "py4j": "py4j",
         "jpype": "JPype", "floor": "C/JNI floor"}
# (numerator, denominator, column title): time ratios, < 1 means the numerator is faster.
RATIOS = [("py4jni", "jpype", "py4jni/JPype"), ("py4jni", "py4j", "py4jni/py4j"),
          ("py4jni-socket", "py4j", "socket/py4j"), ("py4j", "jpype", "py4j/JPype")]
GROUPS = [
    ("M", "Single calls (M)", ["M1", "M1-bound", "M2a", "M2b", "M3", "M4"]),
    ("X1", "Calls from threads (X1): 10,000 calls over N threads, time per call",
     ["X1-1", "X1-4", "X1-16"]),
    ("X2", "Iterating a Java ArrayList (X2), time per element", ["X2-1k", "X2-10k", "X2-100k"]),
    ("X3", "Python list to java.util.List (X3), time per conversion", ["X3-100", "X3-1k", "X3-10k"]),
    ("X4", "Callbacks (X4): Collections.sort of 100 Python Comparables, time per callback", ["X4"]),
    ("CB", "Java loops calling Python (CB): proxies and native methods, time per callback",
     ["CB-FN-100k", "CB-INT-100k", "CB-NATIVE-100k"]),
    ("X5", "Errors (X5): ArrayList.get(-1) caught, time per error", ["X5"]),
    ("X6", "Saturation (X6): 50 threads x 20 calls", ["X6"]),
    ("X7", "Bytes received (X7): ByteBuffer.array() -> bytes, time per call",
     ["X7-1k", "X7-16k", "X7-256k", "X7-1M", "X7-16M", "X7-64M"]),
    ("X8", "Bytes sent (X8): baos.write(data, 0, N) + reset(), time per call",
     ["X8-1k", "X8-16k", "X8-256k", "X8-1M", "X8-16M", "X8-64M"]),
    ("ARR", "Primitive arrays (ARR): 1,000,000 doubles between numpy and a Java double[], "
     "time per array", ["ARR-1M-send", "ARR-1M-recv", "ARR-1M-recv-view"]),
    ("X9", "Java reads a 256 MiB Python buffer (X9): direct ByteBuffer vs byte[] copy, "
     "time per call", ["X9-direct", "X9-copy"]),
    ("LAT", "String-argument latency (LAT): Objects.hashCode(s), time per call",
     ["LAT-16", "LAT-256", "LAT-4096", "LAT-16384", "LAT-65536"]),
]
ARR_BYTES = 8 * 1_000_000  # ARR-1M: 10^6 doubles
BYTES = {"1k": 1024, "16k": 16384, "256k": 262144, "1M": 1 << 20, "16M": 16 << 20,
         "64M": 64 << 20}
# The C/JNI floor's rows (perf/floor.c), in report order.
FLOOR_ROWS = (["M1", "M2a", "M2b", "M4"] + [f"LAT-{n}" for n in (16, 256, 4096, 16384, 65536)]
              + [f"X7-{k}" for k in BYTES] + [f"X8-{k}" for k in BYTES])
# Targets of "distance to the floor": py4jni's median <= factor x the floor's.
FLOOR_TARGETS = {"M1": 1.5, "M1-bound": 1.5, "M2a": 2.0, "M2b": 2.0, "M4": 2.0,
                 "LAT-65536": 1.2}
MEM_TOLERANCE = 16 * 2**20  # RSS growth still counted as "where it started"


# ---- formatting -------------------------------------------------------------------------

def _sig(x, digits=3):
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    d = max(0, digits - 1 - int(math.floor(math.log10(abs(x)))))
    return f"{x:.{d}f}"


def time_unit(s):
    if s < 1e-3:
        return 1e6, "us"
    if s < 1:
        return 1e3, "ms"
    return 1, "s"


def fmt_time(s, lo=None, hi=None):
    scale, unit = time_unit(s)
    if lo is None:
        return f"{_sig(s * scale)} {unit}"
    return f"{_sig(s * scale)} [{_sig(lo * scale)}-{_sig(hi * scale)}] {unit}"


def fmt_ratio(x):
    if x is None or not math.isfinite(x):
        return "-"
    return f"{_sig(x, 2)}x" if x < 100 else f"{x:.0f}x"


def fmt_rate(bps):
    """bytes per second as MB/s (10^6 bytes)."""
    return f"{_sig(bps / 1e6)} MB/s"


class Notes:
    """Numbered footnotes for one table: a reason shown once, cited by number."""

    def __init__(self):
        self.items = []

    def cite(self, text):
        if text not in self.items:
            self.items.append(text)
        return f"[{self.items.index(text) + 1}]"

    def render(self):
        return "".join(f"\n[{i}] {t}" for i, t in enumerate(self.items, 1)) + ("\n" if self.items else "")


def status_text(status, reason, notes):
    short = {"not installed": "not installed", "n/a": "n/a", "error": "error",
             "crashed": "crashed", "timed out": "timed out", "failed": "failed",
             "pending": "not run"}.get(status, status)
    if status in FAILED_STATUSES and short != "failed":
        short = f"failed ({short})"
    if reason:
        return f"{short} {notes.cite(f'{short}: {reason}')}"
    return short


# Cell states that are a failure of the run: a figure that should exist and does not.
# The others say why a cell has no figure on purpose: "n/a" (the backend cannot express
# the scenario), "skipped" (over budget by rule).
FAILED_STATUSES = ("error", "crashed", "timed out", "failed", "not installed", "pending")


def failures(results):
    """[(what, backend, status, reason)]: every cell, cold start, memory figure and floor
    of the run that failed (FAILED_STATUSES), in report order. perf/bench.py exits 1 when
    this is not empty; report.md lists them first."""
    out = []
    for c in results.get("cells", []):
        if c.get("status") in FAILED_STATUSES:
            out.append((c["scenario"], c["backend"], c["status"], c.get("reason")))
    for b, kinds in (results.get("cold") or {}).items():
        for kind, e in (kinds or {}).items():
            # a cold entry still "pending" ran no repetition at all (--cold-reps 0)
            if e and e.get("status") in FAILED_STATUSES and e.get("status") != "pending":
                out.append((f"COLD-{kind}", b, e["status"], e.get("reason")))
    for b, e in (results.get("mem") or {}).items():
        if e and e.get("status") in FAILED_STATUSES:
            out.append(("MEM", b, e["status"], e.get("reason")))
    fl = (results.get("meta") or {}).get("floor")
    if fl and fl.get("status") in FAILED_STATUSES and not any(
            b == "floor" for _, b, _, _ in out):
        out.append(("FLOOR", "floor", fl["status"], fl.get("reason")))
    return out


# ---- access to results --------------------------------------------------------------------

class View:
    def __init__(self, results):
        self.r = results
        self.meta = results["meta"]
        self.cells = {(c["scenario"], c["backend"]): c for c in results["cells"]}
        req = self.meta.get("requested_backends", BACKEND_ORDER)
        self.backends = [b for b in BACKEND_ORDER if b in req]

    def cell(self, sid, backend):
        return self.cells.get((sid, backend))

    def med(self, sid, backend):
        c = self.cell(sid, backend)
        if c and c.get("status") == "ok" and c.get("per_op_s"):
            return c["per_op_s"]["median"]
        return None

    def failed(self, sid, backend):
        """True when (sid, backend)'s cell failed (FAILED_STATUSES): it has no figure and
        should have one."""
        c = self.cell(sid, backend)
        return bool(c) and c.get("status") in FAILED_STATUSES

    def why_missing(self, sid, backend):
        """Why (sid, backend) has no figure, as one phrase."""
        if backend not in self.backends and backend != "floor":
            return f"{LABEL[backend]} not in this run"
        c = self.cell(sid, backend)
        if c is None:
            st = self.meta["backends"].get(backend, {})
            if st.get("status") not in (None, "ok", "pending"):
                return f"{LABEL[backend]} {st['status']}: {st.get('reason')}"
            return f"{sid} not in this run"
        return f"{LABEL[backend]} {c['status']}" + (f": {c['reason']}" if c.get("reason") else "")

    def cold(self, backend, kind):
        e = (self.r.get("cold") or {}).get(backend, {}) or {}
        return e.get(kind)


def _median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def cold_summary(view):
    """{backend: {"full": (med, lo, hi), "first": ..., "warm": ..., "ratio": ...,
    "handshake": ...}} over the cold processes that succeeded."""
    out = {}
    for b in view.backends:
        s = {}
        full = view.cold(b, "full")
        if full and full.get("reps"):
            for key, field in (("full", "total_s"), ("first", "first_call_s"), ("warm", "warm_s")):
                xs = [r[field] for r in full["reps"]]
                s[key] = (_median(xs), min(xs), max(xs))
            ratios = [r["first_call_s"] / r["warm_s"] for r in full["reps"] if r["warm_s"] > 0]
            if ratios:
                s["ratio"] = (_median(ratios), min(ratios), max(ratios))
        hs = view.cold(b, "handshake")
        if hs and hs.get("reps"):
            xs = [r["handshake_s"] for r in hs["reps"]]
            s["handshake"] = (_median(xs), min(xs), max(xs))
        out[b] = s
    return out


def bandwidth(view):
    """{(direction, size): {backend: (median, lo, hi) bytes/s}} from X7 and X8 rounds."""
    out = {}
    for prefix, direction in (("X7", "recv"), ("X8", "send")):
        for name, n in BYTES.items():
            sid = f"{prefix}-{name}"
            row = {}
            for b in view.backends + ["floor"]:
                c = view.cell(sid, b)
                if c and c.get("status") == "ok" and c.get("per_op_s"):
                    p = c["per_op_s"]
                    row[b] = (n / p["median"], n / p["max"], n / p["min"])
            out[(direction, name)] = row
    return out


# ---- targets (perf/README.md, "Targets") -------------------------------------------------

def targets(view):
    """[(target, verdict, figures)]: verdict is met / missed / n/a (not measured by rule
    or not in this run) / failed (a figure it needs failed)."""
    rows = []
    med = view.med

    def need(*pairs):
        missing = [view.why_missing(s, b) for s, b in pairs if med(s, b) is None]
        return missing[0] if missing else None

    def add(text, pairs, check):
        why = need(*pairs)
        if why:
            bad = any(view.failed(s, b) for s, b in pairs if med(s, b) is None)
            rows.append((text, "failed" if bad else "n/a", why))
            return
        ok, figures = check()
        rows.append((text, "met" if ok else "missed", figures))

    P, J, Y, S = "py4jni", "jpype", "py4j", "py4jni-socket"

    def m1():
        a, j = med("M1", P), med("M1", J)
        return a <= 0.25e-6 and a / j <= 0.5, f"{fmt_time(a)}; {fmt_ratio(a / j)} JPype ({fmt_time(j)})"
    add("M1 <= 0.25 us and <= 0.5 x JPype", [("M1", P), ("M1", J)], m1)
    for sid in ("M2a", "M2b", "M4"):
        def rel(sid=sid):
            a, j = med(sid, P), med(sid, J)
            return a / j <= 0.5, f"{fmt_time(a)} vs JPype {fmt_time(j)}: {fmt_ratio(a / j)}"
        add(f"{sid} <= 0.5 x JPype", [(sid, P), (sid, J)], rel)
    add("M3 <= 0.1 us (cached)", [("M3", P)],
        lambda: (med("M3", P) <= 0.1e-6, fmt_time(med("M3", P))))

    def x7():
        bw = 262144 / med("X7-256k", P)
        return bw >= 15e9, f"{fmt_rate(bw)} ({fmt_time(med('X7-256k', P))} per call)"
    add("X7-256k >= 15 GB/s", [("X7-256k", P)], x7)

    def x8():
        bw = 262144 / med("X8-256k", P)
        bj = 262144 / med("X8-256k", J)
        return bw >= 5e9 and bw >= 10 * bj, f"{fmt_rate(bw)}; {fmt_ratio(bw / bj)} JPype ({fmt_rate(bj)})"
    add("X8-256k >= 5 GB/s and >= 10 x JPype", [("X8-256k", P), ("X8-256k", J)], x8)

    def lat():
        a, j = med("LAT-65536", P), med("LAT-65536", J)
        return a / j <= 0.25, f"{fmt_time(a)} vs JPype {fmt_time(j)}: {fmt_ratio(a / j)}"
    add("LAT-64k <= 0.25 x JPype", [("LAT-65536", P), ("LAT-65536", J)], lat)

    def x2():
        rate = 1 / med("X2-100k", P)
        return rate >= 5e6, f"{_sig(rate / 1e6)} M elements/s"
    add("X2-100k >= 5 M elements/s", [("X2-100k", P)], x2)
    add("X4 <= 1 us per callback", [("X4", P)],
        lambda: (med("X4", P) <= 1e-6, fmt_time(med("X4", P)) + " per callback"))
    for sid in ("CB-FN-100k", "CB-INT-100k"):
        add(f"{sid} <= 1 us per proxy callback", [(sid, P)],
            lambda sid=sid: (med(sid, P) <= 1e-6, fmt_time(med(sid, P)) + " per callback"))

    def native():
        a = med("CB-NATIVE-100k", P)
        j = med("CB-INT-100k", J)
        vs = (f"; JPype has no natives, its nearest equivalent (proxy, CB-INT-100k): "
              f"{fmt_time(j)}, {fmt_ratio(a / j)}" if j else "")
        return a <= 0.5e-6, fmt_time(a) + " per callback" + vs
    add("CB-NATIVE-100k <= 0.5 us per native callback", [("CB-NATIVE-100k", P)], native)
    def view_recv():
        a, j = med("ARR-1M-recv-view", P), med("ARR-1M-recv", J)
        return a / j <= 0.5, (f"{fmt_time(a)} vs JPype's copy {fmt_time(j)}: {fmt_ratio(a / j)}")
    add("ARR-1M-recv-view (zero-copy) <= 0.5 x JPype's ARR-1M-recv",
        [("ARR-1M-recv-view", P), ("ARR-1M-recv", J)], view_recv)
    add("X5 <= 5 us per error", [("X5", P)],
        lambda: (med("X5", P) <= 5e-6, fmt_time(med("X5", P)) + " per error"))

    cold = cold_summary(view)
    text = "COLD-full <= 0.5 x py4j and <= 0.6 x JPype"
    c = {b: cold.get(b, {}).get("full") for b in (P, Y, J)}
    missing = [b for b in (P, Y, J) if not c[b]]
    if missing:
        b = missing[0]
        full = view.cold(b, "full") if b in view.backends else None
        why = (f"{LABEL[b]} not in this run" if b not in view.backends else
               f"{LABEL[b]} {full.get('status')}: {full.get('reason')}" if full else
               "COLD-full not in this run")
        rows.append((text, "n/a", why))
    else:
        a, y, j = c[P][0], c[Y][0], c[J][0]
        rows.append((text, "met" if a <= 0.5 * y and a <= 0.6 * j else "missed",
                     f"{fmt_time(a)}; {fmt_ratio(a / y)} py4j ({fmt_time(y)}), "
                     f"{fmt_ratio(a / j)} JPype ({fmt_time(j)})"))

    def sm1():
        a, y = med("M1", S), med("M1", Y)
        return a / y <= 0.5, f"{fmt_time(a)} vs py4j {fmt_time(y)}: {fmt_ratio(a / y)}"
    add("socket mode: M1 <= 0.5 x py4j's Python client", [("M1", S), ("M1", Y)], sm1)
    add("socket mode: X7-16k under 1 ms (no 40 ms stall)", [("X7-16k", S)],
        lambda: (med("X7-16k", S) < 1e-3, fmt_time(med("X7-16k", S))))

    def sx7():
        a, y = med("X7-256k", S), med("X7-256k", Y)
        return y / a >= 10, f"{fmt_time(a)} vs py4j {fmt_time(y)}: {fmt_ratio(y / a)} faster"
    add("socket mode: X7-256k >= 10 x py4j", [("X7-256k", S), ("X7-256k", Y)], sx7)

    text = "memory: a million objects created and dropped leave RSS (and global refs) where they started"
    m = (view.r.get("mem") or {}).get(P)
    if not m or m.get("status") != "ok":
        why = (view.why_missing("M1", P) if P not in view.backends or not m else
               f"py4jni {m.get('status')}: {m.get('reason')}")
        rows.append((text, "n/a", why if m or P not in view.backends else "MEM not in this run"))
    else:
        d = m["rss_after"] - m["rss_before"]
        rows.append((text, "met" if d <= MEM_TOLERANCE else "missed",
                     f"RSS {d / 2**20:+.1f} MiB over {m['objects']:,} objects "
                     f"(tolerance {MEM_TOLERANCE / 2**20:.0f} MiB); global-reference count not "
                     "observable from the harness"))
    return rows


# ---- report.md ----------------------------------------------------------------------------

def _table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _fig(c):
    p = c["per_op_s"]
    return fmt_time(p["median"], p["min"], p["max"])


def timed_table(view, sids, notes, extra_rows=None):
    ratio_cols = [(a, b, t) for a, b, t in RATIOS if a in view.backends and b in view.backends]
    header = ["scenario"] + [LABEL[b] for b in view.backends] + [t for _, _, t in ratio_cols]
    rows = []
    for sid in sids:
        if not any(view.cell(sid, b) for b in view.backends):
            continue
        row = [sid]
        for b in view.backends:
            c = view.cell(sid, b)
            if c is None:
                row.append("-")
            elif c["status"] == "ok" and c.get("per_op_s"):
                txt = _fig(c)
                if c["per_op_s"]["n"] < view.meta["preset"]["rounds"]:
                    txt += f" (n={c['per_op_s']['n']})"
                row.append(txt)
            else:
                row.append(status_text(c["status"], c.get("reason"), notes))
        for a, b, _ in ratio_cols:
            x, y = view.med(sid, a), view.med(sid, b)
            row.append(fmt_ratio(x / y) if x and y else "-")
        rows.append(row)
    for r in extra_rows or []:
        rows.append(r + ["-"] * (len(header) - len(r)))
    return _table(header, rows) if rows else ""


def cb_preamble(view):
    """What the CB table needs said before it: loop lengths, and JPype beside natives."""
    calls = []
    for b in view.backends:
        c = view.cell("CB-FN-100k", b) or view.cell("CB-INT-100k", b)
        if c and c.get("ops_per_unit"):
            calls.append(f"{LABEL[b]} {c['ops_per_unit']:,}")
    text = ("One unit is one Java call (CallbackFixtures.applyFunction / applyIntOp, "
            "NativeCodec.loop, from tests/java/org/py4jni/fixtures) whose loop calls Python n "
            "times; figures are per callback. A proxy callback goes through java.lang.reflect."
            "Proxy and its InvocationHandler; a native callback (CB-NATIVE-100k, "
            "gateway.register_natives) is a `native` method bound with RegisterNatives, no "
            "boxing, no reflection.")
    if calls:
        text += " Callbacks per unit: " + ", ".join(calls) + \
            " (over a socket every callback is a round trip, so the loop is shorter)."
    text += (" JPype has no Python-implemented native methods: its nearest equivalent is the "
             "proxy row CB-INT-100k (int in, int out)")
    a, j = view.med("CB-NATIVE-100k", "py4jni"), view.med("CB-INT-100k", "jpype")
    if a and j:
        text += (f": py4jni's native {fmt_time(a)} vs JPype's proxy {fmt_time(j)} per "
                 f"callback, {fmt_ratio(a / j)}")
    return text + ".\n\n"


def arr_preamble(view):
    """The ARR rates, and what the socket backends do instead of the buffer protocol."""
    text = ("In-process py4jni: `to_java_array(gateway, a)` and `numpy.asarray(ja)` (the "
            "buffer protocol, one copy each way); JPype: `JArray(JDouble)(a)` and "
            "`numpy.asarray(ja)`. Socket backends (py4j's API moves no primitive arrays) take "
            "the byte[] route: `a.tobytes()` crosses as a byte[] and a ByteBuffer view copies "
            "it into / out of the double[] on the Java side; numpy reads it back with "
            "`frombuffer`. Each send makes a new double[] (Java allocation is part of it).")
    rates = []
    for sid in ("ARR-1M-send", "ARR-1M-recv"):
        per = [f"{LABEL[b]} {fmt_rate(ARR_BYTES / view.med(sid, b))}"
               for b in view.backends if view.med(sid, b)]
        if per:
            rates.append(f"{sid}: " + ", ".join(per))
    if rates:
        text += " Rates (8,000,000 bytes per array, MB = 10^6 bytes): " + "; ".join(rates) + "."
    return text + "\n\n"


def x6_rows(view):
    """X6 percentile rows, in the layout of timed_table (backends, then ratio columns)."""
    ratio_cols = [(a, b) for a, b, _ in RATIOS if a in view.backends and b in view.backends]
    rows = []
    for key, label in (("p50_ns", "X6 p50 latency"), ("p99_ns", "X6 p99 latency")):
        row, med = [label], {}
        for b in view.backends:
            c = view.cell("X6", b)
            if c and c.get("stats") and key in c["stats"]:
                med[b] = c["stats"][key] / 1e9
                lo, hi = (x / 1e9 for x in c["stats_range"][key])
                row.append(fmt_time(med[b], lo, hi))
            else:
                row.append("-")
        row += [fmt_ratio(med[a] / med[b]) if a in med and b in med and med[b] else "-"
                for a, b in ratio_cols]
        rows.append(row)
    return rows


def floor_distance(view):
    """Rows of the "distance to the floor" table: each py4jni figure that has a floor
    row, as a multiple of it (M1-bound against M1's floor: the same call), with JPype's
    multiple beside it and the issue's target where it set one; plus COLD-full against
    the sum of its unavoidable phases (python start + JVM create) when measured."""
    rows = []
    pairs = [(sid, sid) for sid in FLOOR_ROWS]
    pairs.insert(1, ("M1-bound", "M1"))
    for sid, fsid in pairs:
        f, a = view.med(fsid, "floor"), view.med(sid, "py4jni")
        if not f or not a:
            if view.failed(fsid, "floor") or view.failed(sid, "py4jni"):  # kept, marked
                rows.append([sid, fmt_time(f) if f else "failed", fmt_time(a) if a else "failed",
                             "-", "-", "-"])
            continue
        j = view.med(sid, "jpype")
        t = FLOOR_TARGETS.get(sid)
        rows.append([sid, fmt_time(f), fmt_time(a), fmt_ratio(a / f),
                     fmt_ratio(j / f) if j else "-",
                     (f"<= {t:g}x: " + ("met" if a / f <= t else "missed")) if t else "-"])
    cb = cold_breakdown(view).get("py4jni")
    if cb and "JVM create" in cb:
        floor = cb["python start"] + cb["JVM create"]
        total = cb["total"]
        rows.append(["COLD-full", f"{fmt_time(floor)} (python start + JVM create)",
                     fmt_time(total), fmt_ratio(total / floor), "-",
                     "<= 40 ms: " + ("met" if total <= 0.040 else "missed")])
    return rows


def cold_breakdown(view):
    """{backend: {phase: median seconds, ..., "total": median}} over the cold
    processes that recorded phases."""
    out = {}
    for b in view.backends:
        full = view.cold(b, "full")
        reps = [r for r in (full or {}).get("reps", []) if r.get("phases_s")]
        if not reps:
            continue
        phases = list(reps[0]["phases_s"])
        out[b] = {k: _median([r["phases_s"].get(k, 0.0) for r in reps]) for k in phases}
        out[b]["total"] = _median([r["total_s"] for r in reps])
    return out


def write_report(results, out, charts):
    view = View(results)
    meta = view.meta
    m = meta["machine"]
    v = m.get("versions", {})
    L = []
    w = L.append
    w(f"# py4jni benchmark report ({meta['mode']} run)\n\n")
    py4jni_state = meta["backends"].get("py4jni") or meta["backends"].get("py4jni-socket") or {}
    py4jni_ver = v.get("py4jni") or next(
        (st["info"].get("package_version") for st in meta["backends"].values()
         if st.get("info") and st["info"].get("backend", "").startswith("py4jni")), None)
    if not py4jni_ver:
        py4jni_ver = (f"not installed ({py4jni_state.get('reason')})"
                      if py4jni_state.get("status") == "not installed" else "-")
    w(_table(["run", ""], [
        ["machine", f"{m['cpu']}, {m['cores']} cores, {m['ram_gib']} GiB RAM"],
        ["kernel", f"{m['kernel']} ({m['os']})"],
        ["Python", m["python"]],
        ["Java", m.get("java") or "?"],
        ["py4j", v.get("py4j") or "not installed"],
        ["JPype", v.get("JPype1") or "not installed"],
        ["py4jni", py4jni_ver + (f" (repository at {meta['git']})" if meta.get("git") else "")],
        ["date", meta["date"]],
        ["command", f"`{meta['command']}`"],
        ["rounds", f"{meta['preset']['rounds']} rounds of ~{meta['preset']['round_time']} s batches "
                   f"(>= {meta['min_calls']} operations when sub-millisecond), after warm-up and "
                   f"calibration; a cell whose batches exceed {meta['preset']['budget']} s in all "
                   f"runs in fewer rounds (at least {meta['preset']['min_rounds']}), shown as n=..."
                   + ("; cells of large-size scenarios (X7/X8 from 1 MiB, X9) have half that "
                      f"budget and are skipped when their least work would exceed "
                      f"{meta['preset']['skip_over']:g} s" if "skip_over" in meta["preset"]
                      else "")],
        ["duration", f"{meta['duration_s']:.0f} s" + (" (interrupted)" if meta.get("interrupted") else "")],
        ["result", (f"{len(failures(results))} figures failed (listed below)" if failures(results)
                    else "every requested figure measured, or n/a / skipped with the reason")],
    ] + ([["left out", "quick run: " + ", ".join(meta["left_out"]) +
           " (a run names them with --scenarios to measure them)"]] if meta.get("left_out") else []) + [
        ["servers", meta.get("server_sharing", "")],
    ]))
    w("\nEach figure is the median of the round means with [min-max] across rounds. Backends "
      "ran interleaved: in each round every scenario ran one batch on each backend in turn, "
      "so drift of this shared machine hits all of them alike. Ratio columns divide medians "
      "of this run (time ratios: below 1 means the first is faster).\n")
    failed = failures(results)
    if failed:
        w(f"\n## Failed: {len(failed)} of this run's figures are missing\n\n")
        w("A scenario, cold start or memory figure that a backend should have given and did "
          "not; perf/bench.py exited with status 1. Their cells below say \"failed\" with the "
          "same reason; the charts mark them.\n\n")
        w(_table(["scenario", "backend", "status", "reason"],
                 [[sid, LABEL.get(b, b), st, _short(reason or "-")] for sid, b, st, reason in failed]))
    dist = floor_distance(view)
    if dist:
        w("\n## Distance to the floor\n\n")
        w("Each py4jni figure as a multiple of the same work done from C through JNI alone "
          "(perf/floor.c, FLOOR below; M1-bound against M1's floor), JPype's beside it; "
          "targets in the last column. COLD-full against the phases no bridge avoids (python "
          "start + JNI_CreateJavaVM, from the breakdown in the cold-start section).\n\n")
        w(_table(["scenario", "C/JNI floor", "py4jni", "py4jni / floor", "JPype / floor",
                  "target"], dist))
    w("\n## Backends\n\n")
    rows = []
    for b in view.backends:
        st = meta["backends"][b]
        info = st.get("info") or {}
        jvm = ", ".join(x for x in (info.get("java.vm.name"), info.get("java.version")) if x)
        if b == "jpype":
            where = "embedded in its worker, startJVM(" + ", ".join(
                repr(o) for o in info.get("jvm_options", [])) + (
                ", classpath=[<fixtures jar>]" if info.get("classpath") else "") + \
                ", interrupt=False)"
        elif b == "py4jni":
            where = ("embedded in its worker, JavaGateway(classpath=<fixtures jar>), otherwise "
                     "py4jni's defaults" if info.get("classpath") else
                     "embedded in its worker, JavaGateway() with py4jni's defaults")
        else:
            srv = (meta.get("servers") or {}).get(b)
            where = f"own GatewayServer: `{_short(srv['command'])}`" if srv else "GatewayServer"
        detail = (f"{info.get('package_version', '?')} | {jvm}; GC {info.get('gc', '?')} | {where}"
                  if st["status"] == "ok" else f"{st['status']}: {st.get('reason')} | - | -")
        rows.append([LABEL[b]] + detail.split(" | ", 2))
    fl = meta.get("floor")
    if fl:
        info = fl.get("info") or {}
        rows.append([LABEL["floor"], "perf/floor.c",
                     f"{info.get('vm_name')}, {info.get('java_version')}; GC {info.get('gc')}",
                     f"dlopen({_short(info.get('libjvm', '?'))}), options: -Xrs"]
                    if fl["status"] == "ok" else
                    [LABEL["floor"], f"{fl['status']}: {fl.get('reason')}", "-", "-"])
    w(_table(["backend", "version", "JVM; garbage collector", "where the JVM runs"], rows))
    fx = meta.get("fixtures")
    if fx:
        w("\nJava test fixtures (tests/java/org/py4jni/fixtures, for the CB scenarios): " +
          (f"`{_short(fx['jar'])}`, on the class path of every JVM of the run (embedded ones "
           "and both GatewayServers)" if fx.get("jar") else f"unavailable: {fx.get('reason')}")
          + ".\n")
    if meta.get("restarts"):
        w("\nWorker restarts: " + ", ".join(f"{b} x{n}" for b, n in meta["restarts"].items()) + "\n")

    for key, title, sids in GROUPS:
        notes = Notes()
        has_x6 = any(view.cell("X6", b) for b in view.backends)
        extra = x6_rows(view) if key == "X6" and has_x6 else None
        t = timed_table(view, sids, notes, extra)
        if not t:
            continue
        w(f"\n## {title}\n\n")
        if key == "X4":
            counts = ", ".join(f"{LABEL[b]} {view.cell('X4', b)['ops_per_unit']}"
                               for b in view.backends
                               if view.cell("X4", b) and view.cell("X4", b).get("ops_per_unit"))
            if counts:
                w(f"Callbacks per sort: {counts} (py4j hands `other` back as a Java reference, so "
                  "each compareTo also reads other.hashCode() through one more call and callback).\n\n")
        if key == "X6":
            w("First row: wall time of a batch / calls (throughput). p50/p99: per-call latency "
              "percentiles within each round, median [min-max] over rounds.\n\n")
        if key == "CB":
            w(cb_preamble(view))
        if key == "ARR":
            w(arr_preamble(view))
        w(t + notes.render())

    bw = bandwidth(view)
    if any(bw.values()):
        w("\n## Bandwidth (BW), MB/s (10^6 bytes), from the X7/X8 rounds\n\n")
        cols = [b for b in view.backends] + (["floor"] if any("floor" in r for r in bw.values()) else [])
        header = ["direction", "size"] + [LABEL[b] for b in cols]
        ratio_cols = [(a, b, t) for a, b, t in RATIOS if a in view.backends and b in view.backends]
        header += [t.replace("/", " vs ") + " (speed)" for _, _, t in ratio_cols]
        rows = []
        for (direction, size), row in bw.items():
            r = [direction, size]
            for b in cols:
                if b in row:
                    med, lo, hi = row[b]
                    r.append(f"{_sig(med / 1e6)} [{_sig(lo / 1e6)}-{_sig(hi / 1e6)}]")
                else:
                    sid = f"{'X7' if direction == 'recv' else 'X8'}-{size}"
                    r.append("failed" if view.failed(sid, b) else "-")
            for a, b, _ in ratio_cols:
                r.append(fmt_ratio(row[a][0] / row[b][0]) if a in row and b in row else "-")
            rows.append(r)
        w(_table(header, rows))

    cold = cold_summary(view)
    if results.get("cold"):
        notes = Notes()
        w("\n## Cold start (COLD)\n\n")
        w("COLD-full: from spawning a fresh `python` to the first Java call returned "
          "(py4j-API socket backends: launch_gateway spawns java and reads its port, then "
          "JavaGateway + first call; JPype: import, startJVM, JClass('java.lang.System') + "
          "first call). COLD-handshake: server already up, JavaGateway + first "
          "call. First call and warm median are timed inside the cold process (warm: median of "
          "batches of 100 calls after 300 calls); COLD-ratio = first / warm.\n\n")
        header = ["figure"] + [LABEL[b] for b in view.backends]
        rows = []
        for key, label, kind in (("full", "COLD-full", "full"), ("handshake", "COLD-handshake", "handshake"),
                                 ("first", "first call", "full"), ("warm", "warm median", "full"),
                                 ("ratio", "COLD-ratio (first/warm)", "full")):
            r = [label]
            for b in view.backends:
                s = cold.get(b, {})
                if key in s:
                    med, lo, hi = s[key]
                    r.append(f"{_sig(med, 2)}x [{_sig(lo, 2)}-{_sig(hi, 2)}]" if key == "ratio"
                             else fmt_time(med, lo, hi))
                else:
                    e = view.cold(b, kind)
                    r.append(status_text(e["status"], e.get("reason"), notes)
                             if e and e.get("status") not in ("ok", None) else "-")
            rows.append(r)
        r = ["first call / rounds' M1 median"]
        for b in view.backends:
            s, m1 = cold.get(b, {}), view.med("M1", b)
            r.append(fmt_ratio(s["first"][0] / m1) if "first" in s and m1 else "-")
        rows.append(r)
        reps = {b: len((view.cold(b, "full") or {}).get("reps", [])) for b in view.backends}
        w(_table(header, rows) + notes.render())
        w(f"\nCold processes per backend: {', '.join(f'{LABEL[b]} {n}' for b, n in reps.items())}.\n")
        bd = cold_breakdown(view)
        if bd:
            w("\nCOLD-full in phases (median of each phase over the cold processes; time "
              "stamps printed by the child, monotonic clock): python start = spawn to the "
              "script's first line; import = the package; py4jni in-process: JVM create = "
              "JNI_CreateJavaVM as HotSpot times it (`-Xlog:startuptime`, \"Create VM\"), "
              "helper init = the rest of JavaGateway() (libjvm load, py4jni's classes and "
              "helper); other backends: bridge up = startJVM, or launch_gateway + "
              "JavaGateway; first call; rest = clock reads and gaps.\n\n")
            order = ["python start", "import", "bridge up", "JVM create", "helper init",
                     "first call", "rest"]
            seen = {k for b in bd for k in bd[b] if k != "total"}
            phases = [k for k in order if k in seen] + sorted(seen - set(order))
            rows = [[ph] + [fmt_time(bd[b][ph]) if ph in bd.get(b, {}) else "-"
                            for b in view.backends] for ph in phases]
            rows.append(["COLD-full (median)"] + [fmt_time(bd[b]["total"]) if b in bd else "-"
                                                  for b in view.backends])
            w(_table(["phase"] + [LABEL[b] for b in view.backends], rows))

    if meta.get("floor"):
        notes = Notes()
        w("\n## FLOOR: the same work from C through JNI alone (perf/floor.c)\n\n")
        w("M1: CallStaticLongMethod; M2a: CallObjectMethodA(append(int)) + DeleteLocalRef; "
          "M2b: NewStringUTF + CallObjectMethodA(append(String)) + DeleteLocalRef x2; M4: "
          "NewObjectA + NewGlobalRef + DeleteLocalRef + DeleteGlobalRef; LAT: a String of N "
          "ASCII chars (NewString under 512, else a byte[] + new String(b, ISO_8859_1)) + "
          "Objects.hashCode; X7: bb.array() + malloc + GetByteArrayRegion; X8: "
          "NewByteArray + SetByteArrayRegion + write(byte[],int,int) + reset(). Backend columns: "
          "their median as a multiple of the floor.\n\n")
        header = ["scenario", "C/JNI floor"] + [f"{LABEL[b]} / floor" for b in view.backends]
        rows = []
        for sid in FLOOR_ROWS:
            c = view.cell(sid, "floor")
            if c is None:
                continue
            r = [sid, _fig(c) if c["status"] == "ok" and c.get("per_op_s")
                 else status_text(c["status"], c.get("reason"), notes)]
            f = view.med(sid, "floor")
            for b in view.backends:
                x = view.med(sid, b)
                r.append(fmt_ratio(x / f) if x and f else "-")
            rows.append(r)
        if not rows:
            rows.append(["-", status_text(meta["floor"]["status"], meta["floor"].get("reason"), notes)]
                        + ["-"] * len(view.backends))
        w(_table(header, rows) + notes.render())

    if results.get("mem"):
        w(f"\n## Memory (MEM): {PRESET_OBJECTS(meta)} StringBuilder() created and dropped\n\n")
        w("In the long-lived worker, after the rounds: warm-up passes of the same size until "
          "RSS settles (change under 2 MiB, at most 8), then the RSS of the whole process "
          "(Python + JVM) before and after one measured pass.\n\n")
        notes = Notes()
        rows = []
        for b in view.backends:
            e = results["mem"].get(b)
            if not e:
                continue
            if e.get("status") == "ok":
                d = e["rss_after"] - e["rss_before"]
                h0, h1 = e.get("heap_committed_before"), e.get("heap_committed_after")
                heap = f"{(h1 - h0) / 2**20:+.1f} MiB" if h0 is not None and h1 is not None else "?"
                rows.append([LABEL[b], f"{e['rss_before'] / 2**20:.0f} MiB",
                             f"{e['rss_after'] / 2**20:.0f} MiB", f"{d / 2**20:+.1f} MiB", heap,
                             str(e.get("warm_passes", "?")),
                             fmt_time(e["measured_s"] / e["objects"])])
            else:
                rows.append([LABEL[b], status_text(e.get("status"), e.get("reason"), notes)]
                            + ["-"] * 5)
        w(_table(["backend", "RSS before", "RSS after", "RSS change", "Java heap committed change",
                  "warm-up passes", "time per object"], rows) + notes.render())

    w("\n## Targets (perf/README.md), py4jni in-process unless stated\n\n")
    w(_table(["target", "verdict", "figures"], [[t, v_, f] for t, v_, f in targets(view)]))

    if charts:
        w("\n## Charts\n\n")
        for name, what in charts:
            w(f"![{what}]({name})\n\n")

    few = [(c["scenario"], c["backend"], c["per_op_s"]["n"]) for c in results["cells"]
           if c.get("per_op_s") and c["per_op_s"]["n"] < meta["preset"]["rounds"]]
    w("\n## Scenario definitions\n\n")
    w("The timed code of each scenario (`op`, one unit of work; setup is untimed). py4j API: "
      "shared by py4jni, py4jni socket and py4j. Full setup code is in results.json and "
      "perf/scenarios.py.\n\n")
    rows = []
    for sid, d in results["scenarios"].items():
        code = d.get("code", {})
        def op(f):
            c = code.get(f, {})
            if c.get("na"):
                return "n/a: " + c["na"]
            return "`" + _one_line(c.get("op", "")) + "`"
        rows.append([sid, d["work"], op("py4j"), op("jpype"), d.get("note") or ""])
    w(_table(["id", "work", "py4j API", "JPype", "note"], rows))
    if few:
        w("\nCells that ran in fewer rounds (their batches are long): " +
          ", ".join(f"{s} {LABEL.get(b, b)} ({n})" for s, b, n in few) + ".\n")
    path = os.path.join(out, "report.md")
    with open(path, "w") as f:
        f.write("".join(L))
    return path


def _one_line(code):
    """Python statements on one line, for a table cell."""
    parts = [l.strip() for l in code.splitlines() if l.strip()]
    return " ".join(p if p.endswith(":") else p + ";" for p in parts).rstrip(";")


def _short(text):
    """Paths shortened for the report: the repo root and the home directory dropped."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return str(text).replace(root + os.sep, "").replace(os.path.expanduser("~"), "~")


def PRESET_OBJECTS(meta):
    return f"{meta['preset'].get('mem_objects', 0):,}"


# ---- charts -------------------------------------------------------------------------------

COLORS = {"py4jni": "#d62728", "py4jni-socket": "#ff7f0e", "py4j": "#1f77b4",
          "jpype": "#2ca02c", "floor": "#555555"}


def write_charts(results, out):
    """Writes the PNGs; returns [(file name, title)]."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    view = View(results)
    made = []

    def save(fig, name, title):
        fig.tight_layout()
        fig.savefig(os.path.join(out, name), dpi=110)
        plt.close(fig)
        made.append((name, title))

    # latency by string size
    sizes = [16, 256, 4096, 16384, 65536]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    drawn = False
    for b in view.backends:
        pts = [(n, view.cell(f"LAT-{n}", b)) for n in sizes]
        pts = [(n, c["per_op_s"]) for n, c in pts if c and c.get("per_op_s")]
        if not pts:
            if any(view.failed(f"LAT-{n}", b) for n in sizes):  # in the legend all the same
                ax.plot([], [], marker="x", linestyle="none", color=COLORS[b],
                        label=_label_failed(view, b, [f"LAT-{n}" for n in sizes]))
            continue
        xs = [n for n, _ in pts]
        ys = [p["median"] * 1e6 for _, p in pts]
        lo = [(p["median"] - p["min"]) * 1e6 for _, p in pts]
        hi = [(p["max"] - p["median"]) * 1e6 for _, p in pts]
        ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, color=COLORS[b],
                    label=_label_failed(view, b, [f"LAT-{n}" for n in sizes]))
        drawn = True
    if drawn:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("string argument size (bytes)")
        ax.set_ylabel("us per call (median, min-max)")
        ax.set_title("LAT: Objects.hashCode(s) latency by argument size")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        save(fig, "latency_by_size.png", "LAT: latency by string-argument size")
    else:
        plt.close(fig)

    # bandwidth
    bw = bandwidth(view)
    if any(bw.values()):
        fig, axes = plt.subplots(1, 2, figsize=(10, 4.5), sharey=True)
        for ax, direction, title in ((axes[0], "recv", "X7 recv: Java byte[] -> Python bytes"),
                                     (axes[1], "send", "X8 send: Python bytes -> Java byte[]")):
            for b in view.backends + ["floor"]:
                pts = [(BYTES[s], bw[(direction, s)][b]) for s in BYTES if b in bw[(direction, s)]]
                sids = [f"{'X7' if direction == 'recv' else 'X8'}-{s}" for s in BYTES]
                if not pts:
                    if any(view.failed(sid, b) for sid in sids):
                        ax.plot([], [], marker="x", linestyle="none", color=COLORS[b],
                                label=_label_failed(view, b, sids))
                    continue
                xs = [n for n, _ in pts]
                ys = [m / 1e6 for _, (m, _, _) in pts]
                lo = [(m - l) / 1e6 for _, (m, l, _) in pts]
                hi = [(h - m) / 1e6 for _, (m, _, h) in pts]
                ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3,
                            label=_label_failed(view, b, sids),
                            color=COLORS[b], linestyle="--" if b == "floor" else "-")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("bytes per call (log)")
            ax.set_title(title)
            _cache_regions(ax, view.meta["machine"].get("caches") or {})
            ax.grid(True, which="both", alpha=0.3)
        axes[0].set_ylabel("MB/s (10^6 bytes)")
        axes[0].legend(fontsize=8)
        axes[1].legend(fontsize=8)
        save(fig, "bandwidth.png", "BW: bandwidth by size, each direction")

    # cold start
    cold = cold_summary(view)
    def cold_failed(b, kind):
        e = view.cold(b, kind)
        return bool(e) and e.get("status") in FAILED_STATUSES and e.get("status") != "pending"

    # a backend whose cold start failed keeps its place, marked "failed"
    bars = [(b, cold.get(b, {})) for b in view.backends
            if cold.get(b, {}).get("full") or cold_failed(b, "full")]
    if bars:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        xs = range(len(bars))
        for i, (b, s) in enumerate(bars):
            for kind, dx in (("full", -0.2), ("handshake", 0.2)):
                if kind in s:
                    med, lo, hi = s[kind]
                    ax.bar(i + dx, med * 1e3, 0.4, yerr=[[(med - lo) * 1e3], [(hi - med) * 1e3]],
                           capsize=4, color=COLORS[b], **({} if kind == "full" else
                                                          {"alpha": 0.45, "hatch": "//"}))
                    ax.text(i + dx, hi * 1e3, f"{med * 1e3:.0f}" if kind == "full"
                            else f"{med * 1e3:.1f}", ha="center", va="bottom", fontsize=8)
                elif cold_failed(b, kind):
                    ax.text(i + dx, 0, "failed", ha="center", va="bottom", fontsize=8,
                            color="#d00000", rotation=90)
        from matplotlib.patches import Patch
        ax.legend(handles=[Patch(facecolor="#888888", label="COLD-full"),
                           Patch(facecolor="#888888", alpha=0.45, hatch="//",
                                 label="COLD-handshake (server up)")])
        ax.set_xticks(list(xs))
        ax.set_xticklabels([LABEL[b] for b, _ in bars])
        ax.set_ylabel("ms (median, min-max)")
        ax.set_title("Cold start: fresh python -> first Java call returned")
        ax.grid(True, axis="y", alpha=0.3)
        save(fig, "cold_start.png", "COLD: cold start per backend")

    # per-op latency per scenario, log scale
    # Every scenario of the run has a row; a failed cell is an "x" at the left edge and
    # its row label says which backends failed.
    sids = [s for s in results["scenarios"]
            if any(view.med(s, b) or view.failed(s, b) for b in view.backends + ["floor"])]
    if sids:
        fig, ax = plt.subplots(figsize=(9, 0.32 * len(sids) + 1.5))
        parts = view.backends + (["floor"] if any(view.med(s, "floor") for s in sids) else [])
        for k, b in enumerate(parts):
            ys, xs, lo, hi = [], [], [], []
            for i, s in enumerate(sids):
                c = view.cell(s, b)
                if c and c.get("per_op_s"):
                    p = c["per_op_s"]
                    ys.append(i + (k - (len(parts) - 1) / 2) * 0.15)
                    xs.append(p["median"] * 1e6)
                    lo.append((p["median"] - p["min"]) * 1e6)
                    hi.append((p["max"] - p["median"]) * 1e6)
            if xs:
                ax.errorbar(xs, ys, xerr=[lo, hi], fmt="o", ms=4, capsize=2, label=LABEL[b],
                            color=COLORS[b])
        meds = [view.med(s, b) for s in sids for b in parts if view.med(s, b)]
        left = min(meds) * 1e6 / 4 if meds else 1.0
        failed_by_sid = {s: [b for b in view.backends + ["floor"] if view.failed(s, b)]
                         for s in sids}
        for k, b in enumerate(view.backends + ["floor"]):
            ys = [i + (k - (len(parts) - 1) / 2) * 0.15 for i, s in enumerate(sids)
                  if b in failed_by_sid[s]]
            if ys:
                ax.plot([left] * len(ys), ys, "x", ms=7, color=COLORS[b],
                        label=f"{LABEL[b]}: failed")
        ax.set_yticks(range(len(sids)))
        labels = [f"{s} (per {results['scenarios'][s]['op_name']})" +
                  (" FAILED: " + ", ".join(LABEL[b] for b in failed_by_sid[s])
                   if failed_by_sid[s] else "") for s in sids]
        ax.set_yticklabels(labels, fontsize=8)
        for tick, s in zip(ax.get_yticklabels(), sids):
            if failed_by_sid[s]:
                tick.set_color("#d00000")
        ax.invert_yaxis()
        ax.set_xscale("log")
        if meds:
            ax.set_xlim(left=left / 2)
        ax.set_xlabel("us per operation (median, min-max), log scale")
        ax.set_title("Time per operation, every timed scenario")
        ax.grid(True, axis="x", which="both", alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
        save(fig, "per_op_latency.png", "Time per operation by scenario (log scale)")
    return made


def _label_failed(view, backend, sids):
    """A chart legend's label for backend: its name, and the scenarios among sids whose
    cells failed (they have no point)."""
    bad = [s for s in sids if view.failed(s, backend)]
    return LABEL[backend] + (f" (failed: {', '.join(bad)})" if bad else "")


def _cache_regions(ax, caches):
    """Shades the sizes that fit each cache level of the measuring machine (L1d, L2, L3
    from sysfs) and the sizes beyond the last one, "memory": copies there run at memory
    bandwidth. A level larger than the chart's range labels the rest of it."""
    lo = min(BYTES.values()) / 2
    hi = max(BYTES.values()) * 2
    ax.set_xlim(lo, hi)
    levels = sorted(caches.items(), key=lambda kv: kv[1])
    if not levels:
        return
    shades = ["#e8f0fe", "#f3e8fd", "#fdf3e8", "#eeeeee"]
    start = lo
    for i, (name, size) in enumerate(levels + [("memory", None)]):
        end = hi if size is None else min(size, hi)
        if end > start:
            ax.axvspan(start, end, color=shades[i % len(shades)], alpha=0.7, zorder=0)
            ax.text((start * end) ** 0.5, 0.98, name, transform=ax.get_xaxis_transform(),
                    fontsize=7, va="top", ha="center", color="#555555")
        if size is None or size >= hi:
            break
        start = size


def derived(results):
    view = View(results)
    return {
        "bandwidth_bytes_per_s": {f"{d}-{s}": {b: {"median": m, "min": lo, "max": hi}
                                               for b, (m, lo, hi) in row.items()}
                                  for (d, s), row in bandwidth(view).items()},
        "cold": {b: {k: {"median": v[0], "min": v[1], "max": v[2]} for k, v in s.items()}
                 for b, s in cold_summary(view).items()},
        "targets": [{"target": t, "verdict": v, "figures": f} for t, v, f in targets(view)],
    }


def write_all(results, out, charts=True):
    """Writes results.json, the charts and report.md into out; returns their paths."""
    os.makedirs(out, exist_ok=True)
    results["derived"] = derived(results)
    paths = [os.path.join(out, "results.json")]
    with open(paths[0], "w") as f:
        json.dump(results, f, indent=1, default=str)
    made = []
    if charts:
        try:
            made = write_charts(results, out)
        except ImportError as e:
            results["meta"]["charts_error"] = f"no charts: {e}"
            sys.stderr.write(f"report: no charts ({e})\n")
    paths += [os.path.join(out, n) for n, _ in made]
    paths.append(write_report(results, out, made))
    return paths


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write("usage: report.py RESULTS.json\n")
        sys.exit(2)
    with open(sys.argv[1]) as f:
        res = json.load(f)
    for p in write_all(res, os.path.dirname(os.path.abspath(sys.argv[1]))):
        print(p)
