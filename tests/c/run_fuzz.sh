#!/bin/sh
# tests/c/run_fuzz.sh - builds the libFuzzer target for the py4j answer decoder with
# clang (ASan + UBSan) and runs it for a short while from an empty corpus.
#   usage: tests/c/run_fuzz.sh [seconds]      (default 20; FUZZ_OUT=dir for the build,
#          default fuzz/ in the CMake build directory, $P4J_BUILD or build/)
# Exits non-zero when the fuzzer finds a crash, leak or UB (the reproducer is left
# in that directory, with the corpus the runs grew).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=${1:-20}
out=${FUZZ_OUT:-${P4J_BUILD:-$root/build}/fuzz}
cc=${CLANG:-clang}
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "run_fuzz.sh: $cc not found (apt-get install clang)" >&2
    exit 2
fi
mkdir -p "$out/corpus"
"$cc" -std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$root/bridge" -I"$root/bridge/socket" -I"$root/bridge/socket/include" \
    "$here/fuzz_wire_decode.c" "$root/bridge/socket/wire.c" "$root/bridge/value.c" \
    "$root/bridge/error.c" -lpthread -lm -o "$out/fuzz_wire_decode"
# Seed a few real answers so the run starts from the protocol, not from noise.
printf '\000!yro12' > "$out/corpus/ref"
printf '\001!ysa\\\\b\\nc' > "$out/corpus/str"
printf '\000!yjAAECAw==' > "$out/corpus/bytes"
printf '\000!xsjava.lang.X\\n\tat y' > "$out/corpus/err"
printf '\000!yd1.0E300' > "$out/corpus/double"
printf '\002a\\b\nc\rd' > "$out/corpus/rt"
cd "$out"
exec ./fuzz_wire_decode -max_total_time="$secs" -max_len=4096 -print_final_stats=1 corpus
