"""The PySpark driver's jars in-process as spark-submit gives them: ``--packages``
resolved by Spark's own Ivy code, ``spark.jars`` as a ``file://`` URL, the driver's
``MutableURLClassLoader``, and ``ADD JAR`` / ``SparkContext.addJar`` in a running session.

The fixture is a Maven repository of the project's own, made here (a class compiled into
``groupId/artifactId/version/`` with its jar and pom) and named by an Ivy settings file,
so Ivy reaches no network and a fresh ``spark.jars.ivy`` spares ``~/.ivy2``. One session
of tests/python/frameworks/pyspark_packages_driver.py runs stock (spark-submit), then in-process;
their results must be equal. Skipped when pyspark is not installed.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed "
                    "(pip install -r tests/requirements-pyspark.txt)")

from driver_steps import ok  # noqa: E402

pytestmark = pytest.mark.inproc_only("PySpark's driver JVM embedded in-process")

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyspark_packages_driver.py")
GROUP, ARTIFACT, VERSION = "org.py4jni.fixture", "greeter", "1.0"
# class name -> (jar, static method, its result)
CLASSES = {
    "pkg.Greeter": ("greeter-1.0.jar", "public static String greet(String who)",
                    'return "hello " + who;'),
    "url.Shout": ("url.jar", "public static String shout(String s)",
                  'return s.toUpperCase() + "!";'),
    "added.Late": ("late.jar", "public static String late()", 'return "late";'),
    "context.Added": ("context.jar", "public static String added()", 'return "added";'),
}
POM = f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>{GROUP}</groupId><artifactId>{ARTIFACT}</artifactId><version>{VERSION}</version>
  <packaging>jar</packaging>
</project>
"""


def _jdk_tool(name: str) -> str:
    home = os.environ.get("JAVA_HOME")
    found = os.path.join(home, "bin", name) if home else shutil.which(name)
    if not found or not os.path.exists(found):
        pytest.skip(f"{name} not found (a JDK is needed to build the fixture)")
    return found


def make_fixtures(root: Path) -> None:
    """Compiles each fixture class into its own jar; the package's jar and pom go into a
    Maven-layout repository, which ivysettings.xml names as Ivy's only resolver."""
    javac, jar = _jdk_tool("javac"), _jdk_tool("jar")
    repo = root / "repo" / GROUP.replace(".", "/") / ARTIFACT / VERSION
    repo.mkdir(parents=True)
    for name, (jar_name, signature, body) in CLASSES.items():
        package, cls = name.rsplit(".", 1)
        src = root / "src" / name / f"{cls}.java"
        src.parent.mkdir(parents=True)
        src.write_text(f"package {GROUP}.{package};\n"
                       f"public class {cls} {{ {signature} {{ {body} }} }}\n")
        out = root / "classes" / name
        subprocess.run([javac, "--release", "17", "-d", str(out), str(src)], check=True)
        target = repo / jar_name if name == "pkg.Greeter" else root / jar_name
        subprocess.run([jar, "cf", str(target), "-C", str(out), "."], check=True)
    (repo / f"{ARTIFACT}-{VERSION}.pom").write_text(POM)
    (root / "ivysettings.xml").write_text(textwrap.dedent(f"""\
        <ivysettings>
          <settings defaultResolver="fixture"/>
          <resolvers>
            <ibiblio name="fixture" root="{(root / 'repo').as_uri()}" m2compatible="true"/>
          </resolvers>
        </ivysettings>
        """))


def run_driver(mode: str, tmp: str, fixtures: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PY4JNI_")}
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYSPARK_SUBMIT_ARGS"] = f"--packages {GROUP}:{ARTIFACT}:{VERSION} pyspark-shell"
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    proc = subprocess.run([sys.executable, DRIVER, mode, tmp, fixtures], capture_output=True,
                          text=True, env=env, timeout=600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert lines, f"driver ({mode}) printed no result, rc={proc.returncode}:\n" \
                  f"{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return json.loads(lines[-1][len("RESULT "):])


@pytest.fixture(scope="module")
def runs() -> Iterator[dict[str, dict[str, Any]]]:
    """Stock, then in-process (one Spark JVM at a time), over the same fixture."""
    with tempfile.TemporaryDirectory() as root:
        make_fixtures(Path(root, "fixtures"))
        out = {}
        for mode in ("stock", "py4jni"):
            os.mkdir(os.path.join(root, mode))
            out[mode] = run_driver(mode, os.path.join(root, mode), os.path.join(root, "fixtures"))
        yield out


def test_packages_resolved_by_ivy_are_callable_from_python(runs):
    res = runs["py4jni"]
    assert ok(res, "package") == "hello py"
    assert ok(res, "package_in_a_job") == "hello job"
    assert ok(res, "other_thread") == ["hello thread"]
    assert ok(res, "ivy_cache") == [f"{GROUP}_{ARTIFACT}-{VERSION}.jar"]  # the fresh Ivy dir


def test_spark_jars_url_and_the_drivers_class_loader(runs):
    res = runs["py4jni"]
    assert ok(res, "url_jar") == "URL!"
    loader = ok(res, "driver_loader")
    assert loader["class"] == "org.apache.spark.util.MutableURLClassLoader"
    assert f"{GROUP}_{ARTIFACT}-{VERSION}.jar" in loader["jars"] and "url.jar" in loader["jars"]
    # SparkSubmit lists a package's jar for Python too (a jar may carry Python modules)
    assert ok(res, "conf")["spark.submit.pyFiles"] == [f"{GROUP}_{ARTIFACT}-{VERSION}.jar"]


def test_add_jar_after_a_failed_lookup(runs):
    added = ok(runs["py4jni"], "add_jar")
    assert added["before"] != "late" and added["after"] == "late"
    assert added["in_a_job"] == "late"
    # SparkContext.addJar ships a jar to executors only, stock and in-process alike
    assert ok(runs["py4jni"], "context_add_jar")["after"] != "added"


@pytest.mark.parametrize("step", ["package", "package_in_a_job", "url_jar", "other_thread",
                                  "driver_loader", "conf", "ivy_cache", "add_jar",
                                  "context_add_jar"])
def test_equal_to_stock(runs, step):
    assert runs["py4jni"][step] == runs["stock"][step]
