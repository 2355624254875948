#!/usr/bin/env bash
# Side-by-side throughput: wrk, a lean libcurl loop (bench/lean_curl_loop.cc) and barrage against
# the same private nginx, each with one thread and 64 keep-alive connections for DURATION
# seconds. nginx runs on CPU 0, every client on CPU 1, one client at a time. barrage records
# every request (--save-records) as it does in real use. Prints each rate, its ratios to wrk and
# to the lean loop, and the client's CPU time per request (the figure that moves least when other
# processes share the machine).
#
# The lean loop runs twice: as written (sockets leave epoll after every request, as in curl's
# ephiperfifo.c and in barrage) and with --keep-registered 1 (sockets stay in epoll until curl
# closes them), to show what that saves.
#
#   bench/wrk_compare.sh            # DURATION=8 ROUNDS=1 CONNECTIONS=64 BUILD_DIR=<repo>/build
#   ROUNDS=3 bench/wrk_compare.sh   # the tools interleaved three times, best round of each kept
#   BARRAGE=/path/to/barrage ...    # another barrage binary (an engine change under test)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-${root}/build}"
duration="${DURATION:-8}"
rounds="${ROUNDS:-1}"
connections="${CONNECTIONS:-64}"
barrage="${BARRAGE:-${build}/coordinator/barrage}"
nginx_cpu=0
client_cpu=1

fail() {
  echo "wrk_compare: $*" >&2
  exit 1
}

[[ "${duration}" =~ ^[0-9]+$ && "${duration}" -ge 1 && "${duration}" -le 600 ]] ||
  fail "DURATION must be whole seconds in [1, 600], got '${duration}'"
[[ "${rounds}" =~ ^[0-9]+$ && "${rounds}" -ge 1 ]] || fail "ROUNDS must be >= 1, got '${rounds}'"
[[ "$(nproc)" -ge 2 ]] || fail "needs 2 CPUs (nginx on one, the client on the other)"
command -v wrk >/dev/null || fail "wrk is not installed (apt-get install wrk)"
command -v taskset >/dev/null || fail "taskset is not installed (apt-get install util-linux)"
if [[ ! -x "${barrage}" || ! -x "${build}/bench/lean_curl_loop" ]]; then
  if [[ ! -f "${build}/CMakeCache.txt" ]]; then
    cmake -S "${root}" -B "${build}" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DBARRAGE_BUILD_BENCH=ON >/dev/null
  fi
  cmake --build "${build}" --target barrage lean_curl_loop -- -j2
fi
[[ -x "${barrage}" ]] || fail "no barrage binary at ${barrage}"

# One JSON key of a file, with jq when there is one.
json_key() {  # $1: file, $2: key
  if command -v jq >/dev/null; then
    jq -r ".$2" "$1"
  else
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
  fi
}

# Runs a command with its stdout to $1 and stderr to $2; prints "CPU_SECONDS WALL_SECONDS" of it
# and its children. Fails (after showing the stderr) if the command does.
measured() {  # $1: stdout file, $2: stderr file, then the command
  local out="$1" err="$2"
  shift 2
  python3 - "${out}" "${err}" "$@" <<'PY' || { sed 's/^/  | /' "${err}" >&2; return 1; }
import resource, subprocess, sys, time
with open(sys.argv[1], "w") as out, open(sys.argv[2], "w") as err:
    begin = time.monotonic()
    code = subprocess.call(sys.argv[3:], stdout=out, stderr=err)
    wall = time.monotonic() - begin
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{usage.ru_utime + usage.ru_stime:.3f} {wall:.3f}")
sys.exit(code)
PY
}

source "${root}/scripts/nginx-lib.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/barrage-bench.XXXXXX")"
cleanup() {
  nginx_stop
  rm -rf "${work}"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
nginx_start "${work}" "${nginx_cpu}"
url="http://127.0.0.1:${NGINX_PORT}/"
pin=(taskset -c "${client_cpu}")

# Each run_* prints "RATE CPU_SECONDS WALL_SECONDS".
run_wrk() {
  local times
  times="$(measured "${work}/out" "${work}/err" "${pin[@]}" wrk -t1 -c"${connections}" \
    -d"${duration}s" "${url}")" || return 1
  if grep -E 'Non-2xx|Socket errors' "${work}/out" >&2; then
    return 1
  fi
  echo "$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "${work}/out") ${times}"
}

run_lean() {  # $1: 0 or 1, --keep-registered
  local times
  times="$(measured "${work}/out" "${work}/err" "${pin[@]}" "${build}/bench/lean_curl_loop" \
    --url "${url}" --connections "${connections}" --duration "${duration}" \
    --keep-registered "$1")" || return 1
  echo "$(sed -n 's/.*rate=\([0-9]*\).*/\1/p' "${work}/out") ${times}"
}

run_barrage() {
  local times
  rm -f "${work}/result.json"
  times="$(measured "${work}/out" "${work}/err" "${pin[@]}" "${barrage}" run \
    --url "${url}" --concurrency "${connections}" --threads 1 --duration "${duration}s" \
    --quiet --save-result "${work}/result.json" --save-records "${work}/records.jsonl")" ||
    return 1
  local records failed
  records="$(wc -l <"${work}/records.jsonl")"
  failed="$(json_key "${work}/result.json" failed)"
  if [[ "${failed}" != 0 ]]; then
    echo "wrk_compare: barrage saw ${failed} failed requests" >&2
    return 1
  fi
  # Every request is recorded: the records file holds at least the completed ones.
  if (( records < $(json_key "${work}/result.json" completed) )); then
    echo "wrk_compare: barrage recorded ${records} requests, fewer than it completed" >&2
    return 1
  fi
  rm -f "${work}/records.jsonl"
  echo "$(json_key "${work}/result.json" request_throughput | awk '{ printf "%.0f", $1 }') ${times}"
}

tools=(wrk lean_curl_loop lean_keep_registered barrage)
declare -A best_rate best_cpu_us best_busy
lean_ratios=()
for round in $(seq "${rounds}"); do
  declare -A rate=()
  line="round ${round}:"
  for tool in "${tools[@]}"; do
    case "${tool}" in
      wrk) result="$(run_wrk)" || fail "wrk failed" ;;
      lean_curl_loop) result="$(run_lean 0)" || fail "lean_curl_loop failed" ;;
      lean_keep_registered)
        result="$(run_lean 1)" || fail "lean_curl_loop --keep-registered failed" ;;
      barrage) result="$(run_barrage)" || fail "barrage failed" ;;
    esac
    read -r value cpu wall <<<"${result}"
    [[ "${value}" =~ ^[0-9]+$ && "${value}" -gt 0 ]] ||
      fail "${tool} printed no rate (got '${value}')"
    rate[${tool}]="${value}"
    line+=" ${tool} ${value}"
    if (( value > ${best_rate[${tool}]:-0} )); then
      best_rate[${tool}]="${value}"
      # CPU time per request, and the share of the wall time the client was on the CPU (below
      # ~95%, the client was waiting: for nginx, or for a CPU another process held).
      best_cpu_us[${tool}]="$(awk -v c="${cpu}" -v r="${value}" -v d="${duration}" \
        'BEGIN { printf "%.1f", c * 1e6 / (r * d) }')"
      best_busy[${tool}]="$(awk -v c="${cpu}" -v w="${wall}" \
        'BEGIN { printf "%.0f%%", 100 * c / w }')"
    fi
  done
  lean_ratios+=("$(awk -v b="${rate[barrage]}" -v l="${rate[lean_curl_loop]}" \
    'BEGIN { printf "%.2f", b / l }')")
  echo "${line} req/s" >&2
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
wrk_rate="${best_rate[wrk]}"
lean_rate="${best_rate[lean_curl_loop]}"
printf '%-32s %10s %8s %13s %12s %11s\n' tool "req/s" "vs wrk" "vs lean loop" "CPU us/req" \
  "client busy"
for tool in "${tools[@]}"; do
  name="${tool}"
  [[ "${tool}" == lean_keep_registered ]] && name="lean_curl_loop --keep-registered"
  [[ "${tool}" == barrage ]] && name="barrage (records every request)"
  printf '%-32s %10s %8s %13s %12s %11s\n' "${name}" "${best_rate[${tool}]}" \
    "$(ratio "${best_rate[${tool}]}" "${wrk_rate}")" \
    "$(ratio "${best_rate[${tool}]}" "${lean_rate}")" \
    "${best_cpu_us[${tool}]}" "${best_busy[${tool}]}"
done
median="$(printf '%s\n' "${lean_ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END {
  print (NR % 2) ? v[(NR + 1) / 2] : sprintf("%.2f", (v[NR / 2] + v[NR / 2 + 1]) / 2) }')"
echo "barrage / lean_curl_loop in each round: ${lean_ratios[*]} (median ${median})"
echo "(${connections} connections, ${duration} s per tool, best of ${rounds} round(s); nginx on" \
  "CPU ${nginx_cpu}, clients on CPU ${client_cpu})"
