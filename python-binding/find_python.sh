# python-binding/find_python.sh: sourced by build_wheels.sh and tests/ci/run_matrix.sh.
# find_python V: the interpreter for CPython V (e.g. 3.10): pyenv's newest V.*, else
# pythonV on PATH; for a free-threaded V (e.g. 3.14t), the newest build of that version
# that tests/ci/freethreaded_python.sh keeps under P4J_ROOTS (default
# /var/cache/py4jni-roots). Prints nothing when none exists.
find_python() {
  local v=$1 d
  if [[ $v == *t ]]; then
    for d in $(ls -d "${P4J_ROOTS:-/var/cache/py4jni-roots}/cpython-${v%t}".*t 2>/dev/null | sort -V -r); do
      [ -e "$d/.complete" ] && [ -x "$d/bin/python$v" ] && { echo "$d/bin/python$v"; return; }
    done
    return
  fi
  for d in $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}/versions/$v".* 2>/dev/null | sort -V -r); do
    [ -x "$d/bin/python$v" ] && { echo "$d/bin/python$v"; return; }
  done
  command -v "python$v" 2>/dev/null || true
}
