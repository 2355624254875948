#include "nginx_fixture.h"

#include <signal.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

namespace barrage::testing {
namespace {

constexpr char kNginxBinary[] = "/usr/sbin/nginx";
constexpr int kStartAttempts = 5;
constexpr std::chrono::milliseconds kStartTimeout{5000};
constexpr std::chrono::milliseconds kConnectPollInterval{10};
constexpr std::chrono::milliseconds kStopTimeout{2000};

}  // namespace

NginxServer::NginxServer() : NginxServer(Options{}) {}

NginxServer::NginxServer(Options options) : options_(options) {}

absl::Status WriteNginxConfig(const std::string& dir, const NginxConfig& config) {
  const std::string path = dir + "/nginx.conf";
  std::ofstream conf(path, std::ios::trunc);
  conf << "daemon off;\n"
       << "master_process on;\n"
       << "worker_processes 1;\n"
       << "pid " << dir << "/nginx.pid;\n"
       << "error_log " << dir << "/error.log warn;\n"
       << "events {\n"
       << "  worker_connections 1024;\n"
       << "}\n"
       << "http {\n"
       << "  client_body_temp_path " << dir << "/client_body;\n"
       << "  proxy_temp_path " << dir << "/proxy;\n"
       << "  fastcgi_temp_path " << dir << "/fastcgi;\n"
       << "  uwsgi_temp_path " << dir << "/uwsgi;\n"
       << "  scgi_temp_path " << dir << "/scgi;\n";
  if (!config.log_format.empty()) {
    conf << "  log_format test '" << config.log_format << "';\n";
  }
  if (config.access_log) {
    conf << "  access_log " << dir << "/access.log" << (config.log_format.empty() ? "" : " test")
         << ";\n";
  } else {
    conf << "  access_log off;\n";
  }
  if (config.keepalive_requests > 0) {
    conf << "  keepalive_requests " << config.keepalive_requests << ";\n";
  }
  conf << "  keepalive_timeout 60s;\n"
       << "  default_type text/plain;\n"
       << "  server {\n"
       << "    listen " << config.listen << ";\n"
       << "    location / {\n"
       << "      return 200 \"ok\\n\";\n"
       << "    }\n"
       << "  }\n"
       << "}\n";
  conf.close();
  if (!conf) {
    return absl::InternalError("cannot write " + path);
  }
  return absl::OkStatus();
}

NginxServer::~NginxServer() { Stop(); }

std::string NginxServer::url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }

absl::Status NginxServer::Start() {
  if (process_ != nullptr) {
    return absl::FailedPreconditionError("NginxServer::Start called twice");
  }
  std::string last_error;
  for (int attempt = 0; attempt < kStartAttempts; ++attempt) {
    int port = FreeLoopbackPort();
    if (port <= 0) {
      return absl::InternalError("cannot find a free loopback port");
    }
    NginxConfig config;
    config.listen = "127.0.0.1:" + std::to_string(port);
    config.access_log = options_.access_log;
    config.keepalive_requests = options_.keepalive_requests;
    if (absl::Status written = WriteNginxConfig(dir_.path(), config); !written.ok()) {
      return written;
    }
    auto process = std::make_unique<ChildProcess>();
    // -e: nginx opens its error log before reading the config; keep that inside the temp dir too.
    absl::Status started = process->Start({kNginxBinary, "-p", dir_.path() + "/", "-c",
                                           dir_.File("nginx.conf"), "-e", dir_.File("error.log")});
    if (!started.ok()) {
      return started;
    }
    const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
    bool exited = false;
    while (std::chrono::steady_clock::now() < deadline) {
      if (PortAccepts(port)) {
        process_ = std::move(process);
        port_ = port;
        return absl::OkStatus();
      }
      if (process->Exited()) {
        exited = true;
        break;
      }
      std::this_thread::sleep_for(kConnectPollInterval);
    }
    ProcessResult result = process->Wait(std::chrono::milliseconds(0));
    std::ifstream log(dir_.File("error.log"));
    std::string log_text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    last_error = (exited ? "nginx exited with code " + std::to_string(result.exit_code)
                         : std::string("nginx did not accept connections within 5 s")) +
                 " on port " + std::to_string(port) + "; stderr: " + result.err +
                 "; error.log: " + log_text;
    // Another process may have taken the port between FreeLoopbackPort() and nginx's bind.
  }
  return absl::UnavailableError(last_error);
}

void NginxServer::Stop() {
  if (process_ == nullptr) {
    return;
  }
  process_->Signal(SIGQUIT);
  process_->Wait(kStopTimeout);
  process_.reset();
}

uint64_t NginxServer::RequestCount() const {
  if (!options_.access_log) {
    return 0;
  }
  std::ifstream log(dir_.File("access.log"));
  uint64_t lines = 0;
  std::string line;
  while (std::getline(log, line)) {
    ++lines;
  }
  return lines;
}

}  // namespace barrage::testing
