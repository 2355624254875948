#!/usr/bin/env bash
# THE demo command: installs dependencies, builds barrage, starts a private nginx on loopback and
# runs 10 s of open-loop load at 2000 requests/s against it. nginx is always stopped at the end.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${root}/build"

bash "${root}/scripts/install-deps.sh"
cmake -S "${root}" -B "${build}" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "${build}" --target barrage

work="$(mktemp -d "${TMPDIR:-/tmp}/barrage-demo.XXXXXX")"
nginx_pid=""
stop_nginx() {
  if [[ -n "${nginx_pid}" ]] && kill -0 "${nginx_pid}" 2>/dev/null; then
    kill -QUIT "${nginx_pid}" 2>/dev/null || true
    wait "${nginx_pid}" 2>/dev/null || true
  fi
}
trap stop_nginx EXIT

accepts() {  # whether something accepts TCP connections on 127.0.0.1:$1
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

write_config() {  # $1: port
  cat >"${work}/nginx.conf" <<CONF
daemon off;
master_process on;
worker_processes 1;
pid ${work}/nginx.pid;
error_log ${work}/error.log warn;
events {
  worker_connections 1024;
}
http {
  client_body_temp_path ${work}/client_body;
  proxy_temp_path ${work}/proxy;
  fastcgi_temp_path ${work}/fastcgi;
  uwsgi_temp_path ${work}/uwsgi;
  scgi_temp_path ${work}/scgi;
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  default_type text/plain;
  server {
    listen 127.0.0.1:$1;
    location / {
      return 200 "ok\n";
    }
  }
}
CONF
}

# Pick a port nothing listens on and start nginx there; try another if nginx cannot bind it.
port=""
for attempt in 1 2 3 4 5; do
  candidate=$((20000 + RANDOM % 40000))
  if accepts "${candidate}"; then
    continue
  fi
  write_config "${candidate}"
  /usr/sbin/nginx -p "${work}/" -c "${work}/nginx.conf" -e "${work}/error.log" &
  nginx_pid=$!
  for _ in $(seq 50); do
    if accepts "${candidate}"; then
      port="${candidate}"
      break
    fi
    if ! kill -0 "${nginx_pid}" 2>/dev/null; then
      break
    fi
    sleep 0.1
  done
  if [[ -n "${port}" ]]; then
    break
  fi
  stop_nginx
  nginx_pid=""
done
if [[ -z "${port}" ]]; then
  echo "demo: nginx did not start; see ${work}/error.log" >&2
  exit 1
fi

echo "demo: nginx listening on 127.0.0.1:${port}"
"${build}/coordinator/barrage" run --url "http://127.0.0.1:${port}/" --rate 2000 \
  --duration 10s --save-result "${work}/result.json"
echo "demo: result written to ${work}/result.json"
