"""The harness of the framework benchmarks (perf/spark_bench.py, perf/flink_bench.py):
stock framework against the framework on py4jni in-process, each backend's driver in a
worker process of its own.

Worker side (``serve``): the worker starts its session, answers one JSON line per
request on its original stdout (the seconds one run of the named scenario took, or the
error it raised) and sends everything else it prints (the JVM's output, in-process) to
stderr. Coordinator side: ``Worker`` sends scenario names and reads the answers with a
timeout; ``cold_start`` times a fresh process to its first answer; ``interleave`` runs
round by round, each scenario once on each backend in turn (alternating the order), after
one unmeasured warm-up run per scenario and worker. A scenario that raises, a worker that
dies or does not answer in time is a failure of that cell (``Failures``): the cell is
recorded, a dead worker is started again for the rest of the run, and the run ends with
exit status 1 and a "Failed" table at the top of its report (``failed_section``).
"""
from __future__ import annotations

import datetime
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
BACKENDS = ("stock", "py4jni")
START_TIMEOUT_S = 900.0  # a session start (a loaded 2-core machine took 75 s)
FIRST_RUN_TIMEOUT_S = 900.0  # a scenario's warm-up run (it may build its input)
# A measured run longer than this many times the scenario's slowest run so far (and
# than MIN_TIMEOUT_S) has timed out.
TIMEOUT_FACTOR = 10.0
MIN_TIMEOUT_S = 120.0


# ---------------------------------------------------------------- worker side

def _injected(backend: str) -> dict[str, str]:
    """Faults to inject, from ``P4J_PERF_INJECT`` (``kind:scenario:backend,...``, kind
    crash, hang or error; as perf/bench.py's): {scenario: kind} for ``backend``."""
    out = {}
    for item in filter(None, os.environ.get("P4J_PERF_INJECT", "").split(",")):
        kind, name, where = item.split(":")
        if where == backend:
            out[name] = kind
    return out


def _inject(kind: str) -> None:
    if kind == "crash":
        os._exit(3)
    if kind == "hang":
        time.sleep(10**6)
    raise RuntimeError("injected error")


def serve(backend: str, start: Callable[[], Any],
          scenarios: Callable[[Any], dict[str, Callable[[], Any]]], cold: bool,
          stop: Callable[[Any], None] | None = None) -> None:
    """A worker's main: ``start()`` makes the session; with ``cold`` it answers (the
    seconds ``start()`` took; the coordinator times the process itself) and returns.
    Otherwise it answers ``{"ready": true}``, then per line of stdin a scenario
    name of ``scenarios(session)`` it runs once, answering ``{"seconds": s}`` or
    ``{"error": text}``; ``quit`` ends the loop, then ``stop(session)``. Faults named
    in ``P4J_PERF_INJECT`` for ``backend`` replace their scenario's run (tests)."""
    t0 = time.perf_counter()
    faults = _injected(backend)
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    session = start()
    if cold:
        out.write(json.dumps({"seconds": time.perf_counter() - t0}) + "\n")
        return
    runs = scenarios(session)
    out.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        name = line.strip()
        if name == "quit":
            break
        t = time.perf_counter()
        try:
            if name in faults:
                _inject(faults[name])
            runs[name]()
        except Exception as exc:  # the cell fails; the worker goes on
            traceback.print_exc()
            out.write(json.dumps({"error": f"{type(exc).__name__}: {exc}"[:400]}) + "\n")
            continue
        out.write(json.dumps({"seconds": time.perf_counter() - t}) + "\n")
    if stop is not None:
        stop(session)


# ---------------------------------------------------------------- coordinator side

class CellFailed(Exception):
    """A figure that could not be measured: ``status`` is "error" (the scenario raised),
    "crashed" (the worker died) or "timed out" (no answer in time; the worker was
    killed); ``reason`` says what happened."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(f"{status}: {reason}")
        self.status, self.reason = status, reason


def popen(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    """A worker process: requests on its stdin, answers on its stdout, its stderr to a
    temporary file (whose end a failure's reason quotes)."""
    err = tempfile.TemporaryFile()
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                            text=True, env=env)
    proc.stderr_file = err  # type: ignore[attr-defined]
    return proc


class _Answers:
    """The answer lines of one process, read by a thread, so that waits can time out."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def next(self, timeout: float, what: str) -> dict:
        """The next answer; CellFailed when the process ends first or ``timeout`` passes
        (the process is then killed)."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            self.proc.kill()
            self.proc.wait()
            raise CellFailed("timed out", f"no answer to {what} within {timeout:.0f} s"
                             ) from None
        if line is None:
            rc = self.proc.wait()
            raise CellFailed("crashed", f"the worker exited (status {rc}) during {what}"
                             f"{_stderr_tail(self.proc)}")
        if not line.startswith("{"):  # not an answer: something printed to the pipe
            return self.next(timeout, what)
        answer = json.loads(line)
        if "error" in answer:
            raise CellFailed("error", answer["error"])
        return answer


def _stderr_tail(proc: subprocess.Popen) -> str:
    """``; its stderr's last line: <line>``, or ""."""
    err = getattr(proc, "stderr_file", None)
    if err is None:
        return ""
    try:
        err.seek(max(err.seek(0, 2) - 4096, 0))
        lines = [ln.strip() for ln in err.read().decode("utf-8", "replace").splitlines()
                 if ln.strip()]
    except OSError:
        return ""
    return f"; its stderr's last line: {lines[-1][:300]}" if lines else ""


def cold_start(spawn: Callable[[], subprocess.Popen],
               timeout: float = START_TIMEOUT_S) -> float:
    """Seconds from a fresh worker's spawn (``spawn()``, a cold worker) to its answer;
    CellFailed when it dies or does not answer within ``timeout``."""
    t0 = time.perf_counter()
    proc = spawn()
    try:
        _Answers(proc).next(timeout, "the session start")
        seconds = time.perf_counter() - t0
        proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return seconds


class Worker:
    """One backend's long-lived worker (``spawn()`` starts its process): ``run(name)``
    answers the seconds of one run of a scenario, after an unmeasured warm-up run of it
    the first time this process runs it. A worker that dies or times out is started
    again on the next request."""

    # after this many starts in a row that failed, the worker is not started again
    MAX_FAILED_STARTS = 3

    def __init__(self, backend: str, spawn: Callable[[], subprocess.Popen]) -> None:
        self.backend, self._spawn = backend, spawn
        self.proc: subprocess.Popen | None = None
        self.warm: set[str] = set()
        self.starts = 0
        self.failed_starts: list[str] = []

    def start(self) -> None:
        """Starts the process and waits for its session (CellFailed if it fails, or
        at once after MAX_FAILED_STARTS failed starts in a row)."""
        if len(self.failed_starts) >= self.MAX_FAILED_STARTS:
            raise CellFailed("failed", f"the worker did not start in {self.MAX_FAILED_STARTS}"
                             f" tries (first: {self.failed_starts[0]})")
        self.starts += 1
        self.warm = set()
        self.proc = self._spawn()
        self._answers = _Answers(self.proc)
        try:
            self._answers.next(START_TIMEOUT_S, "the session start")
        except CellFailed as exc:
            self.proc = None
            self.failed_starts.append(exc.reason)
            raise
        self.failed_starts = []

    def _ask(self, name: str, timeout: float) -> float:
        if self.proc is None:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(name + "\n")
            self.proc.stdin.flush()
            return float(self._answers.next(timeout, name)["seconds"])
        except BrokenPipeError:
            rc = self.proc.wait()
            self.proc = None
            raise CellFailed("crashed", f"the worker exited (status {rc}) before {name}")
        except CellFailed as exc:
            if exc.status != "error":
                self.proc = None
            raise

    def warm_up(self, name: str) -> None:
        """The unmeasured first run of ``name`` in this process (once per process)."""
        if name not in self.warm:
            self._ask(name, FIRST_RUN_TIMEOUT_S)
            self.warm.add(name)

    def run(self, name: str, timeout: float, warm_up: bool = True) -> float:
        """Seconds of one measured run of ``name`` (warmed up first if needed, unless
        not ``warm_up``)."""
        if warm_up:
            self.warm_up(name)
        return self._ask(name, timeout)

    def quit(self) -> None:
        """Ends the worker (``quit``, then a kill if it does not exit in 120 s)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            assert proc.stdin is not None
            proc.stdin.write("quit\n")
            proc.stdin.flush()
            proc.wait(timeout=120)
        except (BrokenPipeError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()


class Failures:
    """The figures of a run that failed: (what, backend) -> status, reason and how many
    times. Any entry makes the run fail (exit status 1)."""

    def __init__(self, entries: list[dict] | None = None) -> None:
        self.entries: list[dict] = list(entries or [])

    def add(self, what: str, backend: str, status: str, reason: str, log=None) -> None:
        for e in self.entries:
            if e["what"] == what and e["backend"] == backend:
                e["times"] += 1
                return
        self.entries.append({"what": what, "backend": backend, "status": status,
                             "reason": reason, "times": 1})
        if log:
            log(f"FAILED {what} ({backend}): {status}: {reason}")

    def __bool__(self) -> bool:
        return bool(self.entries)


def interleave(workers: dict[str, Worker], scenarios: list[str], rounds: dict[str, int],
               failures: Failures, log: Callable[[str], None],
               cold_first: frozenset[str] = frozenset()) -> dict:
    """{scenario: {backend: [seconds per round]}}: each worker warms each scenario up
    once (except those of ``cold_first``, whose first measured run is their first),
    then round by round every scenario with rounds left runs once on each backend, the
    backends' order alternating; failed runs are left out and added to ``failures``."""
    results: dict = {s: {b: [] for b in workers} for s in scenarios}
    backends = list(workers)

    def one(name: str, b: str, measured: bool) -> None:
        w = workers[b]
        slowest = max((x for per in results[name].values() for x in per), default=None)
        timeout = FIRST_RUN_TIMEOUT_S if slowest is None else max(
            MIN_TIMEOUT_S, TIMEOUT_FACTOR * slowest)
        try:
            if measured:
                results[name][b].append(w.run(name, timeout, name not in cold_first))
            else:
                w.warm_up(name)
        except CellFailed as exc:
            failures.add(name, b, exc.status, exc.reason, log)

    for name in scenarios:
        for b in backends:
            if name not in cold_first:
                one(name, b, measured=False)
    for r in range(max(rounds.values(), default=0)):
        for name in scenarios:
            if r >= rounds[name]:
                continue
            order = backends if (r + len(name)) % 2 == 0 else backends[::-1]
            for b in order:
                one(name, b, measured=True)
        log(f"round {r + 1}/{max(rounds.values())} done")
    return results


def measure(spawn: Callable[[str, bool], subprocess.Popen], cold_name: str, cold_reps: int,
            scenarios: list[str], rounds: dict[str, int], failures: Failures,
            log: Callable[[str], None], cold_first: frozenset[str] = frozenset()) -> dict:
    """A run's figures: ``cold_reps`` cold starts per backend (``spawn(backend, True)``,
    the backends' order alternating), then one long-lived worker per backend
    (``spawn(backend, False)``, one session starting at a time) through ``interleave``
    (``cold_first``: the scenarios measured without a warm-up run).
    {"cold": {backend: [s]}, "rounds": {scenario: {backend: [s]}}, "restarts":
    {backend: n}}; failed figures go to ``failures`` (the cold ones as ``cold_name``)."""
    results: dict = {"cold": {b: [] for b in BACKENDS}}
    for rep in range(cold_reps):
        for b in (BACKENDS if rep % 2 == 0 else BACKENDS[::-1]):
            try:
                results["cold"][b].append(cold_start(lambda: spawn(b, True)))
                log(f"cold {b} rep {rep + 1}/{cold_reps}: {results['cold'][b][-1]:.2f} s")
            except CellFailed as exc:
                failures.add(cold_name, b, exc.status, exc.reason, log)
    workers = {b: Worker(b, lambda b=b: spawn(b, False)) for b in BACKENDS}
    for b, w in workers.items():
        try:
            w.start()
            log(f"worker {b} ready")
        except CellFailed as exc:
            failures.add("worker session", b, exc.status, exc.reason, log)
    results["rounds"] = interleave(workers, scenarios, rounds, failures, log, cold_first)
    for w in workers.values():
        w.quit()
    results["restarts"] = {b: max(w.starts - 1, 0) for b, w in workers.items()}
    return results


# ---------------------------------------------------------------- reports

def fmt(seconds: float) -> str:
    """A duration as the report prints it (s, ms or us)."""
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} us"


def median_rows(series: dict[str, dict[str, list[float]]], what: Callable[[str], str]
                ) -> tuple[list[tuple[str, ...]], dict[tuple[str, str], float]]:
    """Table rows (scenario, what, one "median (min-max)" per backend, stock / py4jni)
    and the medians; a cell without figures says "failed"."""
    rows, meds = [], {}
    for name, per in series.items():
        cells = []
        for b in BACKENDS:
            xs = per.get(b) or []
            if xs:
                meds[(name, b)] = statistics.median(xs)
                cells.append(f"{fmt(meds[(name, b)])} ({fmt(min(xs))}-{fmt(max(xs))})")
            else:
                cells.append("failed")
        ratio = (f"{meds[(name, 'stock')] / meds[(name, 'py4jni')]:.1f}x"
                 if (name, "stock") in meds and (name, "py4jni") in meds else "-")
        rows.append((name, what(name), *cells, ratio))
    return rows, meds


def table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    """A Markdown table's lines."""
    return (["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            + ["| " + " | ".join(r) + " |" for r in rows])


def failed_section(failures: list[dict], program: str) -> list[str]:
    """The report's "Failed" table (first after the header) when figures failed."""
    if not failures:
        return []
    return [f"## Failed: {len(failures)} of this run's figures are missing or incomplete", "",
            f"A figure that should have been measured and was not (or not in every round); "
            f"{program} exited with status 1. Their rows below lack those rounds or say "
            "\"failed\".", "",
            *table(("figure", "backend", "status", "reason", "times"),
                   [(e["what"], e["backend"], e["status"], e["reason"].replace("|", "/"),
                     str(e["times"])) for e in failures]), ""]


def write_report(out_dir: str, lines: list[str], framework: str, chart: str,
                 names: list[str], meds: dict[tuple[str, str], float],
                 figsize: tuple[float, float], rotation: int) -> str:
    """report.md of ``lines`` (a link to ``chart`` at its end) and the chart of the
    medians (``bar_chart``), in ``out_dir``; returns the report's text."""
    text = "\n".join([*lines, "", f"![medians]({chart})", ""])
    with open(os.path.join(out_dir, "report.md"), "w") as fh:
        fh.write(text)
    bar_chart(os.path.join(out_dir, chart), names, meds,
              {"stock": f"stock {framework}", "py4jni": "py4jni in-process"},
              f"{framework} driver: stock vs py4jni in-process (lower is better)", figsize,
              rotation)
    return text


def load_average() -> str:
    """The machine's load averages (1, 5, 15 minutes), as /proc/loadavg gives them."""
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


def bar_chart(path: str, names: list[str], meds: dict[tuple[str, str], float],
              labels: dict[str, str], title: str, figsize: tuple[float, float],
              rotation: int) -> None:
    """Medians per scenario and backend as bars (log scale; a failed cell has none)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=figsize)
    width = 0.4
    for i, b in enumerate(BACKENDS):
        ax.bar([x + (i - 0.5) * width for x in range(len(names))],
               [meds.get((n, b), 0.0) for n in names], width, label=labels[b])
    ax.set_yscale("log")
    ax.set_ylabel("seconds (median, log scale)")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=rotation, ha="right", fontsize=8)
    ax.legend()
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------- the run

def add_common_options(parser: Any, chart: str) -> None:
    """The options both benchmarks take: --out, and the worker's and redraw's."""
    import argparse
    parser.add_argument("--out", help="output directory")
    parser.add_argument("--worker", choices=BACKENDS, help=argparse.SUPPRESS)
    parser.add_argument("--cold", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--report", help=f"redraw report.md and {chart} from a results.json")


def worker_or_redraw(args: Any, worker: Callable[[str, bool], None],
                     report: Callable[[dict, str], str]) -> bool:
    """Runs this process as a worker (--worker) or redraws a report from a results.json
    (--report); False when the options ask for a run."""
    if args.worker:
        worker(args.worker, args.cold)
        return True
    if args.report:
        with open(args.report) as fh:
            print(report(json.load(fh), os.path.dirname(os.path.abspath(args.report))))
        return True
    return False


def out_dir(kind: str, quick: bool, given: str | None, info: dict) -> str:
    """perf/results/<date>-<machine>-<kind>[-quick] (or ``given``), made."""
    import bench  # machine naming shared with the main suite
    path = given or os.path.join(HERE, "results", f"{datetime.date.today().isoformat()}-"
                                 f"{bench.machine_slug(info)}-{kind}"
                                 + ("-quick" if quick else ""))
    os.makedirs(path, exist_ok=True)
    return path


def logger(prefix: str) -> Callable[[str], None]:
    """A progress log to stderr: ``<prefix> [  elapsed s] message``."""
    t0 = time.monotonic()

    def log(msg: str) -> None:
        print(f"{prefix} [{time.monotonic() - t0:6.0f} s] {msg}", file=sys.stderr, flush=True)
    return log


def command(script: str, argv: list[str]) -> str:
    """The command line a report shows (perf/run.sh's, when it launched this)."""
    return os.environ.get("P4J_PERF_LAUNCHER", f"python perf/{script}") + " " + " ".join(argv)
