"""COLD-full of py4jni in-process, in fine phases, over many fresh processes.

    python perf/cold_start.py [-n 20] [--config NAME=OPT,OPT ...] [--classpath CP]

(an OPT of the form ``env:VAR=VALUE`` sets the child's environment instead, e.g.
``--config nocds=env:PY4JNI_CDS=0``, or ``--config base=env:PYTHONPATH=<other build>/python``
to compare two builds of py4jni)

Each repetition spawns a fresh ``python`` that imports py4jni, makes a default
``JavaGateway()`` (with the config's ``jvm_options``) and calls
``System.currentTimeMillis()`` once, printing monotonic time stamps: its own, the JVM
start's (``_py4jni._start_times()``, taken in jni/jvm.c) and around the Python steps of
``JavaGateway()`` (the CDS decision, the client). Configs run interleaved (round
robin), so that the machine's drift falls on all of them alike; the table gives each
phase's median, lower quartile and [min-max] per config. Before measuring, one unmeasured start per
config makes the class-data-sharing archive (py4jni/_cds.py) and waits for it, as
bench.py does for COLD-full. The child's environment drops PYTHONDONTWRITEBYTECODE so
that py4jni's modules load from .pyc files, as an installed package does.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
IN_TREE = os.path.join(os.path.dirname(HERE), "build", "python")

CHILD = r"""
import time as __time
__ts = __time.monotonic_ns()
import py4jni
from py4jni import JavaGateway, _py4jni, _cds
__ti = __time.monotonic_ns()
__marks = {}
def __wrap(owner, name, label):
    fn = getattr(owner, name)
    def timed(*a, **k):
        __marks[label + "0"] = __time.monotonic_ns()
        try:
            return fn(*a, **k)
        finally:
            __marks[label + "1"] = __time.monotonic_ns()
    setattr(owner, name, timed)
__wrap(_cds, "options_for_start", "cds")
__wrap(_py4jni, "inproc_client", "client")
__tg = __time.monotonic_ns()
gateway = JavaGateway(jvm_options=OPTIONS, classpath=CLASSPATH)
__tr = __time.monotonic_ns()
gateway.jvm.java.lang.System.currentTimeMillis()
__t1 = __time.monotonic_ns()
import json
print("P4JCOLD " + json.dumps({"start": __ts, "import": __ti, "gw0": __tg, "ready": __tr,
                               "first": __t1, "jvm": getattr(_py4jni, "_start_times", dict)(), **__marks}),
      flush=True)
import os
os._exit(0)
"""

# (label, start stamp, end stamp): the phases, in order; stamps from the child's dict
# ("jvm." prefix: jni/jvm.c's) and "spawn" (the parent's, before starting the child).
PHASES = [
    ("python start", "spawn", "start"),
    ("import py4jni", "start", "import"),
    ("JavaGateway()", "gw0", "ready"),
    ("gateway: Python before the JVM", "gw0", "jvm.begin"),
    ("  of which the CDS decision", "cds0", "cds1"),
    ("find + dlopen libjvm", "jvm.begin", "jvm.libjvm_loaded"),
    ("creating thread start", "jvm.libjvm_loaded", "jvm.create_called"),
    ("JNI_CreateJavaVM", "jvm.create_called", "jvm.created"),
    ("class/method table", "jvm.created", "jvm.classes"),
    ("exit hook, thread join", "jvm.classes", "jvm.ready"),
    ("client (default view)", "jvm.ready", "client1"),
    ("gateway: Python after the client", "client1", "ready"),
    ("first call", "ready", "first"),
    ("COLD-full", "spawn", "first"),
]


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    try:
        import importlib.util
        found = importlib.util.find_spec("py4jni") is not None
    except (ImportError, ValueError):
        found = False
    if not found and os.path.isdir(IN_TREE):
        env["PYTHONPATH"] = IN_TREE + os.pathsep + env.get("PYTHONPATH", "")
    return env


def source(options: list[str], classpath: str | None) -> str:
    return CHILD.replace("OPTIONS", repr(options)).replace("CLASSPATH", repr(classpath))


def split_config(options: list[str], env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """A config's JVM options, and ``env`` with its ``env:VAR=VALUE`` settings."""
    env = dict(env)
    for o in options:
        if o.startswith("env:"):
            var, _, value = o[4:].partition("=")
            env[var] = value
    return [o for o in options if not o.startswith("env:")], env


CREATE_VM = re.compile(r"\[startuptime\] Create VM, ([0-9.]+) secs")


def run_once(options: list[str], classpath: str | None, env: dict[str, str],
             hotspot_log: bool = False) -> dict:
    """One fresh process; its stamps with "spawn" added (ns), and with ``hotspot_log``
    "hotspot_create": JNI_CreateJavaVM as HotSpot times it (-Xlog:startuptime)."""
    options, env = split_config(options, env)
    if hotspot_log:
        options = [*options, "-Xlog:startuptime"]
    spawn = time.monotonic_ns()
    r = subprocess.run([sys.executable, "-c", source(options, classpath)], env=env,
                       capture_output=True, timeout=120)
    line = next((ln for ln in r.stdout.decode(errors="replace").splitlines()
                 if ln.startswith("P4JCOLD ")), None)
    if r.returncode != 0 or line is None:
        raise RuntimeError(f"child failed ({r.returncode}): {r.stdout!r} {r.stderr!r}")
    data = json.loads(line[len("P4JCOLD "):])
    flat = {k: v for k, v in data.items() if k != "jvm"}
    flat.update({"jvm." + k: v for k, v in data["jvm"].items()})
    flat["spawn"] = spawn
    m = CREATE_VM.search(r.stdout.decode(errors="replace"))
    if m:
        flat["hotspot_create"] = int(float(m.group(1)) * 1e9)
    return flat


def phases(stamps: dict) -> dict[str, float]:
    """Each phase in ms (phases whose stamps are missing or 0 are left out)."""
    out = {}
    for label, a, b in PHASES:
        if stamps.get(a) and stamps.get(b):
            out[label] = (stamps[b] - stamps[a]) / 1e6
    create = stamps.get("hotspot_create")
    if create:  # perf/bench.py's split of bridge up (JavaGateway())
        out["JVM create (HotSpot's Create VM)"] = create / 1e6
        out["helper init (report's: JavaGateway() - Create VM)"] = (
            stamps["ready"] - stamps["gw0"] - create) / 1e6
    return out


def median(xs: list[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def quartile(xs: list[float]) -> float:
    """The lower quartile: on a shared machine, closer than the median to what a
    process costs when it is not preempted."""
    s = sorted(xs)
    return s[(len(s) - 1) // 4]


def prime(options: list[str], classpath: str | None, env: dict[str, str]) -> None:
    """One unmeasured start (it makes the CDS archive in the background), then waits up
    to 60 s for the archive."""
    run_once(options, classpath, env)
    env = split_config(options, env)[1]
    wait = ("import time\nfrom py4jni import _cds, _py4jni, helper_jar_path\n"
            "key = _cds.archive_key(helper_jar_path(), _py4jni.find_libjvm(None))\n"
            "end = time.monotonic() + 60\n"
            "while not _cds.find_archive(_cds.cache_dir(), key) and time.monotonic() < end:\n"
            "    time.sleep(0.1)\n")
    subprocess.run([sys.executable, "-c", wait], env=env, timeout=120)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-n", type=int, default=20, help="processes per config (default 20)")
    p.add_argument("--config", action="append", default=[],
                   help="NAME=OPT,OPT: jvm_options of a config (repeatable; default: "
                        "one config 'default' with no options)")
    p.add_argument("--classpath", default=None)
    p.add_argument("--json", help="write every repetition's phases here")
    p.add_argument("--hotspot-create", action="store_true",
                   help="add -Xlog:startuptime and the report's split (JVM create as "
                        "HotSpot times it, helper init the rest of JavaGateway()); works "
                        "for builds without _start_times too")
    args = p.parse_args(argv)
    configs = []
    for c in args.config or ["default="]:
        name, _, opts = c.partition("=")
        configs.append((name, [o for o in opts.split(",") if o]))
    env = child_env()
    for _, opts in configs:
        prime(opts, args.classpath, env)
    runs: dict[str, list[dict[str, float]]] = {name: [] for name, _ in configs}
    for _ in range(args.n):
        for name, opts in configs:
            runs[name].append(phases(run_once(opts, args.classpath, env,
                                              args.hotspot_create)))
    load = os.getloadavg()
    print(f"{args.n} processes per config, interleaved; load average after: "
          f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f} ({os.cpu_count()} CPUs)")
    seen = {label for rs in runs.values() for r in rs for label in r}
    labels = [label for label, _, _ in PHASES if label in seen]
    labels += sorted(seen - set(labels))
    head = ("| phase (ms: median, lower quartile, [min-max]) | " +
            " | ".join(n for n, _ in configs) + " |")
    print(head)
    print("|---" * (len(configs) + 1) + "|")
    for label in labels:
        cells = []
        for name, _ in configs:
            xs = [r[label] for r in runs[name] if label in r]
            cells.append(f"{median(xs):.2f}, {quartile(xs):.2f} [{min(xs):.1f}-{max(xs):.1f}]"
                         if xs else "-")
        print(f"| {label} | " + " | ".join(cells) + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"configs": dict(configs), "runs": runs}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
