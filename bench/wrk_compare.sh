#!/usr/bin/env bash
# Side-by-side throughput: wrk, a lean libcurl loop (bench/lean_curl_loop.cc) and barrage against
# the same private nginx, each with one thread and 64 keep-alive connections for DURATION
# seconds. nginx runs on CPU 0, every client on CPU 1, one client at a time. barrage records
# every request (--save-records) as it does in real use. Prints each rate and the ratios.
#
#   bench/wrk_compare.sh            # DURATION=8 ROUNDS=1 BUILD_DIR=build CONNECTIONS=64
#   ROUNDS=3 bench/wrk_compare.sh   # tools interleaved, best round of each reported
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-${root}/build}"
duration="${DURATION:-8}"
rounds="${ROUNDS:-1}"
connections="${CONNECTIONS:-64}"
nginx_cpu=0
client_cpu=1

if [[ "$(nproc)" -lt 2 ]]; then
  echo "wrk_compare: needs 2 CPUs (nginx on one, the client on the other)" >&2
  exit 1
fi
command -v wrk >/dev/null || { echo "wrk_compare: wrk is not installed (apt-get install wrk)" >&2; exit 1; }
if [[ ! -x "${build}/coordinator/barrage" || ! -x "${build}/bench/lean_curl_loop" ]]; then
  cmake -S "${root}" -B "${build}" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "${build}" --target barrage lean_curl_loop
fi

source "${root}/scripts/nginx-lib.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/barrage-bench.XXXXXX")"
cleanup() {
  nginx_stop
  rm -rf "${work}"
}
trap cleanup EXIT
nginx_start "${work}" "${nginx_cpu}"
url="http://127.0.0.1:${NGINX_PORT}/"
pin=(taskset -c "${client_cpu}")

run_wrk() {
  "${pin[@]}" wrk -t1 -c"${connections}" -d"${duration}s" "${url}" |
    awk '/^Requests\/sec:/ { printf "%.0f\n", $2 }'
}

run_lean() {
  "${pin[@]}" "${build}/bench/lean_curl_loop" --url "${url}" --connections "${connections}" \
    --duration "${duration}" | sed -n 's/.*rate=\([0-9]*\).*/\1/p'
}

run_barrage() {
  "${pin[@]}" "${build}/coordinator/barrage" run --url "${url}" --concurrency "${connections}" \
    --threads 1 --duration "${duration}s" --quiet --save-result "${work}/result.json" \
    --save-records "${work}/records.jsonl" >/dev/null
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(round(r["request_throughput"]))' \
    "${work}/result.json"
  rm -f "${work}/records.jsonl"
}

best_wrk=0
best_lean=0
best_barrage=0
for round in $(seq "${rounds}"); do
  wrk_rate="$(run_wrk)"
  lean_rate="$(run_lean)"
  barrage_rate="$(run_barrage)"
  for value in "${wrk_rate}" "${lean_rate}" "${barrage_rate}"; do
    [[ "${value}" =~ ^[0-9]+$ ]] || { echo "wrk_compare: a tool failed (got '${value}')" >&2; exit 1; }
  done
  echo "round ${round}: wrk ${wrk_rate}  lean_curl_loop ${lean_rate}  barrage ${barrage_rate} req/s" >&2
  (( wrk_rate > best_wrk )) && best_wrk="${wrk_rate}"
  (( lean_rate > best_lean )) && best_lean="${lean_rate}"
  (( barrage_rate > best_barrage )) && best_barrage="${barrage_rate}"
done

ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }
printf '%-16s %10s %12s %12s\n' tool "req/s" "vs wrk" "vs lean loop"
printf '%-16s %10s %12s %12s\n' wrk "${best_wrk}" 1.00 "$(ratio "${best_wrk}" "${best_lean}")"
printf '%-16s %10s %12s %12s\n' lean_curl_loop "${best_lean}" "$(ratio "${best_lean}" "${best_wrk}")" 1.00
printf '%-16s %10s %12s %12s\n' barrage "${best_barrage}" "$(ratio "${best_barrage}" "${best_wrk}")" \
  "$(ratio "${best_barrage}" "${best_lean}")"
echo "(${connections} connections, ${duration} s per tool, best of ${rounds} round(s); nginx on CPU ${nginx_cpu}, clients on CPU ${client_cpu}; barrage recorded every request)"
