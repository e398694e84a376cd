# tests/ci/wheel_natives.sh: sourced by the scripts that run a release wheel in a Debian
# root (tests/ci/bullseye_wheels.sh, tests/ci/arm64_wheels.sh). wheel_natives_prepare WORK
# copies the test fixtures jar to WORK/fixtures.jar (seen as /work/fixtures.jar in the
# root) and sets NATIVES to a program that runs the libffi the wheel carries (linked in
# statically): a Java native method of the fixtures (compiled for Java 11) implemented in
# Python. Without the jar the check is left out, said in one line.
wheel_natives_prepare() {
  local work=$1 jar=${P4J_FIXTURES_JAR:-$ROOT/build/tests/py4jni-test-fixtures.jar}
  if [ -e "$jar" ]; then
    cp "$jar" "$work/fixtures.jar"
  else
    echo "   (no test fixtures jar at $jar: the register_natives check is left out)"
  fi
  NATIVES='
from py4jni import JavaGateway
gw = JavaGateway(classpath="/work/fixtures.jar")
gw.register_natives("org.py4jni.fixtures.NativeCodec",
                    {"twice": lambda x: 2 * x, "mulD": lambda a, b: a * b})
nc = gw.jvm.org.py4jni.fixtures.NativeCodec
assert nc.twice(21) == 42 and nc.mulD(1.5, -2.0) == -3.0
print("natives OK (libffi closures)")
'
}
