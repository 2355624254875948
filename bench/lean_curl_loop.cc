// The reference ceiling for barrage's engine: the leanest libcurl client we know how to write.
// One thread, curl_multi_socket_action on epoll, N easy handles reused forever, keep-alive,
// NOSIGNAL, TCP_NODELAY, response bodies discarded, nothing recorded. barrage records every
// request on top of the same library, so its rate over this one's is the engine's overhead.
//
// Usage: lean_curl_loop --url http://127.0.0.1:PORT/ [--connections 64] [--duration 8]
//                       [--keep-registered 1]
// Prints: requests=N seconds=S rate=R failed=F (requests: answered with 2xx or 3xx; exit 2 when
// any failed or none succeeded)
//
// By default a socket leaves epoll when curl says CURL_POLL_REMOVE (after every request, when its
// handle is removed) and comes back when the handle is re-added: the plain ephiperfifo.c pattern,
// as barrage's engine does it. --keep-registered 1 measures the cheaper alternative: a connection
// socket (made by our CURLOPT_OPENSOCKETFUNCTION) stays registered until curl closes it through
// CURLOPT_CLOSESOCKETFUNCTION, so a keep-alive request costs no epoll_ctl at all when curl asks
// for the same events as last time.

#include <curl/curl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// The event loop's state, shared with curl's callbacks through their user pointers.
struct Loop {
  CURLM* multi = nullptr;
  int epoll_fd = -1;
  int timer_fd = -1;
  bool timer_armed = false;
  bool timeout_due = false;
  bool keep_registered = false;
  std::vector<uint32_t> registered;  // by fd: the epoll events it is registered for, 0 if none
  std::vector<char> watched;         // by fd: whether curl currently wants its events
  std::vector<char> connection;      // by fd: a socket OnOpen made, which OnClose will close
};

void Track(Loop* loop, curl_socket_t fd) {
  if (static_cast<size_t>(fd) >= loop->registered.size()) {
    loop->registered.resize(fd + 1, 0);
    loop->watched.resize(fd + 1, 0);
    loop->connection.resize(fd + 1, 0);
  }
}

double NowSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int OnSocket(CURL*, curl_socket_t fd, int what, void* user, void*) {
  auto* loop = static_cast<Loop*>(user);
  Track(loop, fd);
  if (what == CURL_POLL_REMOVE) {
    loop->watched[fd] = 0;
    // Only connection sockets may stay: curl closes others (a resolver's socketpair) without
    // OnClose, and a stale entry would hide the registration a reused fd number needs.
    const bool keep = loop->keep_registered && loop->connection[fd];
    if (!keep && loop->registered[fd] != 0) {
      epoll_ctl(loop->epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
      loop->registered[fd] = 0;
    }
    return 0;
  }
  uint32_t events = 0;
  if (what & CURL_POLL_IN) {
    events |= EPOLLIN;
  }
  if (what & CURL_POLL_OUT) {
    events |= EPOLLOUT;
  }
  loop->watched[fd] = 1;
  if (loop->registered[fd] == events) {
    return 0;
  }
  epoll_event event{};
  event.events = events;
  event.data.fd = fd;
  epoll_ctl(loop->epoll_fd, loop->registered[fd] == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event);
  loop->registered[fd] = events;
  return 0;
}

curl_socket_t OnOpen(void* user, curlsocktype, curl_sockaddr* address) {
  auto* loop = static_cast<Loop*>(user);
  const curl_socket_t fd = socket(address->family, address->socktype, address->protocol);
  if (fd == CURL_SOCKET_BAD) {
    return fd;
  }
  Track(loop, fd);
  loop->connection[fd] = 1;
  return fd;
}

// Closing a socket drops its epoll registration in the kernel; forget it here too, since the
// next socket curl opens may get the same number.
int OnClose(void* user, curl_socket_t fd) {
  auto* loop = static_cast<Loop*>(user);
  Track(loop, fd);
  loop->registered[fd] = 0;
  loop->watched[fd] = 0;
  loop->connection[fd] = 0;
  return close(fd);
}

int OnTimer(CURLM*, long timeout_ms, void* user) {
  auto* loop = static_cast<Loop*>(user);
  if (timeout_ms == 0) {
    loop->timeout_due = true;  // handled by the loop: no syscall
    return 0;
  }
  if (timeout_ms < 0 && !loop->timer_armed) {
    return 0;
  }
  itimerspec spec{};
  if (timeout_ms > 0) {
    spec.it_value.tv_sec = timeout_ms / 1000;
    spec.it_value.tv_nsec = (timeout_ms % 1000) * 1000000;
  }
  loop->timer_armed = timeout_ms > 0;
  timerfd_settime(loop->timer_fd, 0, &spec, nullptr);
  return 0;
}

size_t Discard(char*, size_t size, size_t count, void*) { return size * count; }

}  // namespace

int main(int argc, char** argv) {
  std::string url;
  int connections = 64;
  double duration = 8;
  bool keep_registered = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--url") == 0) {
      url = argv[i + 1];
    } else if (std::strcmp(argv[i], "--connections") == 0) {
      connections = std::atoi(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--duration") == 0) {
      duration = std::atof(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--keep-registered") == 0) {
      keep_registered = std::atoi(argv[i + 1]) != 0;
    }
  }
  if (url.rfind("http://127.", 0) != 0 || connections < 1 || duration <= 0 || duration > 600) {
    std::fprintf(stderr,
                 "usage: lean_curl_loop --url http://127.x.x.x:PORT/ [--connections N] "
                 "[--duration SECONDS (<= 600)] [--keep-registered 0|1]\n");
    return 1;
  }

  curl_global_init(CURL_GLOBAL_ALL);
  Loop loop;
  loop.keep_registered = keep_registered;
  loop.multi = curl_multi_init();
  loop.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  loop.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  epoll_event timer_event{};
  timer_event.events = EPOLLIN;
  timer_event.data.fd = loop.timer_fd;
  epoll_ctl(loop.epoll_fd, EPOLL_CTL_ADD, loop.timer_fd, &timer_event);
  curl_multi_setopt(loop.multi, CURLMOPT_SOCKETFUNCTION, OnSocket);
  curl_multi_setopt(loop.multi, CURLMOPT_SOCKETDATA, &loop);
  curl_multi_setopt(loop.multi, CURLMOPT_TIMERFUNCTION, OnTimer);
  curl_multi_setopt(loop.multi, CURLMOPT_TIMERDATA, &loop);

  std::vector<CURL*> handles;
  for (int i = 0; i < connections; ++i) {
    CURL* easy = curl_easy_init();
    curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, Discard);
    if (keep_registered) {
      curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, OnOpen);
      curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, &loop);
      curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, OnClose);
      curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, &loop);
    }
    curl_multi_add_handle(loop.multi, easy);
    handles.push_back(easy);
  }

  const double start = NowSeconds();
  const double end = start + duration;
  unsigned long long requests = 0;  // successful
  unsigned long long failed = 0;
  int running = 0;
  epoll_event events[64];
  while (NowSeconds() < end) {
    if (loop.timeout_due) {
      loop.timeout_due = false;
      curl_multi_socket_action(loop.multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
    // Bounded wait, so the run ends on time even if every transfer stalls.
    const int ready = epoll_wait(loop.epoll_fd, events, 64, loop.timeout_due ? 0 : 100);
    for (int i = 0; i < ready; ++i) {
      const int fd = events[i].data.fd;
      if (fd == loop.timer_fd) {
        uint64_t expirations;
        [[maybe_unused]] ssize_t n = read(fd, &expirations, sizeof expirations);
        loop.timer_armed = false;
        curl_multi_socket_action(loop.multi, CURL_SOCKET_TIMEOUT, 0, &running);
        continue;
      }
      if (!loop.watched[fd]) {
        // An idle kept-alive socket curl is not watching (the server closed it, say): stop
        // listening, or level-triggered epoll would report it on every pass.
        epoll_ctl(loop.epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
        loop.registered[fd] = 0;
        continue;
      }
      int action = 0;
      if (events[i].events & EPOLLIN) {
        action |= CURL_CSELECT_IN;
      }
      if (events[i].events & EPOLLOUT) {
        action |= CURL_CSELECT_OUT;
      }
      if (events[i].events & (EPOLLERR | EPOLLHUP)) {
        action |= CURL_CSELECT_ERR;
      }
      curl_multi_socket_action(loop.multi, fd, action, &running);
    }
    int pending = 0;
    while (CURLMsg* message = curl_multi_info_read(loop.multi, &pending)) {
      if (message->msg != CURLMSG_DONE) {
        continue;
      }
      long status = 0;
      curl_easy_getinfo(message->easy_handle, CURLINFO_RESPONSE_CODE, &status);
      if (message->data.result == CURLE_OK && status >= 200 && status < 400) {
        ++requests;
      } else {
        ++failed;
      }
      CURL* easy = message->easy_handle;
      curl_multi_remove_handle(loop.multi, easy);
      curl_multi_add_handle(loop.multi, easy);  // the same handle, the same connection
    }
  }
  const double seconds = NowSeconds() - start;
  std::printf("requests=%llu seconds=%.3f rate=%.0f failed=%llu\n", requests, seconds,
              static_cast<double>(requests) / seconds, failed);
  for (CURL* easy : handles) {
    curl_multi_remove_handle(loop.multi, easy);
    curl_easy_cleanup(easy);
  }
  curl_multi_cleanup(loop.multi);
  curl_global_cleanup();
  return requests > 0 && failed == 0 ? 0 : 2;
}
