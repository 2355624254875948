#include "barrage/agent/local_agent_session.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "barrage/agent/http_worker.h"
#include "barrage/agent/record_ring.h"
#include "barrage/common/record_codec.h"
#include "barrage/v1/agent.pb.h"

namespace barrage::agent {
namespace {

using common::Nanos;

constexpr auto kBatchInterval = std::chrono::milliseconds(100);
constexpr Nanos kHeartbeatInterval = common::kNanosPerSecond;
// About a second of a worker's records at 50k req/s (8 MiB): ten times the collector's period.
constexpr size_t kRingCapacity = size_t{1} << 16;
// Records per RecordBatch message, so one message stays well under gRPC's 4 MiB default.
constexpr size_t kMaxRecordsPerBatch = 16384;

// One worker thread and what it owns.
struct WorkerSlot {
  std::unique_ptr<RecordRing> ring;
  std::unique_ptr<HttpWorker> worker;
  std::thread thread;
  std::atomic<bool> done{false};
};

class LocalAgentSession : public common::AgentSession {
 public:
  explicit LocalAgentSession(std::string name) : name_(std::move(name)) {}
  ~LocalAgentSession() override {
    Stop(0);
    if (collector_.joinable()) collector_.join();
  }

  const std::string& name() const override { return name_; }

  absl::Status Start(const common::AgentShare& share, Nanos start_at,
                     common::AgentMessageSink* sink) override {
    if (collector_.joinable())
      return absl::FailedPreconditionError("the agent already runs a test");
    if (absl::Status status = common::ValidatePlan(share.plan); !status.ok()) return status;
    share_ = share;
    sink_ = sink;
    // A concurrency split thinner than one request per thread would leave threads idle (closed
    // loop) or uncapped (open loop): use no more threads than the concurrency.
    uint32_t threads = std::max<uint32_t>(1, share_.plan.load.threads);
    if (share_.concurrency > 0) threads = std::min(threads, share_.concurrency);
    workers_.reserve(threads);
    for (uint32_t i = 0; i < threads; ++i) {
      WorkerShare worker_share;
      worker_share.plan = &share_.plan;
      worker_share.agent_slice_index = share_.slice_index;
      worker_share.agent_slice_count = share_.slice_count;
      worker_share.agent_slice_weights = &share_.slice_weights;
      worker_share.worker_index = i;
      worker_share.worker_count = threads;
      worker_share.concurrency =
          static_cast<uint32_t>(common::IntegerShare(share_.concurrency, threads, i));
      worker_share.requests = common::IntegerShare(share_.requests, threads, i);
      worker_share.start_at = start_at;
      auto slot = std::make_unique<WorkerSlot>();
      slot->ring = std::make_unique<RecordRing>(kRingCapacity);
      slot->worker = std::make_unique<HttpWorker>(worker_share, slot->ring.get());
      workers_.push_back(std::move(slot));
    }
    for (auto& slot : workers_) {
      WorkerSlot* raw = slot.get();
      raw->thread = std::thread([this, raw] {
        raw->worker->Run();
        raw->done.store(true, std::memory_order_release);
        std::lock_guard<std::mutex> lock(mutex_);
        wake_.notify_all();
      });
    }
    collector_ = std::thread([this] { Collect(); });
    return absl::OkStatus();
  }

  void Stop(Nanos grace) override {
    for (auto& slot : workers_) slot->worker->RequestStop(grace);
  }

  absl::Status Wait() override {
    if (collector_.joinable()) collector_.join();
    return absl::OkStatus();
  }

 private:
  bool AllDone() const {
    for (const auto& slot : workers_) {
      if (!slot->done.load(std::memory_order_acquire)) return false;
    }
    return true;
  }

  // Drains every ring and sends what it found as RecordBatch messages.
  void FlushRecords() {
    drained_.clear();
    for (auto& slot : workers_) slot->ring->Drain(&drained_);
    for (size_t begin = 0; begin < drained_.size(); begin += kMaxRecordsPerBatch) {
      const size_t count = std::min(kMaxRecordsPerBatch, drained_.size() - begin);
      common::EncodeRecordBatch(std::span(drained_).subspan(begin, count),
                                message_.mutable_records());
      sink_->OnMessage(name_, message_);
    }
  }

  void SendHeartbeat() {
    v1::Heartbeat* heartbeat = message_.mutable_heartbeat();
    heartbeat->Clear();
    for (const auto& slot : workers_) {
      const WorkerCounters& counters = slot->worker->counters();
      heartbeat->set_in_flight(heartbeat->in_flight() +
                               counters.in_flight.load(std::memory_order_relaxed));
      heartbeat->set_sent(heartbeat->sent() + counters.sent.load(std::memory_order_relaxed));
      heartbeat->set_done(heartbeat->done() + counters.done.load(std::memory_order_relaxed));
      heartbeat->set_errors(heartbeat->errors() + counters.errors.load(std::memory_order_relaxed));
    }
    sink_->OnMessage(name_, message_);
  }

  void SendFinished() {
    common::LatencyHistogram e2el;
    common::LatencyHistogram schedule_lag;
    v1::Finished* finished = message_.mutable_finished();
    finished->Clear();
    v1::Totals* totals = finished->mutable_totals();
    for (const auto& slot : workers_) {
      const WorkerTotals& worker = slot->worker->totals();
      totals->set_completed(totals->completed() + worker.completed);
      totals->set_failed(totals->failed() + worker.failed);
      totals->set_records_not_streamed(totals->records_not_streamed() +
                                       worker.records_not_streamed);
      totals->set_dropped_arrivals(totals->dropped_arrivals() + worker.dropped_arrivals);
      totals->set_engine_limited_arrivals(totals->engine_limited_arrivals() +
                                          worker.engine_limited_arrivals);
      totals->set_cpu_ns(totals->cpu_ns() + static_cast<uint64_t>(worker.cpu_ns));
      totals->set_wall_ns(totals->wall_ns() + static_cast<uint64_t>(worker.wall_ns));
      e2el.Merge(worker.e2el);
      schedule_lag.Merge(worker.schedule_lag);
    }
    totals->set_threads(static_cast<uint32_t>(workers_.size()));
    e2el.ToProto(finished->mutable_e2el());
    schedule_lag.ToProto(finished->mutable_schedule_lag());
    sink_->OnMessage(name_, message_);
  }

  void Collect() {
    Nanos next_heartbeat = common::MonotonicNowNs() + kHeartbeatInterval;
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait_for(lock, kBatchInterval, [this] { return AllDone(); });
      }
      const bool done = AllDone();
      FlushRecords();
      if (done) break;
      if (common::MonotonicNowNs() >= next_heartbeat) {
        SendHeartbeat();
        next_heartbeat += kHeartbeatInterval;
      }
    }
    for (auto& slot : workers_) slot->thread.join();
    FlushRecords();  // anything pushed between the last drain and the thread's end
    SendFinished();
  }

  const std::string name_;
  common::AgentShare share_;
  common::AgentMessageSink* sink_ = nullptr;
  std::vector<std::unique_ptr<WorkerSlot>> workers_;
  std::thread collector_;
  std::mutex mutex_;
  std::condition_variable wake_;
  // Collector-thread state, reused so steady-state collection does not allocate.
  std::vector<common::RequestRecord> drained_;
  v1::AgentMessage message_;
};

}  // namespace

common::AgentSessionPtr MakeLocalAgentSession(std::string name) {
  return std::make_unique<LocalAgentSession>(std::move(name));
}

}  // namespace barrage::agent
