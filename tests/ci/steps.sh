# tests/ci/steps.sh: sourced by tests/setup_env.sh, tests/run_all.sh, tests/ci/run_sanitizers.sh
# and perf/run.sh. Each step of a run prints one line on stdout (what it does, then its
# result and elapsed time) while its whole output goes to the log file $P4J_LOG; a failed
# step shows the log's last lines. Also: Debian packages installed as root, or through
# sudo, or a message saying what to run when neither is possible.

# p4j_log_open FILE: makes FILE (created empty, its directory too) the log of this run,
# $P4J_LOG (a shell variable, not exported). A script that sources another one that
# opens its own log sets P4J_LOG_KEEP=1 first to keep its log for both.
p4j_log_open() {
  mkdir -p "$(dirname "$1")"
  : >"$1"
  P4J_LOG=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
}

# p4j_elapsed SECONDS: "42 s" or "3m05s".
p4j_elapsed() {
  local s=$1
  if [ "$s" -ge 60 ]; then printf '%dm%02ds' $((s / 60)) $((s % 60)); else printf '%d s' "$s"; fi
}

# p4j_first_time STAMP COST: what an install step will do, for its line: "first install:
# COST" when the stamp file STAMP of an earlier install is missing, else "what changed".
p4j_first_time() {
  if [ -e "$1" ]; then echo "what changed"; else echo "first install: $2"; fi
}

# p4j_step WHAT CMD [ARGS...]: runs CMD with stdout and stderr appended to $P4J_LOG, and
# prints "WHAT ... ok (12 s)" (one line); on failure "FAILED" with the log's last 25
# lines. Returns CMD's status.
p4j_step() {
  local what=$1 t0=$SECONDS rc=0 start
  shift
  printf '%s ... ' "$what"
  printf '\n==== %s (%s)\n' "$what" "$*" >>"$P4J_LOG"
  start=$(wc -l <"$P4J_LOG")
  "$@" >>"$P4J_LOG" 2>&1 || rc=$?
  if [ "$rc" -eq 0 ]; then
    echo "ok ($(p4j_elapsed $((SECONDS - t0))))"
  else
    echo "FAILED (exit status $rc, $(p4j_elapsed $((SECONDS - t0)))); its last lines" \
         "(all in $P4J_LOG):"
    tail -n +$((start + 1)) "$P4J_LOG" | tail -n 25 | sed 's/^/  | /'
  fi
  return "$rc"
}

# p4j_step_shown WHAT CMD [ARGS...]: like p4j_step, for the test runners whose output is
# the result (ctest, pytest): their output is shown as it comes and appended to $P4J_LOG,
# then "== WHAT: ok (5m12s)" or "== WHAT: FAILED (...)".
p4j_step_shown() {
  local what=$1 t0=$SECONDS rc=0
  shift
  echo "== $what"
  printf '\n==== %s (%s)\n' "$what" "$*" >>"$P4J_LOG"
  "$@" 2>&1 | tee -a "$P4J_LOG" || rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 0 ]; then
    echo "== $what: ok ($(p4j_elapsed $((SECONDS - t0))))"
  else
    echo "== $what: FAILED (exit status $rc, $(p4j_elapsed $((SECONDS - t0))))"
  fi
  return "$rc"
}

# p4j_sanitizer_build NAME SRC DIR FLAGS PYTHON: configures (once) and builds project SRC in DIR
# with the compiler and linker FLAGS (a sanitizer's) against PYTHON, as NAME's steps.
p4j_sanitizer_build() {
  local name=$1 src=$2 dir=$3 flags=$4 py=$5 what="what changed since the last build"
  if [ ! -f "$dir/build.ninja" ]; then
    what="the first build: a few minutes"
    p4j_step "$name: configuring $(basename "$dir")/" \
      env CC=gcc cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          -DCMAKE_C_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" \
          -DCMAKE_MODULE_LINKER_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
          -DPython_EXECUTABLE="$py" || return 1
  fi
  p4j_step "$name: building $(basename "$dir")/ ($what)" ninja -C "$dir" -j 2
}

# p4j_apt_install PKG...: installs Debian packages (--no-install-recommends) as root, or
# through sudo when not root. Without apt-get, or not root and without sudo (a minimal
# Debian has no sudo), prints what is missing and what to run, and returns 1.
p4j_apt_install() {
  local sudo=""
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "missing packages: $* (Debian names), and no apt-get here to install them" >&2
    return 1
  fi
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "missing Debian packages: $*" >&2
      echo "this user is not root and there is no sudo (a minimal Debian has none): run the" >&2
      echo "script as root, or first, as root: apt-get install --no-install-recommends $*" >&2
      echo "(or install sudo: apt-get install sudo, and give this user sudo rights)" >&2
      return 1
    fi
    sudo="sudo"
  fi
  $sudo apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "$@"
}
