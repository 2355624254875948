#!/usr/bin/env bash
# THE demo command: installs dependencies, builds barrage, starts a private nginx on loopback and
# runs 10 s of open-loop load at 2000 requests/s against it. nginx is always stopped at the end.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${root}/build"

bash "${root}/scripts/install-deps.sh"
cmake -S "${root}" -B "${build}" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "${build}" --target barrage

source "${root}/scripts/nginx-lib.sh"
work="$(mktemp -d "${TMPDIR:-/tmp}/barrage-demo.XXXXXX")"
trap nginx_stop EXIT
nginx_start "${work}"

echo "demo: nginx listening on 127.0.0.1:${NGINX_PORT}"
"${build}/coordinator/barrage" run --url "http://127.0.0.1:${NGINX_PORT}/" --rate 2000 \
  --duration 10s --save-result "${work}/result.json" --save-records "${work}/records.jsonl"
echo "demo: result in ${work}/result.json, every request in ${work}/records.jsonl"
