#!/usr/bin/env bash
# fuzz/run.sh: build the libFuzzer targets with ASan+UBSan, run each for a bounded time (chapter 01).
# Role: what CI runs (.ci/run) and what a developer runs longer. Any crash, sanitizer report
# or broken invariant (the target calls abort()) fails the script; the input that did it is
# left in the build directory as crash-* (or leak-*, timeout-*) for `fuzz-NAME FILE` to replay.
#
#   code/fuzz/run.sh [SECONDS] [BUILD_DIR]    SECONDS per target, default 60
#   FUZZ_TARGETS="request-parser" FUZZ_JOBS=2 code/fuzz/run.sh 3600
#   (FUZZ_JOBS=N: N processes at once for SECONDS; their logs in BUILD_DIR/logs/NAME,
#   shown at the end, whole when a process failed)
#
# The targets are every NAME with a directory of committed seeds code/fuzz/corpus/NAME
# (or those FUZZ_TARGETS names); each is built from the CMake target fuzz-NAME. New inputs
# the fuzzer finds go to BUILD_DIR/corpus/NAME (kept between runs, never committed);
# code/fuzz/http.dict is the dictionary for all, with a target's own code/fuzz/NAME.dict
# (if any) appended.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
seconds=${1:-60}
build=$(realpath -m "${2:-build/fuzz}")  # absolute: each target runs in its log folder
targets=${FUZZ_TARGETS:-$(find code/fuzz/corpus -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort)}
jobs=${FUZZ_JOBS:-1}  # libFuzzer runs in one process unless asked for more
parallel=()
if [[ $jobs -gt 1 ]]; then parallel=(-jobs="$jobs" -workers="$jobs"); fi

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
  # With FUZZ_JOBS, each process logs to fuzz-N.log in the folder it runs in: one per target.
  logs="$build/logs/$name"
  rm -rf "$logs" && mkdir -p "$logs"
  echo "== fuzz-$name: ${seconds}s x $jobs process(es), seeds $seeds, found inputs in $found"
  rc=0
  (cd "$logs" && ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 "${parallel[@]}" \
    -dict="$dict" -artifact_prefix="$build/artifacts/" -print_final_stats=1 \
    "$found" "$root/$seeds") || rc=$?
  for log in "$logs"/fuzz-*.log; do  # a parallel run's output, shown here as a serial run's is
    [[ -e $log ]] || continue
    if ((rc != 0)); then cat "$log"; else grep -E '^(stat::|Done )' "$log" | sed "s|^|$(basename "$log"): |"; fi
  done
  ((rc == 0)) || { echo "fuzz-$name failed (exit $rc); its input is in $build/artifacts/" >&2; exit "$rc"; }
done
