#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "process.h"

namespace barrage::testing {

// What a test nginx's configuration varies in. Everything else (one worker, every path inside
// the temp dir, `200 ok` for every request) is the same for every test target.
struct NginxConfig {
  std::string listen;          // "ADDR:PORT"
  bool access_log = false;     // log every request to <dir>/access.log
  std::string log_format;      // the access log's format, "" for nginx's default
  int keepalive_requests = 0;  // requests per connection, 0 for nginx's default
};

// Writes <dir>/nginx.conf. @return Internal when the file cannot be written.
absl::Status WriteNginxConfig(const std::string& dir, const NginxConfig& config);

// A private nginx (/usr/sbin/nginx) on 127.0.0.1 that answers every request with 200 "ok\n".
// Everything it writes (config, pid, error log, temp paths, optional access log) lives in its own
// temp dir. Life cycle: Start() once; Stop() or the destructor ends it (SIGQUIT, then SIGKILL
// after 2 s).
class NginxServer {
 public:
  struct Options {
    // Log every request to access.log in the temp dir, so RequestCount() can count them.
    bool access_log = false;
    // Requests nginx serves on one connection before closing it (keep-alive churn tests).
    int keepalive_requests = 1000000;
  };

  NginxServer();
  explicit NginxServer(Options options);
  ~NginxServer();
  NginxServer(const NginxServer&) = delete;
  NginxServer& operator=(const NginxServer&) = delete;

  // Writes the config, starts nginx on a free loopback port and waits (up to 5 s per attempt)
  // until the port accepts connections; tries another port if nginx could not bind.
  // @return the error log and reason when nginx did not come up.
  absl::Status Start();

  // Graceful stop (SIGQUIT), SIGKILL to the group if it takes longer than 2 s. Idempotent.
  void Stop();

  int port() const { return port_; }
  // "http://127.0.0.1:<port>/"
  std::string url() const;
  const std::string& dir() const { return dir_.path(); }

  // Lines in the access log (requests nginx has finished). 0 unless Options::access_log.
  uint64_t RequestCount() const;

 private:
  Options options_;
  TempDir dir_;
  std::unique_ptr<ChildProcess> process_;
  int port_ = -1;
};

}  // namespace barrage::testing
