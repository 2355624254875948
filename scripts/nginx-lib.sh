# Sourced by scripts: starts a private nginx on a free 127.0.0.1 port, answering
# `200 ok` to every request, and stops it again. Nothing outside the work directory is touched.
#
#   source scripts/nginx-lib.sh
#   nginx_start WORKDIR [CPU]   # sets NGINX_PORT and NGINX_PID; pins nginx to CPU if given
#   nginx_stop

NGINX_PORT=""
NGINX_PID=""

nginx_accepts() {  # whether something accepts TCP connections on 127.0.0.1:$1
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

nginx_write_config() {  # $1: work dir, $2: port
  cat >"$1/nginx.conf" <<CONF
daemon off;
master_process on;
worker_processes 1;
pid $1/nginx.pid;
error_log $1/error.log warn;
events {
  worker_connections 8192;
}
http {
  client_body_temp_path $1/client_body;
  proxy_temp_path $1/proxy;
  fastcgi_temp_path $1/fastcgi;
  uwsgi_temp_path $1/uwsgi;
  scgi_temp_path $1/scgi;
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 60s;
  default_type text/plain;
  server {
    listen 127.0.0.1:$2;
    location / {
      return 200 "ok\n";
    }
  }
}
CONF
}

nginx_start() {  # $1: work dir, $2: optional CPU to pin nginx to
  local work="$1" cpu="${2:-}" candidate attempt
  local pin=()
  if [[ -n "${cpu}" ]]; then
    pin=(taskset -c "${cpu}")
  fi
  for attempt in 1 2 3 4 5; do
    candidate=$((20000 + RANDOM % 40000))
    if nginx_accepts "${candidate}"; then
      continue
    fi
    nginx_write_config "${work}" "${candidate}"
    "${pin[@]}" /usr/sbin/nginx -p "${work}/" -c "${work}/nginx.conf" -e "${work}/error.log" &
    NGINX_PID=$!
    for _ in $(seq 50); do
      if nginx_accepts "${candidate}"; then
        NGINX_PORT="${candidate}"
        return 0
      fi
      if ! kill -0 "${NGINX_PID}" 2>/dev/null; then
        break
      fi
      sleep 0.1
    done
    nginx_stop
  done
  echo "nginx did not start; see ${work}/error.log" >&2
  return 1
}

nginx_stop() {
  if [[ -n "${NGINX_PID}" ]] && kill -0 "${NGINX_PID}" 2>/dev/null; then
    kill -QUIT "${NGINX_PID}" 2>/dev/null || true
    wait "${NGINX_PID}" 2>/dev/null || true
  fi
  NGINX_PID=""
}
