#!/usr/bin/env bash
# fuzz/run.sh: build the libFuzzer targets with ASan+UBSan, run each for a bounded time (chapter 01).
# Role: what CI runs (.ci/run) and what a developer runs longer. Any crash, sanitizer report
# or broken invariant (the target calls abort()) fails the script; the input that did it is
# left in the build directory as crash-* (or leak-*, timeout-*) for `fuzz-NAME FILE` to replay.
#
#   code/fuzz/run.sh [SECONDS] [BUILD_DIR]    SECONDS per target, default 60
#   FUZZ_TARGETS="request-parser" FUZZ_JOBS=2 code/fuzz/run.sh 3600
#
# The targets are every NAME with a directory of committed seeds code/fuzz/corpus/NAME
# (or those FUZZ_TARGETS names); each is built from the CMake target fuzz-NAME. New inputs
# the fuzzer finds go to BUILD_DIR/corpus/NAME (kept between runs, never committed);
# code/fuzz/http.dict is the dictionary for all, with a target's own code/fuzz/NAME.dict
# (if any) appended.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
build=${2:-build/fuzz}
targets=${FUZZ_TARGETS:-$(find code/fuzz/corpus -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort)}
parallel=()  # libFuzzer runs in one process unless asked for more (then it logs to fuzz-N.log)
if [[ ${FUZZ_JOBS:-1} -gt 1 ]]; then parallel=(-jobs="$FUZZ_JOBS" -workers="$FUZZ_JOBS"); fi

cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DHANDOFF_FUZZ=ON -DHANDOFF_SANITIZE="address;undefined" -DHANDOFF_WERROR=ON -DHANDOFF_BUILD_BOOK=OFF >/dev/null
for name in $targets; do
  cmake --build "$build" --target "fuzz-$name" -j2 >/dev/null
  binary=$build/code/fuzz/fuzz-$name
  seeds=code/fuzz/corpus/$name
  found="$build/corpus/$name"
  mkdir -p "$found" "$build/artifacts"
  dict="$build/$name.dict"
  cat code/fuzz/http.dict $(find code/fuzz -maxdepth 1 -type f -name "$name.dict") >"$dict"
  echo "== fuzz-$name: ${seconds}s, seeds $seeds, found inputs in $found"
  ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 "${parallel[@]}" \
    -dict="$dict" -artifact_prefix="$build/artifacts/" -print_final_stats=1 \
    "$found" "$seeds"
done
