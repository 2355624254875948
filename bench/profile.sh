#!/usr/bin/env bash
# Where barrage's CPU goes at full speed: the wrk_compare.sh setup (private nginx on CPU 0,
# barrage on CPU 1, one worker thread, 64 connections, every request recorded) under
# `perf record -g`, then the heaviest shared objects and functions. Falls back to callgrind when
# perf may not sample (perf_event_paranoid, containers).
#
#   bench/profile.sh               # DURATION=5 BUILD_DIR=build CONNECTIONS=64
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-${root}/build}"
duration="${DURATION:-5}"
connections="${CONNECTIONS:-64}"

if [[ ! -x "${build}/coordinator/barrage" ]]; then
  cmake -S "${root}" -B "${build}" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "${build}" --target barrage
fi

source "${root}/scripts/nginx-lib.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/barrage-profile.XXXXXX")"
cleanup() {
  nginx_stop
  rm -rf "${work}"
}
trap cleanup EXIT
nginx_start "${work}" 0
barrage_run=("${build}/coordinator/barrage" run --url "http://127.0.0.1:${NGINX_PORT}/"
  --concurrency "${connections}" --threads 1 --quiet --save-records "${work}/records.jsonl")

if command -v perf >/dev/null && perf record -o "${work}/probe.data" -- true 2>/dev/null; then
  taskset -c 1 perf record -g -o "${work}/perf.data" -- "${barrage_run[@]}" \
    --duration "${duration}s" >/dev/null 2>"${work}/perf.log"
  echo "== CPU by shared object (self time) =="
  perf report -i "${work}/perf.data" --no-children --sort dso --stdio -g none 2>/dev/null |
    grep -E '^ +[0-9]' | head -12
  echo "== CPU by function (self time) =="
  perf report -i "${work}/perf.data" --no-children --sort dso,sym --stdio -g none 2>/dev/null |
    grep -E '^ +[0-9]' | head -40
  echo "== barrage's own functions (self time) =="
  perf report -i "${work}/perf.data" --no-children --sort dso,sym --stdio -g none 2>/dev/null |
    grep -E '^ +[0-9].* barrage ' | head -20
else
  echo "perf cannot sample here; using callgrind on a 2 s run (slow)" >&2
  taskset -c 1 valgrind --tool=callgrind --callgrind-out-file="${work}/callgrind.out" \
    "${barrage_run[@]}" --duration 2s >/dev/null 2>"${work}/callgrind.log"
  callgrind_annotate "${work}/callgrind.out" 2>/dev/null | head -50
fi
