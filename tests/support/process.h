#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace barrage::testing {

// How a child process ended and what it wrote.
struct ProcessResult {
  // The exit status when it exited; 128 + the signal number when a signal ended it (the shell's
  // convention); -1 when it could not be started or waited for.
  int exit_code = -1;
  bool timed_out = false;  // it was still running at the deadline and was killed
  std::string out;
  std::string err;
};

// Runs argv[0] (a path, not searched in PATH) with argv in its own process group, captures
// stdout and stderr, and waits for it. At the timeout the whole group is killed with SIGKILL.
// Signals a test runner may have ignored (SIGINT, SIGQUIT, SIGPIPE ...) are reset to default.
ProcessResult RunProcess(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

// Creates a fresh directory under $TMPDIR (or /tmp). Aborts the test binary if it cannot.
std::string MakeTempDir();

// A temporary directory that is removed, with everything in it, when this goes out of scope.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // @return path()/name.
  std::string File(std::string_view name) const;

 private:
  std::string path_;
};

// A loopback TCP port that was free a moment ago: binds 127.0.0.1:0, reads the port, closes.
// Another process may take it before the caller binds it; callers that can, retry.
// @return the port, or -1 on failure.
int FreeLoopbackPort();

// Whether something accepts TCP connections on 127.0.0.1:port right now.
bool PortAccepts(int port);

// A long-running child (a server, or barrage itself when a test signals it) in its own process
// group, with stdout and stderr written to files in a private temp dir. Life cycle: Start() once,
// then Signal() and Wait() as needed; the destructor kills the group with SIGKILL and reaps the
// child if it is still running.
class ChildProcess {
 public:
  ChildProcess();
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Starts argv[0] (a path) with argv.
  // @return FailedPrecondition if already started, Internal if the spawn failed.
  absl::Status Start(const std::vector<std::string>& argv);

  // The child's pid (also its process group id); -1 before Start().
  pid_t pid() const { return pid_; }

  // Sends `signal` to the child itself (not its group).
  // @return false if it has already been reaped or the signal could not be sent.
  bool Signal(int signal);

  // Whether the child has exited (reaps it if so). Does not block.
  bool Exited();

  // Waits up to `timeout` for the child to exit; past it, kills the group with SIGKILL and sets
  // timed_out. Always returns what the child wrote so far.
  ProcessResult Wait(std::chrono::milliseconds timeout);

  // Polls the child's stdout (every 10 ms, up to `timeout`) until it contains `needle`.
  // @return the stdout so far; DeadlineExceeded at the timeout, Aborted if the child exits first.
  absl::StatusOr<std::string> WaitForOutput(std::string_view needle,
                                            std::chrono::milliseconds timeout);

  std::string ReadOut() const;
  std::string ReadErr() const;

 private:
  // Reaps the child if it has exited, recording its exit code. @return true once reaped.
  bool Reap(bool block);

  TempDir dir_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int exit_code_ = -1;
};

}  // namespace barrage::testing
