#include "barrage/agent/http_worker.h"

#include <curl/curl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <mutex>
#include <vector>

#include "barrage/common/weighted_slices.h"

namespace barrage::agent {
namespace {

using common::ErrorClass;
using common::Nanos;
using common::RequestRecord;

constexpr Nanos kNever = INT64_MAX;

Nanos ThreadCpuNowNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return Nanos{ts.tv_sec} * common::kNanosPerSecond + ts.tv_nsec;
}

// Arms `fd` to fire once at the absolute monotonic instant `at` (kNever disarms).
void ArmTimerAt(int fd, Nanos at) {
  itimerspec spec{};
  if (at != kNever) {
    // An instant of 0 would disarm the timer; the past is fine, it fires at once.
    const Nanos when = std::max<Nanos>(at, 1);
    spec.it_value.tv_sec = when / common::kNanosPerSecond;
    spec.it_value.tv_nsec = when % common::kNanosPerSecond;
  }
  timerfd_settime(fd, TFD_TIMER_ABSTIME, &spec, nullptr);
}

void DrainFd(int fd) {
  uint64_t value;
  while (read(fd, &value, sizeof value) > 0) {
  }
}

ErrorClass ClassifyResult(CURLcode code, long status) {
  switch (code) {
    case CURLE_OK:
      if (status >= 500) return ErrorClass::kHttp5xx;
      if (status >= 400) return ErrorClass::kHttp4xx;
      if (status < 100) return ErrorClass::kProtocol;
      return ErrorClass::kNone;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
      return ErrorClass::kConnect;
    case CURLE_OPERATION_TIMEDOUT:
      return ErrorClass::kTimeout;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CLIENTCERT:
    case CURLE_USE_SSL_FAILED:
      return ErrorClass::kTls;
    case CURLE_ABORTED_BY_CALLBACK:
      return ErrorClass::kCancelled;
    default:
      // Resets, empty replies, malformed responses: the connection was made, the exchange failed.
      return ErrorClass::kProtocol;
  }
}

Nanos MicrosInfo(CURL* easy, CURLINFO info) {
  curl_off_t micros = 0;
  curl_easy_getinfo(easy, info, &micros);
  return static_cast<Nanos>(micros) * common::kNanosPerMicro;
}

// curl's cumulative stamps (from the transfer's start) turned into phase durations.
common::PhaseTimings ReadPhases(CURL* easy) {
  const Nanos dns = MicrosInfo(easy, CURLINFO_NAMELOOKUP_TIME_T);
  const Nanos connect = MicrosInfo(easy, CURLINFO_CONNECT_TIME_T);
  const Nanos tls = MicrosInfo(easy, CURLINFO_APPCONNECT_TIME_T);
  const Nanos pretransfer = MicrosInfo(easy, CURLINFO_PRETRANSFER_TIME_T);
  const Nanos first_byte = MicrosInfo(easy, CURLINFO_STARTTRANSFER_TIME_T);
  const Nanos total = MicrosInfo(easy, CURLINFO_TOTAL_TIME_T);
  const auto span = [](Nanos from, Nanos to) { return to > from ? to - from : 0; };
  common::PhaseTimings phases;
  phases.dns = dns;
  phases.connect = span(dns, connect);
  phases.tls = tls > 0 ? span(connect, tls) : 0;
  const Nanos ready = std::max(connect, tls);
  phases.send = pretransfer > 0 ? span(ready, pretransfer) : 0;
  if (first_byte > 0) {
    phases.wait = span(pretransfer, first_byte);
    phases.receive = span(first_byte, total);
  } else {
    phases.wait = pretransfer > 0 ? span(pretransfer, total) : 0;
  }
  return phases;
}

}  // namespace

// One easy handle and the state of the request it carries. Slots are created as concurrency
// grows and reused for every later request.
struct Slot {
  CURL* easy = nullptr;
  bool active = false;
  bool measured = false;
  uint64_t arrival_index = 0;
  Nanos scheduled = 0;  // absolute monotonic
  Nanos start = 0;
  Nanos first_byte = 0;  // 0 until the first response byte
  uint64_t bytes_in = 0;
};

class HttpWorker::Impl {
 public:
  Impl(const WorkerShare& share, RecordRing* ring, WorkerCounters* counters, WorkerTotals* totals);
  ~Impl();

  void Run();
  void RequestStop(Nanos grace);

 private:
  static int OnSocket(CURL* easy, curl_socket_t fd, int what, void* user, void* socket_data);
  static int OnCurlTimer(CURLM* multi, long timeout_ms, void* user);
  static curl_socket_t OnOpenSocket(void* user, curlsocktype purpose, curl_sockaddr* address);
  static int OnCloseSocket(void* user, curl_socket_t fd);
  void TrackSocket(size_t index);
  void OnCurlTimerFired();
  static size_t OnHeader(char* data, size_t size, size_t count, void* user);
  static size_t OnBody(char* data, size_t size, size_t count, void* user);

  Slot* AcquireSlot();
  Slot* CreateSlot();
  void Launch(Slot* slot, uint64_t arrival_index, Nanos scheduled, Nanos now);
  void ReapCompleted();
  void Finish(Slot* slot, ErrorClass error, long status);
  void DispatchDue(Nanos now);
  void FillClosedLoop(Nanos now);
  bool OpenLoopIssuable(const common::Arrival& arrival) const;
  bool IssuingOver(Nanos now) const;
  void BeginStop(Nanos now, Nanos grace);
  void CancelAll();
  void CountDroppedArrivals();
  void ArmSchedule(Nanos at);

  const WorkerShare share_;
  const common::LoadSpec& load_;
  RecordRing* const ring_;
  WorkerCounters* const counters_;
  WorkerTotals* const totals_;

  CURLM* multi_ = nullptr;
  curl_slist* headers_ = nullptr;
  int epoll_fd_ = -1;
  int curl_timer_fd_ = -1;
  int schedule_timer_fd_ = -1;  // next arrival, then the grace deadline after a stop
  Nanos schedule_armed_at_ = kNever;
  int stop_fd_ = -1;
  bool curl_timeout_due_ = false;
  Nanos curl_deadline_ = kNever;               // when curl last asked to be driven
  Nanos curl_timer_armed_at_ = kNever;         // what curl_timer_fd_ is set to; may be earlier
  std::vector<uint32_t> socket_events_;        // by fd: epoll events registered, 0 if none
  std::vector<uint8_t> socket_watched_;        // by fd: whether curl wants events from it now
  std::vector<uint8_t> socket_is_connection_;  // by fd: made by OnOpenSocket, closed by OnClose

  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<Slot*> free_slots_;
  uint32_t in_flight_ = 0;
  uint32_t in_flight_limit_ = 0;
  bool engine_is_limit_ = false;  // no user cap: the limit is kEngineMaxInFlight

  // Instants, absolute monotonic.
  const Nanos start_at_;
  const Nanos measure_at_;
  const Nanos end_at_;  // no new request at or after this instant (kNever: no time limit)

  // Open loop.
  common::ArrivalProcessPtr arrivals_;
  common::Arrival next_arrival_;
  uint64_t arrival_index_limit_ = UINT64_MAX;  // global index of the first arrival not to send
  bool waiting_for_slot_ = false;              // an arrival was due while every slot was busy

  // Closed loop.
  uint64_t measured_started_ = 0;
  uint64_t closed_loop_sequence_ = 0;

  bool stopping_ = false;
  Nanos grace_deadline_ = kNever;
  std::atomic<Nanos> stop_grace_{0};

  // Heartbeat counters mirrored locally, so the atomics are only ever stored to.
  uint64_t sent_ = 0;
  uint64_t done_ = 0;
  uint64_t errors_ = 0;
};

HttpWorker::Impl::Impl(const WorkerShare& share, RecordRing* ring, WorkerCounters* counters,
                       WorkerTotals* totals)
    : share_(share),
      load_(share.plan->load),
      ring_(ring),
      counters_(counters),
      totals_(totals),
      start_at_(share.start_at),
      measure_at_(share.start_at + share.plan->load.warmup),
      end_at_(share.plan->load.duration > 0 ? measure_at_ + share.plan->load.duration : kNever) {
  // curl_global_init is not thread-safe in curl 7.88: once, before any handle exists.
  static std::once_flag curl_initialized;
  std::call_once(curl_initialized, [] { curl_global_init(CURL_GLOBAL_ALL); });
  multi_ = curl_multi_init();
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &Impl::OnSocket);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &Impl::OnCurlTimer);
  curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);

  for (const std::string& header : share.plan->request.headers) {
    headers_ = curl_slist_append(headers_, header.c_str());
  }
  // curl would otherwise wait for "100 Continue" before sending larger bodies.
  headers_ = curl_slist_append(headers_, "Expect:");

  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  curl_timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  schedule_timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  stop_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  for (int fd : {curl_timer_fd_, schedule_timer_fd_, stop_fd_}) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event);
  }

  if (load_.open_loop()) {
    in_flight_limit_ = share.concurrency > 0 ? share.concurrency : kEngineMaxInFlight;
    engine_is_limit_ = share.concurrency == 0;
    // Every worker derives the same global timeline and keeps its slice of it.
    const auto make_timeline = [&] {
      return common::MakeArrivalProcess(load_.arrival, *load_.rate, load_.burstiness, load_.seed);
    };
    if (load_.requests > 0) {
      // Requests are counted from the first arrival after warm-up; find its global index.
      common::ArrivalProcessPtr timeline = make_timeline();
      common::Arrival arrival = timeline->Next();
      while (arrival.offset < load_.warmup) arrival = timeline->Next();
      arrival_index_limit_ = arrival.index + load_.requests;
    }
    common::ArrivalProcessPtr agent_slice;
    if (share.agent_slice_weights != nullptr && !share.agent_slice_weights->empty()) {
      // DecodeShare and the coordinator validated the weights; Make cannot fail here.
      absl::StatusOr<common::WeightedSlices> slices =
          common::WeightedSlices::Make(*share.agent_slice_weights);
      agent_slice =
          slices.ok() ? common::MakeWeightedSlice(make_timeline(), *slices, share.agent_slice_index)
                      : common::MakeSlicedArrivals(make_timeline(), share.agent_slice_index,
                                                   share.agent_slice_count);
    } else {
      agent_slice = common::MakeSlicedArrivals(make_timeline(), share.agent_slice_index,
                                               share.agent_slice_count);
    }
    arrivals_ =
        common::MakeSlicedArrivals(std::move(agent_slice), share.worker_index, share.worker_count);
    next_arrival_ = arrivals_->Next();
  } else {
    in_flight_limit_ = share.concurrency;
  }
  free_slots_.reserve(in_flight_limit_);
}

HttpWorker::Impl::~Impl() {
  for (auto& slot : slots_) {
    if (slot->active) curl_multi_remove_handle(multi_, slot->easy);
    curl_easy_cleanup(slot->easy);
  }
  curl_multi_cleanup(multi_);
  curl_slist_free_all(headers_);
  for (int fd : {epoll_fd_, curl_timer_fd_, schedule_timer_fd_, stop_fd_}) {
    if (fd >= 0) close(fd);
  }
}

Slot* HttpWorker::Impl::CreateSlot() {
  auto slot = std::make_unique<Slot>();
  CURL* easy = curl_easy_init();
  const common::HttpRequestSpec& request = share_.plan->request;
  curl_easy_setopt(easy, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
  // Straight to the target, as wrk does: a proxy picked up from http_proxy would measure the
  // proxy, and curl would read those variables on every request.
  curl_easy_setopt(easy, CURLOPT_PROXY, "");
  curl_easy_setopt(easy, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(std::max<Nanos>(1, load_.timeout / common::kNanosPerMilli)));
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers_);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &Impl::OnHeader);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, slot.get());
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Impl::OnBody);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, slot.get());
  curl_easy_setopt(easy, CURLOPT_PRIVATE, slot.get());
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, &Impl::OnOpenSocket);
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, this);
  curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, &Impl::OnCloseSocket);
  curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, this);
  if (request.method == "HEAD") {
    curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
  } else if (!request.body.empty() || request.method == "POST") {
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  }
  if (request.method != "GET" && request.method != "POST" && request.method != "HEAD") {
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  } else if (request.method == "GET" && !request.body.empty()) {
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, "GET");
  }
  slot->easy = easy;
  slots_.push_back(std::move(slot));
  return slots_.back().get();
}

Slot* HttpWorker::Impl::AcquireSlot() {
  if (in_flight_ >= in_flight_limit_) return nullptr;
  if (free_slots_.empty()) return CreateSlot();  // allocates only while concurrency grows
  Slot* slot = free_slots_.back();
  free_slots_.pop_back();
  return slot;
}

void HttpWorker::Impl::Launch(Slot* slot, uint64_t arrival_index, Nanos scheduled, Nanos now) {
  slot->active = true;
  slot->measured = scheduled >= measure_at_;
  slot->arrival_index = arrival_index;
  slot->scheduled = scheduled;
  slot->first_byte = 0;
  slot->bytes_in = 0;
  slot->start = now;
  ++in_flight_;
  counters_->in_flight.store(in_flight_, std::memory_order_relaxed);
  counters_->sent.store(++sent_, std::memory_order_relaxed);
  curl_multi_add_handle(multi_, slot->easy);  // asks, via OnCurlTimer, to be driven at once
}

void HttpWorker::Impl::ArmSchedule(Nanos at) {
  // One timerfd_settime per new instant, not per loop pass.
  if (at == schedule_armed_at_) return;
  schedule_armed_at_ = at;
  ArmTimerAt(schedule_timer_fd_, at);
}

bool HttpWorker::Impl::OpenLoopIssuable(const common::Arrival& arrival) const {
  return arrival.index < arrival_index_limit_ && start_at_ + arrival.offset < end_at_;
}

void HttpWorker::Impl::DispatchDue(Nanos now) {
  while (!stopping_ && OpenLoopIssuable(next_arrival_)) {
    const Nanos scheduled = start_at_ + next_arrival_.offset;
    if (scheduled > now) {
      waiting_for_slot_ = false;
      ArmSchedule(scheduled);
      return;
    }
    // After the end, an arrival that is only late is still sent; one that waited for a slot
    // is dropped (and counted), so a slow target cannot stretch the run.
    if (waiting_for_slot_ && now >= end_at_) break;
    Slot* slot = AcquireSlot();
    if (slot == nullptr) {
      // Every slot is busy: the arrival waits (its wait is its client queue time). The next
      // completion dispatches it; no timer until then.
      waiting_for_slot_ = true;
      ArmSchedule(kNever);
      return;
    }
    if (waiting_for_slot_) {
      if (engine_is_limit_) ++totals_->engine_limited_arrivals;
    } else if (scheduled >= measure_at_) {
      // Dispatched on its timer: how late the loop was is the client's own schedule lag.
      totals_->schedule_lag.Record(static_cast<uint64_t>(now - scheduled));
    }
    Launch(slot, next_arrival_.index, scheduled, now);
    next_arrival_ = arrivals_->Next();
    now = common::MonotonicNowNs();
  }
  ArmSchedule(stopping_ ? grace_deadline_ : kNever);
}

void HttpWorker::Impl::FillClosedLoop(Nanos now) {
  while (!stopping_ && now < end_at_ &&
         (share_.requests == 0 || measured_started_ < share_.requests)) {
    Slot* slot = AcquireSlot();
    if (slot == nullptr) return;
    if (now >= measure_at_) ++measured_started_;
    const uint64_t index = closed_loop_sequence_++ * share_.worker_count + share_.worker_index;
    Launch(slot, index * share_.agent_slice_count + share_.agent_slice_index, now, now);
    now = common::MonotonicNowNs();
  }
}

bool HttpWorker::Impl::IssuingOver(Nanos now) const {
  if (stopping_) return true;
  if (load_.open_loop()) {
    return !OpenLoopIssuable(next_arrival_) || (waiting_for_slot_ && now >= end_at_);
  }
  return now >= end_at_ || (share_.requests > 0 && measured_started_ >= share_.requests);
}

void HttpWorker::Impl::Finish(Slot* slot, ErrorClass error, long status) {
  const Nanos end = common::MonotonicNowNs();
  curl_multi_remove_handle(multi_, slot->easy);
  if (slot->measured) {
    RequestRecord record;
    record.arrival_index = slot->arrival_index;
    record.scheduled = slot->scheduled - measure_at_;
    record.start = slot->start - measure_at_;
    record.ttfb = slot->first_byte > 0 ? slot->first_byte - measure_at_ : 0;
    record.end = end - measure_at_;
    record.bytes_in = slot->bytes_in;
    long request_size = 0;
    curl_easy_getinfo(slot->easy, CURLINFO_REQUEST_SIZE, &request_size);
    curl_off_t uploaded = 0;
    curl_easy_getinfo(slot->easy, CURLINFO_SIZE_UPLOAD_T, &uploaded);
    record.bytes_out = static_cast<uint64_t>(request_size) + static_cast<uint64_t>(uploaded);
    record.phases = ReadPhases(slot->easy);
    record.status = static_cast<uint16_t>(std::clamp<long>(status, 0, 999));
    record.error = error;
    if (record.ok()) {
      ++totals_->completed;
      totals_->e2el.Record(static_cast<uint64_t>(record.e2el()));
    } else {
      ++totals_->failed;
    }
    if (!ring_->Push(record)) ++totals_->records_not_streamed;
  }
  if (error != ErrorClass::kNone) counters_->errors.store(++errors_, std::memory_order_relaxed);
  counters_->done.store(++done_, std::memory_order_relaxed);
  slot->active = false;
  --in_flight_;
  counters_->in_flight.store(in_flight_, std::memory_order_relaxed);
  free_slots_.push_back(slot);
}

void HttpWorker::Impl::ReapCompleted() {
  int pending = 0;
  while (CURLMsg* message = curl_multi_info_read(multi_, &pending)) {
    if (message->msg != CURLMSG_DONE) continue;
    Slot* slot = nullptr;
    curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &slot);
    long status = 0;
    curl_easy_getinfo(message->easy_handle, CURLINFO_RESPONSE_CODE, &status);
    const CURLcode result = message->data.result;
    Finish(slot, ClassifyResult(result, status), status);
  }
}

void HttpWorker::Impl::BeginStop(Nanos now, Nanos grace) {
  if (stopping_) return;
  stopping_ = true;
  grace_deadline_ = now + grace;
  ArmSchedule(grace_deadline_);
}

void HttpWorker::Impl::CancelAll() {
  for (auto& slot : slots_) {
    if (slot->active) Finish(slot.get(), ErrorClass::kCancelled, 0);
  }
}

void HttpWorker::Impl::CountDroppedArrivals() {
  // Arrivals the schedule placed inside the run that were never sent (every slot stayed busy
  // until the end). A stop by the user is not a drop.
  if (!load_.open_loop() || stopping_) return;
  uint64_t dropped = 0;
  for (common::Arrival arrival = next_arrival_; OpenLoopIssuable(arrival);
       arrival = arrivals_->Next()) {
    if (start_at_ + arrival.offset >= measure_at_) ++dropped;
  }
  totals_->dropped_arrivals = dropped;
}

void HttpWorker::Impl::RequestStop(Nanos grace) {
  stop_grace_.store(grace, std::memory_order_relaxed);
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t written = write(stop_fd_, &one, sizeof one);
}

int HttpWorker::Impl::OnSocket(CURL*, curl_socket_t fd, int what, void* user, void*) {
  auto* self = static_cast<Impl*>(user);
  const auto index = static_cast<size_t>(fd);
  self->TrackSocket(index);
  if (what == CURL_POLL_REMOVE) {
    self->socket_watched_[index] = 0;
    // A kept-alive connection stays in epoll between requests: its next request then costs no
    // epoll_ctl; OnCloseSocket forgets it. Other sockets (a resolver's socketpair) curl closes
    // without telling us, so they leave now.
    if (!self->socket_is_connection_[index] && self->socket_events_[index] != 0) {
      epoll_ctl(self->epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
      self->socket_events_[index] = 0;
    }
    return 0;
  }
  uint32_t events = 0;
  if (what & CURL_POLL_IN) events |= EPOLLIN;
  if (what & CURL_POLL_OUT) events |= EPOLLOUT;
  self->socket_watched_[index] = 1;
  if (self->socket_events_[index] == events) return 0;
  epoll_event event{};
  event.events = events;
  event.data.fd = fd;
  epoll_ctl(self->epoll_fd_, self->socket_events_[index] == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd,
            &event);
  self->socket_events_[index] = events;
  return 0;
}

void HttpWorker::Impl::TrackSocket(size_t index) {
  if (index < socket_events_.size()) return;
  socket_events_.resize(index + 1, 0);  // only while the number of sockets grows
  socket_watched_.resize(index + 1, 0);
  socket_is_connection_.resize(index + 1, 0);
}

curl_socket_t HttpWorker::Impl::OnOpenSocket(void* user, curlsocktype, curl_sockaddr* address) {
  auto* self = static_cast<Impl*>(user);
  const curl_socket_t fd = socket(address->family, address->socktype, address->protocol);
  if (fd == CURL_SOCKET_BAD) return fd;
  self->TrackSocket(static_cast<size_t>(fd));
  self->socket_is_connection_[static_cast<size_t>(fd)] = 1;
  return fd;
}

int HttpWorker::Impl::OnCloseSocket(void* user, curl_socket_t fd) {
  auto* self = static_cast<Impl*>(user);
  // Closing drops the kernel's registration; the number may come back for a new socket.
  const auto index = static_cast<size_t>(fd);
  self->TrackSocket(index);
  self->socket_events_[index] = 0;
  self->socket_watched_[index] = 0;
  self->socket_is_connection_[index] = 0;
  return close(fd);
}

int HttpWorker::Impl::OnCurlTimer(CURLM*, long timeout_ms, void* user) {
  auto* self = static_cast<Impl*>(user);
  if (timeout_ms < 0) {
    // An armed timer is left to fire: OnCurlTimerFired sees nothing is due.
    self->curl_deadline_ = kNever;
  } else if (timeout_ms == 0) {
    // curl may not be re-entered from its own callback: drive it from the loop instead.
    self->curl_deadline_ = kNever;
    self->curl_timeout_due_ = true;
  } else {
    self->curl_deadline_ = common::MonotonicNowNs() + Nanos{timeout_ms} * common::kNanosPerMilli;
    // A later deadline keeps the earlier timer (it fires early and re-arms): most requests
    // move curl's deadline later, so this saves a timerfd_settime per request.
    if (self->curl_deadline_ < self->curl_timer_armed_at_) {
      self->curl_timer_armed_at_ = self->curl_deadline_;
      ArmTimerAt(self->curl_timer_fd_, self->curl_deadline_);
    }
  }
  return 0;
}

void HttpWorker::Impl::OnCurlTimerFired() {
  curl_timer_armed_at_ = kNever;
  if (curl_deadline_ == kNever) return;
  const Nanos now = common::MonotonicNowNs();
  if (curl_deadline_ <= now) {
    const Nanos asked = curl_deadline_;
    int running = 0;
    curl_multi_socket_action(multi_, CURL_SOCKET_TIMEOUT, 0, &running);
    // curl calls back only when its next deadline changes; if it found nothing expired (ms
    // rounding), look again shortly.
    if (curl_deadline_ != asked) return;
    curl_deadline_ = now + common::kNanosPerMilli;
  }
  curl_timer_armed_at_ = curl_deadline_;
  ArmTimerAt(curl_timer_fd_, curl_deadline_);
}

size_t HttpWorker::Impl::OnHeader(char*, size_t size, size_t count, void* user) {
  auto* slot = static_cast<Slot*>(user);
  if (slot->first_byte == 0) slot->first_byte = common::MonotonicNowNs();
  slot->bytes_in += size * count;
  return size * count;
}

size_t HttpWorker::Impl::OnBody(char*, size_t size, size_t count, void* user) {
  auto* slot = static_cast<Slot*>(user);
  if (slot->first_byte == 0) slot->first_byte = common::MonotonicNowNs();
  slot->bytes_in += size * count;
  return size * count;
}

void HttpWorker::Impl::Run() {
  const Nanos cpu_begin = ThreadCpuNowNs();
  // Load begins at start_at_, an instant shared with the other workers (and agents).
  ArmSchedule(start_at_);
  bool started = false;
  constexpr int kMaxEvents = 64;
  epoll_event events[kMaxEvents];
  int running = 0;

  while (true) {
    Nanos now = common::MonotonicNowNs();
    if (!started && now >= start_at_) started = true;
    if (started) {
      if (load_.open_loop()) {
        DispatchDue(now);
      } else {
        FillClosedLoop(now);
      }
    }
    if (curl_timeout_due_) {
      curl_timeout_due_ = false;
      curl_multi_socket_action(multi_, CURL_SOCKET_TIMEOUT, 0, &running);
      ReapCompleted();
      continue;
    }
    if (stopping_ && in_flight_ > 0 && now >= grace_deadline_) CancelAll();
    if (started && in_flight_ == 0 && IssuingOver(now)) break;

    const int ready = epoll_wait(epoll_fd_, events, kMaxEvents, -1);
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < ready; ++i) {
      const int fd = events[i].data.fd;
      if (fd == curl_timer_fd_) {
        DrainFd(fd);
        OnCurlTimerFired();
      } else if (fd == schedule_timer_fd_) {
        DrainFd(fd);  // the loop's next pass dispatches what is due
        schedule_armed_at_ = kNever;
      } else if (fd == stop_fd_) {
        DrainFd(fd);
        BeginStop(common::MonotonicNowNs(), stop_grace_.load(std::memory_order_relaxed));
      } else if (!socket_watched_[static_cast<size_t>(fd)]) {
        // An idle kept-alive socket curl does not watch (the server closed it, say): stop
        // listening, or level-triggered epoll reports it on every pass.
        epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
        socket_events_[static_cast<size_t>(fd)] = 0;
      } else {
        const uint32_t flags = events[i].events;
        int action = 0;
        if (flags & EPOLLIN) action |= CURL_CSELECT_IN;
        if (flags & EPOLLOUT) action |= CURL_CSELECT_OUT;
        if (flags & (EPOLLERR | EPOLLHUP)) action |= CURL_CSELECT_ERR;
        curl_multi_socket_action(multi_, fd, action, &running);
      }
    }
    ReapCompleted();
  }
  CountDroppedArrivals();
  totals_->cpu_ns = ThreadCpuNowNs() - cpu_begin;
  totals_->wall_ns = common::MonotonicNowNs() - start_at_;
}

HttpWorker::HttpWorker(const WorkerShare& share, RecordRing* ring)
    : impl_(std::make_unique<Impl>(share, ring, &counters_, &totals_)) {}

HttpWorker::~HttpWorker() = default;

void HttpWorker::Run() { impl_->Run(); }

void HttpWorker::RequestStop(Nanos grace) { impl_->RequestStop(grace); }

}  // namespace barrage::agent
