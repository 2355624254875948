// stall_target: a tiny single-threaded HTTP/1.1 keep-alive server for coordinated-omission tests.
// It answers every request at once with 200 "ok\n", except during periodic stall windows: from
// its start, window k covers [k*every + (every - for), (k+1)*every); requests that complete
// inside a window are held, and all their responses are sent when the window ends.
//
//   stall_target --listen 127.0.0.1:PORT [--stall-every MS] [--stall-for MS] [--max-seconds N]
//
// PORT 0 picks a free port. Once listening it prints "listening on <port>" on stdout. It exits
// by itself after --max-seconds (default 120). Requests are parsed minimally: headers end at
// CRLFCRLF, a Content-Length body is skipped, "Connection: close" closes after the response;
// chunked request bodies are refused by closing the connection.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace barrage::testing {
namespace {

constexpr std::string_view kResponse = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n";
constexpr std::string_view kClosingResponse =
    "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\nok\n";
constexpr size_t kMaxHeaderBytes = 64 * 1024;
constexpr uint64_t kMaxBodyBytes = 64 * 1024 * 1024;
constexpr int64_t kNanosPerMilli = 1'000'000;

// Command-line settings, with their defaults.
struct Flags {
  std::string host = "127.0.0.1";
  int port = 0;
  int64_t stall_every_ms = 3000;
  int64_t stall_for_ms = 1000;
  int64_t max_seconds = 120;
};

bool ParseInt(std::string_view text, int64_t* value) {
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, *value);
  return error == std::errc() && ptr == end;
}

// @return an empty string on success, else what is wrong.
std::string ParseFlags(int argc, char** argv, Flags* flags) {
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (i + 1 >= argc) {
      return std::string(flag) + ": missing value";
    }
    std::string_view value = argv[++i];
    if (flag == "--listen") {
      size_t colon = value.rfind(':');
      int64_t port = 0;
      if (colon == std::string_view::npos || !ParseInt(value.substr(colon + 1), &port) ||
          port < 0 || port > 65535) {
        return "--listen: expected HOST:PORT, got \"" + std::string(value) + "\"";
      }
      flags->host = std::string(value.substr(0, colon));
      flags->port = static_cast<int>(port);
    } else if (flag == "--stall-every") {
      if (!ParseInt(value, &flags->stall_every_ms) || flags->stall_every_ms <= 0) {
        return "--stall-every: expected a positive number of milliseconds";
      }
    } else if (flag == "--stall-for") {
      if (!ParseInt(value, &flags->stall_for_ms) || flags->stall_for_ms < 0) {
        return "--stall-for: expected a non-negative number of milliseconds";
      }
    } else if (flag == "--max-seconds") {
      if (!ParseInt(value, &flags->max_seconds) || flags->max_seconds <= 0) {
        return "--max-seconds: expected a positive number of seconds";
      }
    } else {
      return "unknown flag " + std::string(flag);
    }
  }
  if (flags->stall_for_ms >= flags->stall_every_ms) {
    return "--stall-for must be shorter than --stall-every";
  }
  return "";
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool ContainsIgnoreCase(std::string_view haystack, std::string_view needle) {
  if (needle.size() > haystack.size()) {
    return false;
  }
  for (size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    if (EqualsIgnoreCase(haystack.substr(i, needle.size()), needle)) {
      return true;
    }
  }
  return false;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  return text;
}

// The parts of one request's header block that matter here.
struct RequestHead {
  uint64_t content_length = 0;
  bool close = false;
};

// @return false for a header block this server refuses (bad Content-Length, chunked body).
bool ParseHead(std::string_view head, RequestHead* parsed) {
  size_t line_start = head.find("\r\n");  // skip the request line
  while (line_start != std::string_view::npos && line_start + 2 < head.size()) {
    line_start += 2;
    size_t line_end = head.find("\r\n", line_start);
    std::string_view line =
        head.substr(line_start, line_end == std::string_view::npos ? std::string_view::npos
                                                                   : line_end - line_start);
    size_t colon = line.find(':');
    if (colon != std::string_view::npos) {
      std::string_view name = Trim(line.substr(0, colon));
      std::string_view value = Trim(line.substr(colon + 1));
      if (EqualsIgnoreCase(name, "content-length")) {
        int64_t length = 0;
        if (!ParseInt(value, &length) || length < 0 ||
            static_cast<uint64_t>(length) > kMaxBodyBytes) {
          return false;
        }
        parsed->content_length = static_cast<uint64_t>(length);
      } else if (EqualsIgnoreCase(name, "transfer-encoding")) {
        return false;
      } else if (EqualsIgnoreCase(name, "connection") && ContainsIgnoreCase(value, "close")) {
        parsed->close = true;
      }
    }
    line_start = line_end;
  }
  return true;
}

int64_t MonotonicNowNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

// One client connection: bytes read but not yet parsed, responses not yet written, and how many
// responses are held by the current stall.
struct Connection {
  std::string in;
  std::string out;
  size_t out_offset = 0;
  uint64_t held = 0;
  bool closing = false;        // a request asked for Connection: close; no further requests
  bool want_writable = false;  // EPOLLOUT is registered
};

// The server: one epoll loop over the listening socket, the connections, a timerfd for the stall
// windows and a timerfd for --max-seconds. Life cycle: Listen(), then Run() until the deadline.
class StallServer {
 public:
  explicit StallServer(const Flags& flags) : flags_(flags) {}
  ~StallServer() {
    for (const auto& [fd, connection] : connections_) {
      close(fd);
    }
    for (int fd : {listen_fd_, stall_timer_fd_, stop_timer_fd_, epoll_fd_}) {
      if (fd >= 0) {
        close(fd);
      }
    }
  }
  StallServer(const StallServer&) = delete;
  StallServer& operator=(const StallServer&) = delete;

  // Binds and listens. @return an empty string on success, else what failed.
  std::string Listen() {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) {
      return Errno("socket");
    }
    int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(flags_.port));
    if (inet_pton(AF_INET, flags_.host.c_str(), &address.sin_addr) != 1) {
      return "--listen: \"" + flags_.host + "\" is not an IPv4 address";
    }
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
      return Errno("bind");
    }
    if (listen(listen_fd_, SOMAXCONN) != 0) {
      return Errno("listen");
    }
    socklen_t length = sizeof(address);
    if (getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      return Errno("getsockname");
    }
    port_ = ntohs(address.sin_port);
    return "";
  }

  int port() const { return port_; }

  // Serves until --max-seconds have passed. @return the process exit code.
  int Run() {
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    stall_timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    stop_timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (epoll_fd_ < 0 || stall_timer_fd_ < 0 || stop_timer_fd_ < 0) {
      std::fprintf(stderr, "stall_target: %s\n", Errno("epoll/timerfd").c_str());
      return 1;
    }
    start_ns_ = MonotonicNowNs();
    ArmAt(stop_timer_fd_, start_ns_ + flags_.max_seconds * 1'000'000'000);
    if (flags_.stall_for_ms > 0) {
      ArmNextStallBoundary();
    }
    for (int fd : {listen_fd_, stall_timer_fd_, stop_timer_fd_}) {
      Watch(fd, EPOLLIN, EPOLL_CTL_ADD);
    }

    std::vector<epoll_event> events(256);
    while (true) {
      int ready = epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), -1);
      if (ready < 0) {
        if (errno == EINTR) {
          continue;
        }
        std::fprintf(stderr, "stall_target: %s\n", Errno("epoll_wait").c_str());
        return 1;
      }
      for (int i = 0; i < ready; ++i) {
        const int fd = events[i].data.fd;
        if (fd == stop_timer_fd_) {
          return 0;
        }
        if (fd == listen_fd_) {
          AcceptAll();
        } else if (fd == stall_timer_fd_) {
          OnStallBoundary();
        } else {
          OnConnectionEvent(fd, events[i].events);
        }
      }
    }
  }

 private:
  static std::string Errno(const char* what) {
    return std::string(what) + ": " + std::strerror(errno);
  }

  void Watch(int fd, uint32_t events, int op) {
    epoll_event event{};
    event.events = events;
    event.data.fd = fd;
    epoll_ctl(epoll_fd_, op, fd, &event);
  }

  static void ArmAt(int timer_fd, int64_t when_ns) {
    itimerspec spec{};
    spec.it_value.tv_sec = when_ns / 1'000'000'000;
    spec.it_value.tv_nsec = when_ns % 1'000'000'000;
    timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &spec, nullptr);
  }

  // Absolute times from the start, so late wake-ups never drift the windows.
  void ArmNextStallBoundary() {
    const int64_t every = flags_.stall_every_ms * kNanosPerMilli;
    const int64_t stall = flags_.stall_for_ms * kNanosPerMilli;
    const int64_t window_start = start_ns_ + window_ * every;
    ArmAt(stall_timer_fd_, stalled_ ? window_start + every : window_start + every - stall);
  }

  void OnStallBoundary() {
    uint64_t expirations = 0;
    if (read(stall_timer_fd_, &expirations, sizeof(expirations)) < 0) {
      return;  // spurious wake-up
    }
    if (!stalled_) {
      stalled_ = true;
    } else {
      stalled_ = false;
      ++window_;
      ReleaseHeld();
    }
    ArmNextStallBoundary();
  }

  void ReleaseHeld() {
    std::vector<int> to_close;
    for (auto& [fd, connection] : connections_) {
      if (connection.held == 0) {
        continue;
      }
      AppendResponses(connection, connection.held);
      connection.held = 0;
      if (!Flush(fd, connection)) {
        to_close.push_back(fd);
      }
    }
    for (int fd : to_close) {
      CloseConnection(fd);
    }
  }

  void AcceptAll() {
    while (true) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        return;  // EAGAIN, or a transient error such as EMFILE: try again on the next event
      }
      connections_.emplace(fd, Connection{});
      Watch(fd, EPOLLIN, EPOLL_CTL_ADD);
    }
  }

  void OnConnectionEvent(int fd, uint32_t events) {
    auto found = connections_.find(fd);
    if (found == connections_.end()) {
      return;  // closed earlier in this batch of events
    }
    Connection& connection = found->second;
    bool keep = true;
    if (events & (EPOLLERR | EPOLLHUP)) {
      keep = false;
    } else {
      if (events & EPOLLIN) {
        keep = OnReadable(fd, connection);
      }
      if (keep && (events & EPOLLOUT)) {
        keep = Flush(fd, connection);
      }
    }
    if (!keep) {
      CloseConnection(fd);
    }
  }

  // @return false when the connection must be closed.
  bool OnReadable(int fd, Connection& connection) {
    char buffer[16384];
    ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n == 0) {
      return false;
    }
    if (n < 0) {
      return errno == EAGAIN || errno == EINTR;
    }
    if (connection.closing) {
      return true;  // nothing after a Connection: close request is answered
    }
    connection.in.append(buffer, static_cast<size_t>(n));
    while (!connection.closing) {
      size_t head_end = connection.in.find("\r\n\r\n");
      if (head_end == std::string::npos) {
        if (connection.in.size() > kMaxHeaderBytes) {
          return false;
        }
        break;
      }
      RequestHead head;
      if (!ParseHead(std::string_view(connection.in).substr(0, head_end), &head)) {
        return false;
      }
      const uint64_t request_bytes = head_end + 4 + head.content_length;
      if (connection.in.size() < request_bytes) {
        break;  // the body is still arriving
      }
      connection.in.erase(0, request_bytes);
      connection.closing = head.close;
      if (stalled_) {
        ++connection.held;
      } else {
        AppendResponses(connection, 1);
      }
    }
    return Flush(fd, connection);
  }

  // Queues `count` responses; the last one says Connection: close when the client asked for it
  // (a close request is always the last one a connection gets answered).
  static void AppendResponses(Connection& connection, uint64_t count) {
    for (uint64_t i = 0; i < count; ++i) {
      const bool last = i + 1 == count;
      connection.out.append(last && connection.closing ? kClosingResponse : kResponse);
    }
  }

  // Writes what it can of the pending responses.
  // @return false when the connection must be closed (write error, or done after a close request).
  bool Flush(int fd, Connection& connection) {
    while (connection.out_offset < connection.out.size()) {
      ssize_t n = send(fd, connection.out.data() + connection.out_offset,
                       connection.out.size() - connection.out_offset, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) {
          continue;
        }
        if (errno != EAGAIN) {
          return false;
        }
        if (!connection.want_writable) {
          connection.want_writable = true;
          Watch(fd, EPOLLIN | EPOLLOUT, EPOLL_CTL_MOD);
        }
        return true;
      }
      connection.out_offset += static_cast<size_t>(n);
    }
    connection.out.clear();
    connection.out_offset = 0;
    if (connection.want_writable) {
      connection.want_writable = false;
      Watch(fd, EPOLLIN, EPOLL_CTL_MOD);
    }
    return !(connection.closing && connection.held == 0);
  }

  void CloseConnection(int fd) {
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    close(fd);
    connections_.erase(fd);
  }

  const Flags flags_;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int stall_timer_fd_ = -1;
  int stop_timer_fd_ = -1;
  int port_ = 0;
  int64_t start_ns_ = 0;
  int64_t window_ = 0;  // index k of the current (or next) stall window
  bool stalled_ = false;
  std::unordered_map<int, Connection> connections_;
};

}  // namespace
}  // namespace barrage::testing

int main(int argc, char** argv) {
  barrage::testing::Flags flags;
  if (std::string error = barrage::testing::ParseFlags(argc, argv, &flags); !error.empty()) {
    std::fprintf(stderr,
                 "stall_target: %s\nusage: stall_target --listen 127.0.0.1:PORT "
                 "[--stall-every MS] [--stall-for MS] [--max-seconds N]\n",
                 error.c_str());
    return 1;
  }
  barrage::testing::StallServer server(flags);
  if (std::string error = server.Listen(); !error.empty()) {
    std::fprintf(stderr, "stall_target: %s\n", error.c_str());
    return 1;
  }
  std::printf("listening on %d\n", server.port());
  std::fflush(stdout);
  return server.Run();
}
