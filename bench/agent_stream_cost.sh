#!/usr/bin/env bash
# What streaming to a remote coordinator costs an agent: the same closed-loop test (one worker
# thread, 64 connections, DURATION seconds against a private nginx on CPU 0) run by the engine
# inside `barrage run` and by a barrage-agent that streams every record over gRPC to a
# coordinator. The engine is pinned to CPU 1 both times; the remote coordinator runs on CPU 0
# with nginx, as it would on another host. Prints both rates and their ratio.
#
#   bench/agent_stream_cost.sh          # DURATION=8 ROUNDS=1 BUILD_DIR=build
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-${root}/build}"
duration="${DURATION:-8}"
rounds="${ROUNDS:-1}"

if [[ ! -x "${build}/coordinator/barrage" || ! -x "${build}/agent/barrage-agent" ]]; then
  cmake -S "${root}" -B "${build}" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "${build}" --target barrage barrage-agent
fi

source "${root}/scripts/nginx-lib.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/barrage-stream.XXXXXX")"
agent_pid=""
cleanup() {
  if [[ -n "${agent_pid}" ]]; then
    kill "${agent_pid}" 2>/dev/null || true
    wait "${agent_pid}" 2>/dev/null || true
  fi
  nginx_stop
  rm -rf "${work}"
}
trap cleanup EXIT
nginx_start "${work}" 0
url="http://127.0.0.1:${NGINX_PORT}/"
load=(--url "${url}" --concurrency 64 --threads 1 --duration "${duration}s" --quiet
  --save-result "${work}/result.json")

rate_of() {
  python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["request_throughput"]))' \
    "${work}/result.json"
}

taskset -c 1 "${build}/agent/barrage-agent" --listen 127.0.0.1:0 --name bench \
  >"${work}/agent.out" 2>"${work}/agent.err" &
agent_pid=$!
for _ in $(seq 100); do
  grep -q "listening on" "${work}/agent.out" 2>/dev/null && break
  sleep 0.05
done
agent_address="$(sed -n 's/.*listening on //p' "${work}/agent.out")"
[[ -n "${agent_address}" ]] || { echo "agent_stream_cost: barrage-agent did not start" >&2; exit 1; }

best_local=0
best_remote=0
for round in $(seq "${rounds}"); do
  taskset -c 1 "${build}/coordinator/barrage" run "${load[@]}" >/dev/null
  local_rate="$(rate_of)"
  taskset -c 0 "${build}/coordinator/barrage" run "${load[@]}" --agents "${agent_address}" \
    >/dev/null
  remote_rate="$(rate_of)"
  echo "round ${round}: in-process ${local_rate}  remote agent ${remote_rate} req/s" >&2
  (( local_rate > best_local )) && best_local="${local_rate}"
  (( remote_rate > best_remote )) && best_remote="${remote_rate}"
done
python3 - "${best_local}" "${best_remote}" <<'PY'
import sys
local, remote = int(sys.argv[1]), int(sys.argv[2])
print(f"{'engine':<40} {'req/s':>10}")
print(f"{'in-process (barrage run)':<40} {local:>10}")
print(f"{'barrage-agent streaming over gRPC':<40} {remote:>10}")
print(f"remote / in-process: {remote / local:.2f} (the cost of streaming every record)")
PY
