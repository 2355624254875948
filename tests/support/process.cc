#include "process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace barrage::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kPollInterval{10};
// After a SIGKILL, how long to keep reading pipes a stray grandchild might still hold open.
constexpr std::chrono::milliseconds kDrainAfterKill{1000};

int RemainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

int DecodeWaitStatus(int status) {
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  if (WIFSIGNALED(status)) {
    return 128 + WTERMSIG(status);
  }
  return -1;
}

// Owns a file descriptor.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) {
      close(fd_);
      fd_ = -1;
    }
  }

 private:
  int fd_;
};

// Spawn attributes shared by RunProcess and ChildProcess: a new process group, an empty signal
// mask, and default dispositions for signals a test runner (or a background shell) may ignore.
class SpawnAttributes {
 public:
  SpawnAttributes() {
    posix_spawnattr_init(&attr_);
    sigset_t defaults;
    sigemptyset(&defaults);
    for (int signal : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE, SIGUSR1, SIGUSR2, SIGCHLD}) {
      sigaddset(&defaults, signal);
    }
    sigset_t empty;
    sigemptyset(&empty);
    posix_spawnattr_setsigdefault(&attr_, &defaults);
    posix_spawnattr_setsigmask(&attr_, &empty);
    posix_spawnattr_setpgroup(&attr_, 0);
    posix_spawnattr_setflags(
        &attr_, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  }
  ~SpawnAttributes() { posix_spawnattr_destroy(&attr_); }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;

  const posix_spawnattr_t* get() const { return &attr_; }

 private:
  posix_spawnattr_t attr_;
};

// File actions: stdin from /dev/null, stdout and stderr to the given descriptors.
class SpawnFileActions {
 public:
  SpawnFileActions(int out_fd, int err_fd) {
    posix_spawn_file_actions_init(&actions_);
    posix_spawn_file_actions_addopen(&actions_, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions_, out_fd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions_, err_fd, STDERR_FILENO);
  }
  ~SpawnFileActions() { posix_spawn_file_actions_destroy(&actions_); }
  SpawnFileActions(const SpawnFileActions&) = delete;
  SpawnFileActions& operator=(const SpawnFileActions&) = delete;

  const posix_spawn_file_actions_t* get() const { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

std::string ProgramName(const std::vector<std::string>& argv) {
  return argv.empty() ? std::string("(empty argv)") : argv[0];
}

// @return errno-style error from posix_spawn, 0 on success.
int Spawn(const std::vector<std::string>& argv, int out_fd, int err_fd, pid_t* pid) {
  if (argv.empty()) {
    return EINVAL;
  }
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);
  SpawnAttributes attributes;
  SpawnFileActions actions(out_fd, err_fd);
  return posix_spawn(pid, args[0], actions.get(), attributes.get(), args.data(), environ);
}

// Blocks until `pid` has exited (without reaping it) or `deadline` passes.
// @return true if it exited.
bool WaitForExit(pid_t pid, Clock::time_point deadline) {
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    Fd owned(pidfd);
    pollfd entry{.fd = pidfd, .events = POLLIN, .revents = 0};
    while (true) {
      int ready = poll(&entry, 1, RemainingMs(deadline));
      if (ready > 0) {
        return true;
      }
      if (ready == 0) {
        return false;
      }
      if (errno != EINTR) {
        break;  // fall back to polling below
      }
    }
  }
  // Without pidfd (old kernels): check every few milliseconds.
  while (true) {
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid) {
      return true;
    }
    if (Clock::now() >= deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

// Reads from the pipes in `fds` (entries set to -1 once at EOF) until both reach EOF or the
// deadline passes. @return true if both reached EOF.
bool DrainPipes(int (&fds)[2], std::string* (&sinks)[2], Clock::time_point deadline) {
  char buffer[65536];
  while (fds[0] >= 0 || fds[1] >= 0) {
    pollfd entries[2];
    for (int i = 0; i < 2; ++i) {
      entries[i] = pollfd{.fd = fds[i], .events = POLLIN, .revents = 0};
    }
    int ready = poll(entries, 2, RemainingMs(deadline));
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready <= 0) {
      return false;
    }
    for (int i = 0; i < 2; ++i) {
      if (entries[i].revents == 0) {
        continue;
      }
      ssize_t n = read(fds[i], buffer, sizeof(buffer));
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i]);
        fds[i] = -1;
      }
    }
  }
  return true;
}

}  // namespace

ProcessResult RunProcess(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  ProcessResult result;
  const Clock::time_point deadline = Clock::now() + timeout;
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    result.err = std::string("pipe2: ") + std::strerror(errno);
    return result;
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    result.err = std::string("pipe2: ") + std::strerror(errno);
    close(out_pipe[0]);
    close(out_pipe[1]);
    return result;
  }
  pid_t pid = -1;
  int spawn_error = Spawn(argv, out_pipe[1], err_pipe[1], &pid);
  close(out_pipe[1]);
  close(err_pipe[1]);
  int fds[2] = {out_pipe[0], err_pipe[0]};
  if (spawn_error != 0) {
    close(fds[0]);
    close(fds[1]);
    result.err = "posix_spawn " + ProgramName(argv) + ": " + std::strerror(spawn_error);
    return result;
  }

  std::string* sinks[2] = {&result.out, &result.err};
  bool drained = DrainPipes(fds, sinks, deadline);
  bool exited = drained && WaitForExit(pid, deadline);
  if (!exited) {
    result.timed_out = true;
    kill(-pid, SIGKILL);
    DrainPipes(fds, sinks, Clock::now() + kDrainAfterKill);
  }
  for (int fd : fds) {
    if (fd >= 0) {
      close(fd);
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = DecodeWaitStatus(status);
  return result;
}

std::string MakeTempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/barrage-test-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    std::fprintf(stderr, "mkdtemp(%s): %s\n", pattern.c_str(), std::strerror(errno));
    std::abort();
  }
  return pattern;
}

TempDir::TempDir() : path_(MakeTempDir()) {}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::File(std::string_view name) const { return path_ + "/" + std::string(name); }

int FreeLoopbackPort() {
  Fd sock(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (sock.get() < 0) {
    return -1;
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  if (bind(sock.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    return -1;
  }
  socklen_t length = sizeof(address);
  if (getsockname(sock.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return -1;
  }
  return ntohs(address.sin_port);
}

bool PortAccepts(int port) {
  Fd sock(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (sock.get() < 0) {
    return false;
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  return connect(sock.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
}

ChildProcess::ChildProcess() = default;

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !reaped_) {
    kill(-pid_, SIGKILL);
    Reap(/*block=*/true);
  }
}

absl::Status ChildProcess::Start(const std::vector<std::string>& argv) {
  if (pid_ > 0) {
    return absl::FailedPreconditionError("ChildProcess::Start called twice");
  }
  Fd out(open(dir_.File("stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  Fd err(open(dir_.File("stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (out.get() < 0 || err.get() < 0) {
    return absl::InternalError(std::string("cannot create output files in ") + dir_.path() + ": " +
                               std::strerror(errno));
  }
  pid_t pid = -1;
  int spawn_error = Spawn(argv, out.get(), err.get(), &pid);
  if (spawn_error != 0) {
    return absl::InternalError("posix_spawn " + ProgramName(argv) + ": " +
                               std::strerror(spawn_error));
  }
  pid_ = pid;
  return absl::OkStatus();
}

bool ChildProcess::Signal(int signal) {
  if (pid_ <= 0 || reaped_) {
    return false;
  }
  return kill(pid_, signal) == 0;
}

bool ChildProcess::Exited() { return Reap(/*block=*/false); }

bool ChildProcess::Reap(bool block) {
  if (reaped_) {
    return true;
  }
  if (pid_ <= 0) {
    return false;
  }
  int status = 0;
  pid_t done;
  do {
    done = waitpid(pid_, &status, block ? 0 : WNOHANG);
  } while (done < 0 && errno == EINTR);
  if (done != pid_) {
    return false;
  }
  reaped_ = true;
  exit_code_ = DecodeWaitStatus(status);
  return true;
}

ProcessResult ChildProcess::Wait(std::chrono::milliseconds timeout) {
  ProcessResult result;
  if (pid_ > 0 && !reaped_) {
    if (!WaitForExit(pid_, Clock::now() + timeout)) {
      result.timed_out = true;
      kill(-pid_, SIGKILL);
    }
    Reap(/*block=*/true);
  }
  result.exit_code = exit_code_;
  result.out = ReadOut();
  result.err = ReadErr();
  return result;
}

absl::StatusOr<std::string> ChildProcess::WaitForOutput(std::string_view needle,
                                                        std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  while (true) {
    // Check exit before reading, so output written just before exiting is still seen.
    bool exited = Exited();
    std::string out = ReadOut();
    if (out.find(needle) != std::string::npos) {
      return out;
    }
    if (exited) {
      return absl::AbortedError("the child exited before writing \"" + std::string(needle) +
                                "\"; stderr: " + ReadErr());
    }
    if (Clock::now() >= deadline) {
      return absl::DeadlineExceededError("no \"" + std::string(needle) + "\" on stdout after " +
                                         std::to_string(timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

std::string ChildProcess::ReadOut() const { return ReadWholeFile(dir_.File("stdout")); }

std::string ChildProcess::ReadErr() const { return ReadWholeFile(dir_.File("stderr")); }

}  // namespace barrage::testing
