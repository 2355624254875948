#!/usr/bin/env bash
# Where barrage's CPU goes at full speed: the wrk_compare.sh setup (private nginx on CPU 0,
# barrage on CPU 1, one worker thread, 64 connections, every request recorded) under
# `perf record -g`, then the CPU by part (kernel, libcurl, allocator, the rest of libc, barrage),
# the heaviest shared objects and functions, barrage's own functions, and the system calls per
# request. Falls back to a short callgrind run when perf may not sample (perf_event_paranoid,
# containers).
#
#   bench/profile.sh                   # DURATION=5 CONNECTIONS=64 BUILD_DIR=<repo>/build
#   CALL_GRAPH=dwarf bench/profile.sh  # call chains through libcurl (no frame pointers there)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-${root}/build}"
duration="${DURATION:-5}"
connections="${CONNECTIONS:-64}"
call_graph="${CALL_GRAPH:-fp}"

[[ "${duration}" =~ ^[0-9]+$ && "${duration}" -ge 1 && "${duration}" -le 120 ]] ||
  { echo "profile: DURATION must be whole seconds in [1, 120]" >&2; exit 1; }
if [[ ! -x "${build}/coordinator/barrage" ]]; then
  if [[ ! -f "${build}/CMakeCache.txt" ]]; then
    cmake -S "${root}" -B "${build}" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DBARRAGE_BUILD_BENCH=ON >/dev/null
  fi
  cmake --build "${build}" --target barrage -- -j2
fi

source "${root}/scripts/nginx-lib.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/barrage-profile.XXXXXX")"
cleanup() {
  nginx_stop
  rm -rf "${work}"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
nginx_start "${work}" 0
barrage_run=("${build}/coordinator/barrage" run --url "http://127.0.0.1:${NGINX_PORT}/"
  --concurrency "${connections}" --threads 1 --quiet --save-result "${work}/result.json"
  --save-records "${work}/records.jsonl")

completed() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["completed"])' \
    "${work}/result.json"
}

if ! command -v perf >/dev/null ||
  ! perf record -o "${work}/probe.data" -- true >/dev/null 2>&1; then
  echo "perf cannot sample here; callgrind on a 2 s run instead (slow, so far fewer requests)" >&2
  taskset -c 1 valgrind --tool=callgrind --callgrind-out-file="${work}/callgrind.out" \
    "${barrage_run[@]}" --duration 2s >/dev/null 2>"${work}/callgrind.log"
  echo "== instructions by function (self cost), top 40 =="
  callgrind_annotate "${work}/callgrind.out" >"${work}/annotated.txt" 2>/dev/null || true
  awk '/PROGRAM TOTALS/ { print } /file:function/ { on = 1; next }
       on && NF && !/^-+$/ && ++shown <= 40' "${work}/annotated.txt"
  exit 0
fi

taskset -c 1 perf record -g --call-graph "${call_graph}" -o "${work}/perf.data" -- \
  "${barrage_run[@]}" --duration "${duration}s" >/dev/null 2>"${work}/perf.log"
echo "barrage completed $(completed) requests in ${duration} s under perf"
# One report, read several ways; perf's own header lines start with '#'.
perf report -i "${work}/perf.data" --no-children --sort dso,sym --stdio -g none 2>/dev/null |
  grep -E '^ +[0-9.]+%' >"${work}/by_symbol.txt" || true
perf report -i "${work}/perf.data" --no-children --sort dso --stdio -g none 2>/dev/null |
  grep -E '^ +[0-9.]+%' >"${work}/by_dso.txt" || true

echo
echo "== CPU by part (self time) =="
awk '
  { share = $1; sub(/%/, "", share); dso = $2; sym = $NF
    if (dso ~ /kernel/) part = "kernel (TCP on loopback, epoll, poll, timers)"
    else if (dso ~ /libcurl/) part = "libcurl"
    else if (dso ~ /^libc\./ && sym ~ /(malloc|free|calloc|realloc|_int_|unlink_chunk|consolid)/)
      part = "allocator (malloc/free, nearly all called by libcurl)"
    else if (dso ~ /^libc\./) part = "libc: system-call wrappers, string and format functions"
    else if (dso ~ /vdso/) part = "vDSO clock reads"
    else if (dso == "barrage") part = "barrage (our code)"
    else part = "other: " dso
    total[part] += share }
  END { for (part in total) if (total[part] >= 0.05) printf "%7.2f%%  %s\n", total[part], part }' \
  "${work}/by_symbol.txt" | sort -rn

echo
echo "== CPU by shared object (self time) =="
head -10 "${work}/by_dso.txt"
echo
echo "== CPU by function (self time), top 30 =="
head -30 "${work}/by_symbol.txt"
echo
echo "== barrage's own functions (self time) =="
# No `| head`: under pipefail, the writer's SIGPIPE would end the script.
awk '$2 == "barrage" && ++shown <= 25' "${work}/by_symbol.txt"

# System calls per request, counted by tracepoints in a run without the profiler.
events=()
for call in epoll_wait epoll_ctl poll sendto recvfrom timerfd_settime read write futex; do
  events+=(-e "syscalls:sys_enter_${call}")
done
if perf stat "${events[@]}" -o "${work}/probe.txt" -- true >/dev/null 2>&1; then
  rm -f "${work}/records.jsonl"
  taskset -c 1 perf stat "${events[@]}" -e task-clock -o "${work}/stat.txt" -- \
    "${barrage_run[@]}" --duration "${duration}s" >/dev/null 2>"${work}/stat.log"
  requests="$(completed)"
  echo
  echo "== per request (${requests} requests, whole process: worker, collector, writer) =="
  awk -v n="${requests}" '
    /syscalls:sys_enter_/ { gsub(/,/, "", $1); name = $2; sub(/.*sys_enter_/, "", name)
                           printf "%8.3f  %s\n", $1 / n, name }
    /task-clock/ { gsub(/,/, "", $1); printf "%8.2f  us of CPU\n", $1 * 1000 / n }' \
    "${work}/stat.txt"
fi
