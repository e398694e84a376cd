"""A worker process: one backend, one JVM (or one client of a GatewayServer), driven by
the coordinator (perf/bench.py) over a multiprocessing pipe.

Started with multiprocessing's *spawn* method (never fork: a forked child has no JVM,
docs/guide.md). Protocol, one dict per message:
  coordinator -> worker   {"cmd": "run", "scenario": id, "units": n}
                          {"cmd": "mem", "objects": n}
                          {"cmd": "quit"}
  worker -> coordinator   first {"ok": True, "info": {...}} once the backend is up, or
                          {"ok": False, "status": "not installed"|"failed", "reason": str}
                          then one answer per command: {"ok": True, "ns": elapsed, ...} or
                          {"ok": False, "status": "n/a"|"error", "reason": str}
A scenario is set up (untimed) on its first "run"; only the units of work are timed.
"""
import gc
import os
import signal
import sys
import time
import traceback

import backends
import helpers
import scenarios


def _reason(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}".strip().rstrip(":")


class Context:
    """What scenario code sees: the bridge, started once."""

    def __init__(self, backend, config):
        self.backend = backends.BACKENDS[backend]
        self.config = config
        self.names = {"N": None}
        self.names.update({k: getattr(helpers, k) for k in dir(helpers) if not k.startswith("_")})
        self.names["NotApplicable"] = scenarios.NotApplicable
        self.names["need_fixtures"] = self.need_fixtures
        # The Java test fixtures jar (scenarios with fixtures=True), on this JVM's class path
        self.fixtures_jar = config.get("fixtures_jar")
        self.info = {"backend": backend}
        if self.backend.flavour == "jpype":
            self._start_jpype()
        else:
            self._start_py4j_api()

    def _start_jpype(self):
        try:
            import jpype
        except Exception as e:
            raise backends.NotInstalled(_reason(e)) from e
        kw = {"classpath": [self.fixtures_jar]} if self.fixtures_jar else {}
        jpype.startJVM(*backends.EMBEDDED_JVM_OPTIONS, interrupt=False, **kw)
        if self.fixtures_jar:
            self.info["classpath"] = self.fixtures_jar
        self.names["jpype"] = jpype
        jc = jpype.JClass
        self.info.update(package_version=jpype.__version__, package_file=jpype.__file__,
                         jvm_path=jpype.getDefaultJVMPath(),
                         jvm_options=list(backends.EMBEDDED_JVM_OPTIONS))
        self._jvm_info(lambda n: str(jc("java.lang.System").getProperty(n)),
                       lambda: [str(b.getName()) for b in
                                jc("java.lang.management.ManagementFactory").getGarbageCollectorMXBeans()])

    def _start_py4j_api(self):
        b = self.backend
        api = backends.load_py4j_api(b.package)
        self.api = api
        pkg = api.package
        version = getattr(pkg, "__version__", None) or backends.package_version(b.dist)
        if version is None and b.package == "py4j":
            from py4j.version import __version__ as version
        self.info.update(package_version=version, package_file=getattr(pkg, "__file__", None))
        if b.mode == "inproc":
            if self.fixtures_jar:
                self.gateway = api.JavaGateway(classpath=self.fixtures_jar)
                self.info["classpath"] = self.fixtures_jar
            else:
                self.gateway = api.JavaGateway()
        else:
            params = api.GatewayParameters(port=self.config["port"])
            self.gateway = api.JavaGateway(gateway_parameters=params)
            self.info["server_port"] = self.config["port"]
        self._callback_gateway = None
        self.names.update(gateway=self.gateway, api=api, mode=b.mode,
                          callback_gateway=self.callback_gateway)
        jvm = self.gateway.jvm
        self._jvm_info(lambda n: jvm.java.lang.System.getProperty(n),
                       lambda: [b.getName() for b in
                                jvm.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()])

    def _jvm_info(self, prop, gcs):
        for key in ("java.version", "java.vm.name", "java.vm.version"):
            try:
                self.info[key] = prop(key)
            except Exception as e:
                self.info[key] = f"? ({_reason(e)})"
        try:
            self.info["gc"] = ", ".join(gcs())
        except Exception as e:
            self.info["gc"] = f"? ({_reason(e)})"

    def callback_gateway(self):
        """A gateway that Java can call back into. In-process: the gateway itself. Socket
        mode: a second gateway with a callback server on an ephemeral port, whose port
        the GatewayServer is told (py4j's documented recipe for port 0)."""
        if self.backend.mode == "inproc":
            return self.gateway
        if self._callback_gateway is None:
            api = self.api
            if api.CallbackServerParameters is None:
                raise scenarios.NotApplicable("no CallbackServerParameters in this package")
            gw = api.JavaGateway(
                gateway_parameters=api.GatewayParameters(port=self.config["port"]),
                callback_server_parameters=api.CallbackServerParameters(port=0))
            port = gw.get_callback_server().get_listening_port()
            server = gw.java_gateway_server
            server.resetCallbackClient(server.getCallbackClient().getAddress(), port)
            self._callback_gateway = gw
        return self._callback_gateway

    def need_fixtures(self):
        """Scenario code calls this before using a class of the Java test fixtures."""
        if not self.fixtures_jar:
            raise scenarios.FixturesUnavailable(
                "Java test fixtures not on the class path: " +
                (self.config.get("fixtures_reason") or "no fixtures jar was given"))

    def prepare(self, sid):
        """Sets a scenario up; returns (run, between, stats, teardown, ops)."""
        sc = scenarios.BY_ID[sid]
        flavour = self.backend.flavour
        expr = sc.expr(flavour)
        if expr.na:
            raise scenarios.NotApplicable(expr.na)
        ns = dict(self.names)
        ns.update(sc.params)
        code = compile(scenarios.source(sc, flavour), f"<scenario {sid} [{flavour}]>", "exec")
        exec(code, ns)
        return ns["_prepare"]()

    def heap_committed(self):
        """Bytes of Java heap the JVM has committed (Runtime.totalMemory())."""
        try:
            if self.backend.flavour == "jpype":
                rt = self.names["jpype"].JClass("java.lang.Runtime").getRuntime()
            else:
                rt = self.gateway.jvm.java.lang.Runtime.getRuntime()
            return int(rt.totalMemory())
        except Exception:
            return None

    def churn_objects(self, n):
        """MEM: creates and drops n StringBuilders."""
        if self.backend.flavour == "jpype":
            sb_class = self.names["jpype"].JClass("java.lang.StringBuilder")
        else:
            sb_class = self.gateway.jvm.java.lang.StringBuilder
        for _ in range(n):
            sb_class()


def _mem(ctx, n):
    """MEM: passes of n objects until RSS settles (JIT, heap sizing: the JVM touches its
    young generation over the first passes), then one measured pass."""
    if ctx.backend.mode != "inproc":
        return {"ok": False, "status": "n/a",
                "reason": "socket client: the target is about the in-process bridge"}
    settle = 2 * 2**20
    series = [helpers.rss_bytes()]
    t0 = time.perf_counter()
    for i in range(8):
        ctx.churn_objects(n)
        gc.collect()
        series.append(helpers.rss_bytes())
        if i >= 1 and abs(series[-1] - series[-2]) < settle:
            break
    heap0 = ctx.heap_committed()
    rss0 = series[-1]
    t1 = time.perf_counter()
    ctx.churn_objects(n)
    gc.collect()
    t2 = time.perf_counter()
    rss1 = helpers.rss_bytes()
    return {"ok": True, "objects": n, "rss_before": rss0, "rss_after": rss1,
            "heap_committed_before": heap0, "heap_committed_after": ctx.heap_committed(),
            "warm_passes": len(series) - 1, "rss_series": series + [rss1],
            "warm_s": t1 - t0, "measured_s": t2 - t1}


def _injected(backend):
    """Faults the harness's own tests inject: $P4J_PERF_INJECT holds entries
    KIND:SCENARIO[:BACKEND], comma separated, KIND one of crash (the worker dies),
    hang (never answers), error (the batch raises). Returns {scenario: kind}."""
    faults = {}
    for entry in filter(None, os.environ.get("P4J_PERF_INJECT", "").split(",")):
        parts = entry.strip().split(":")
        if len(parts) >= 2 and (len(parts) < 3 or parts[2] == backend):
            faults[parts[1]] = parts[0]
    return faults


def _fault(kind):
    if kind == "crash":
        os.kill(os.getpid(), signal.SIGKILL)
    elif kind == "hang":
        time.sleep(10**6)
    elif kind == "error":
        raise RuntimeError("injected error")


def main(conn, backend, config):
    """Entry point of the spawned process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the coordinator's business
    try:
        ctx = Context(backend, config)
    except backends.NotInstalled as e:
        conn.send({"ok": False, "status": "not installed", "reason": str(e)})
        return
    except BaseException as e:
        conn.send({"ok": False, "status": "failed", "reason": _reason(e),
                   "traceback": traceback.format_exc()})
        return
    conn.send({"ok": True, "info": ctx.info, "pid": os.getpid()})
    prepared = {}
    faults = _injected(backend)
    clock = time.perf_counter_ns
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            break
        cmd = msg.get("cmd")
        if cmd == "quit":
            for p in prepared.values():
                try:
                    p[3]()
                except Exception:
                    pass
            conn.send({"ok": True})
            break
        if cmd == "mem":
            try:
                conn.send(_mem(ctx, msg["objects"]))
            except Exception as e:
                conn.send({"ok": False, "status": "error", "reason": _reason(e),
                           "traceback": traceback.format_exc()})
            continue
        if cmd != "run":
            conn.send({"ok": False, "status": "error", "reason": f"unknown command {cmd!r}"})
            continue
        sid, units = msg["scenario"], msg["units"]
        p = prepared.get(sid)
        if p is None:
            try:
                p = prepared[sid] = ctx.prepare(sid)
            except (scenarios.NotApplicable, NotImplementedError) as e:
                conn.send({"ok": False, "status": "n/a", "reason": str(e) or type(e).__name__})
                continue
            except scenarios.FixturesUnavailable as e:
                conn.send({"ok": False, "status": "failed", "reason": str(e)})
                continue
            except BaseException as e:
                conn.send({"ok": False, "status": "error", "reason": "setup: " + _reason(e),
                           "traceback": traceback.format_exc()})
                continue
        run, between, stats, _teardown, ops = p
        try:
            if sid in faults:
                _fault(faults[sid])
            t0 = clock()
            run(units)
            t1 = clock()
            between()
            extra = stats()
        except BaseException as e:
            conn.send({"ok": False, "status": "error", "reason": _reason(e),
                       "traceback": traceback.format_exc()})
            continue
        conn.send({"ok": True, "ns": t1 - t0, "ops": ops, "extra": extra})
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # no JVM shutdown: it can wait on threads, and there is nothing to keep
