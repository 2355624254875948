#pragma once

// Helpers shared by the integration tests: run the real `barrage` binary, start the stall target,
// read result JSON and records JSONL, compute exact statistics to compare with.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "nginx_fixture.h"
#include "nlohmann/json.hpp"
#include "process.h"

namespace barrage::integration {

using barrage::testing::ChildProcess;
using barrage::testing::NginxServer;
using barrage::testing::ProcessResult;
using barrage::testing::TempDir;
using Json = nlohmann::json;

// Runs `barrage run <args...>` and waits at most `timeout`.
inline ProcessResult RunBarrage(const std::vector<std::string>& args,
                                std::chrono::milliseconds timeout) {
  std::vector<std::string> argv = {BARRAGE_BIN, "run"};
  argv.insert(argv.end(), args.begin(), args.end());
  return barrage::testing::RunProcess(argv, timeout);
}

// For failure messages: how the process ended and the end of what it printed.
inline std::string Describe(const ProcessResult& result) {
  auto tail = [](const std::string& text) {
    constexpr size_t kTail = 4000;
    return text.size() <= kTail ? text : "..." + text.substr(text.size() - kTail);
  };
  return "exit_code=" + std::to_string(result.exit_code) +
         (result.timed_out ? " (timed out, killed)" : "") + "\n--- stdout:\n" + tail(result.out) +
         "\n--- stderr:\n" + tail(result.err);
}

// True when stderr shows a crash rather than an orderly error.
inline bool LooksLikeCrash(const ProcessResult& result) {
  for (std::string_view marker : {"terminate called", "Segmentation fault", "Aborted",
                                  "AddressSanitizer", "core dumped", "Assertion"}) {
    if (result.err.find(marker) != std::string::npos) {
      return true;
    }
  }
  return result.exit_code >= 128;  // ended by a signal
}

inline std::optional<Json> ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return std::nullopt;
  }
  Json parsed = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return std::nullopt;
  }
  return parsed;
}

// The number at `key`, or NaN (after recording a test failure) when it is missing or not a
// number, so that every comparison with it fails too.
inline double NumberAt(const Json& object, const std::string& key) {
  auto found = object.find(key);
  if (found == object.end() || !found->is_number()) {
    ADD_FAILURE() << "result JSON has no number at \"" << key << "\"";
    return std::numeric_limits<double>::quiet_NaN();
  }
  return found->get<double>();
}

// One line of a --save-records JSONL file.
struct Record {
  int64_t scheduled_ns = 0;
  int64_t start_ns = 0;
  std::optional<int64_t> ttfb_ns;
  int64_t end_ns = 0;
  int status = 0;
  std::optional<std::string> error;

  bool ok() const { return !error.has_value(); }
};

// Reads every record; records a test failure for a malformed line (and skips it).
inline std::vector<Record> ReadRecords(const std::string& path) {
  std::vector<Record> records;
  std::ifstream in(path);
  if (!in) {
    ADD_FAILURE() << "cannot open records file " << path;
    return records;
  }
  std::string line;
  size_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty()) {
      continue;
    }
    Json parsed = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded() || !parsed.is_object() || !parsed.contains("scheduled_ns") ||
        !parsed.contains("start_ns") || !parsed.contains("end_ns") || !parsed.contains("ttfb_ns") ||
        !parsed.contains("error")) {
      ADD_FAILURE() << path << ":" << line_number << ": not a record: " << line;
      continue;
    }
    Record record;
    record.scheduled_ns = parsed["scheduled_ns"].get<int64_t>();
    record.start_ns = parsed["start_ns"].get<int64_t>();
    if (!parsed["ttfb_ns"].is_null()) {
      record.ttfb_ns = parsed["ttfb_ns"].get<int64_t>();
    }
    record.end_ns = parsed["end_ns"].get<int64_t>();
    record.status = parsed.value("status", 0);
    if (!parsed["error"].is_null()) {
      record.error = parsed["error"].get<std::string>();
    }
    records.push_back(std::move(record));
  }
  return records;
}

// Non-empty lines in a file.
inline uint64_t CountLines(const std::string& path) {
  std::ifstream in(path);
  uint64_t lines = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) {
      ++lines;
    }
  }
  return lines;
}

// vLLM's spelling of a percentile in result keys: "50", "99", "99.9".
inline std::string PercentileWord(double percentile) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", percentile);
  return buffer;
}

// What the `agents` list of a distributed result adds up to.
struct AgentsSummary {
  double total = 0;                 // completed + failed over all agents
  double first_send_spread_ms = 0;  // latest first send minus earliest
};

// Checks every agent of a distributed result: `expected_completed` +- `tolerance` completed
// requests, not lost. @return their total and how far apart their first sends were.
inline AgentsSummary CheckAgents(const Json& result, double expected_completed, double tolerance) {
  AgentsSummary summary;
  double first_send_min = 1e18;
  double first_send_max = -1e18;
  for (const Json& agent : result["agents"]) {
    SCOPED_TRACE(agent.dump());
    EXPECT_NEAR(NumberAt(agent, "completed"), expected_completed, tolerance);
    EXPECT_EQ(agent["lost"], false);
    summary.total += NumberAt(agent, "completed") + NumberAt(agent, "failed");
    first_send_min = std::min(first_send_min, NumberAt(agent, "first_send_ms"));
    first_send_max = std::max(first_send_max, NumberAt(agent, "first_send_ms"));
  }
  summary.first_send_spread_ms = first_send_max - first_send_min;
  return summary;
}

// The stall target (tests/support/stall_target.cc) on a loopback port it picks itself.
class StallTarget {
 public:
  // @return false (after recording a failure) when it did not come up.
  bool Start(int stall_every_ms, int stall_for_ms, int max_seconds) {
    absl::Status started =
        process_.Start({STALL_TARGET_BIN, "--listen", "127.0.0.1:0", "--stall-every",
                        std::to_string(stall_every_ms), "--stall-for", std::to_string(stall_for_ms),
                        "--max-seconds", std::to_string(max_seconds)});
    if (!started.ok()) {
      ADD_FAILURE() << started;
      return false;
    }
    absl::StatusOr<std::string> out = process_.WaitForOutput("\n", std::chrono::milliseconds(5000));
    if (!out.ok()) {
      ADD_FAILURE() << "stall_target did not start: " << out.status();
      return false;
    }
    if (std::sscanf(out->c_str(), "listening on %d", &port_) != 1) {
      ADD_FAILURE() << "unexpected stall_target output: " << *out;
      return false;
    }
    return true;
  }

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }

 private:
  ChildProcess process_;
  int port_ = -1;
};

// A blocking HTTP/1.1 client on one loopback connection, for checking the test servers
// themselves. Every read gives up after 5 s, so a test never hangs on it.
class LoopbackClient {
 public:
  LoopbackClient() = default;
  ~LoopbackClient() {
    if (fd_ >= 0) {
      close(fd_);
    }
  }
  LoopbackClient(const LoopbackClient&) = delete;
  LoopbackClient& operator=(const LoopbackClient&) = delete;

  bool Connect(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
      return false;
    }
    timeval timeout{.tv_sec = 5, .tv_usec = 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<uint16_t>(port));
    return connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }

  bool Send(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) {
        return false;
      }
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Reads until `count` complete "ok\n" responses have arrived (or EOF, error, 5 s of silence).
  // @return every byte read.
  std::string ReadResponses(int count) {
    std::string received;
    constexpr std::string_view kEnd = "\r\n\r\nok\n";
    auto complete = [&] {
      int found = 0;
      for (size_t at = received.find(kEnd); at != std::string::npos;
           at = received.find(kEnd, at + kEnd.size())) {
        ++found;
      }
      return found >= count;
    };
    char buffer[4096];
    while (!complete()) {
      ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) {
        break;
      }
      received.append(buffer, static_cast<size_t>(n));
    }
    return received;
  }

  // @return true when the server has closed the connection (recv returns 0).
  bool ReadsEof() {
    char byte;
    return recv(fd_, &byte, 1, 0) == 0;
  }

 private:
  int fd_ = -1;
};

}  // namespace barrage::integration
