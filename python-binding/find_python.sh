# python-binding/find_python.sh: sourced by build_wheels.sh and tests/ci/run_matrix.sh.
# find_python V: the interpreter for CPython V (e.g. 3.10): pyenv's newest V.*, else
# pythonV on PATH; prints nothing when neither exists.
find_python() {
  local v=$1 d
  for d in $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}/versions/$v".* 2>/dev/null | sort -V -r); do
    [ -x "$d/bin/python$v" ] && { echo "$d/bin/python$v"; return; }
  done
  command -v "python$v" 2>/dev/null || true
}
