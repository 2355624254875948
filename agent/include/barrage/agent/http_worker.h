#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "barrage/agent/record_ring.h"
#include "barrage/common/arrival.h"
#include "barrage/common/histogram.h"
#include "barrage/common/test_plan.h"
#include "barrage/common/time.h"

namespace barrage::agent {

// What one worker thread runs: its slice of the agent's share.
struct WorkerShare {
  const common::TestPlan* plan = nullptr;  // outlives the worker
  // Open loop: this worker's arrivals are those of the global timeline whose index i satisfies
  // i % agent_slice_count == agent_slice_index, and among those every worker_count-th one.
  uint32_t agent_slice_index = 0;
  uint32_t agent_slice_count = 1;
  // Weighted split among agents (one weight per agent); null or empty: equal (i % count).
  const std::vector<uint32_t>* agent_slice_weights = nullptr;
  uint32_t worker_index = 0;
  uint32_t worker_count = 1;
  // Open loop: cap on requests in flight (0: only the engine's own limit).
  // Closed loop: requests kept in flight.
  uint32_t concurrency = 0;
  // Closed loop: measured requests this worker sends (0: no limit). Open loop uses the global
  // timeline index instead, so that the union of slices sends exactly plan.load.requests.
  uint64_t requests = 0;
  common::Nanos start_at = 0;  // monotonic instant load starts (warm-up begins)
};

// Counters a worker publishes for heartbeats: written by the worker with plain relaxed stores
// (single writer), read by the collector.
struct WorkerCounters {
  std::atomic<uint64_t> sent{0};
  std::atomic<uint64_t> done{0};
  std::atomic<uint64_t> errors{0};
  std::atomic<uint64_t> in_flight{0};
};

// What a worker counted over the whole run, read after its thread has ended.
struct WorkerTotals {
  uint64_t completed = 0;
  uint64_t failed = 0;
  uint64_t records_not_streamed = 0;
  uint64_t dropped_arrivals = 0;
  uint64_t engine_limited_arrivals = 0;
  common::Nanos cpu_ns = 0;
  common::Nanos wall_ns = 0;
  common::LatencyHistogram e2el;          // successful measured requests
  common::LatencyHistogram schedule_lag;  // arrivals dispatched without waiting for a slot
};

// One thread's HTTP load engine: a libcurl multi handle driven by curl_multi_socket_action on its
// own epoll loop, with timerfds for curl's timeouts and for the arrival schedule. Easy handles are
// created as concurrency grows and reused for every later request; nothing on the request path
// allocates, locks or formats. Finished measured requests go to `ring`.
//
// Life cycle: construct, Run() on the worker's thread (returns when the share is done and nothing
// is in flight), RequestStop() from any thread, totals() after Run returned.
class HttpWorker {
 public:
  HttpWorker(const WorkerShare& share, RecordRing* ring);
  ~HttpWorker();
  HttpWorker(const HttpWorker&) = delete;
  HttpWorker& operator=(const HttpWorker&) = delete;

  // Runs the share to completion.
  void Run();

  // Stops issuing requests; in-flight requests get `grace` to finish, then are cancelled (and
  // recorded as cancelled). Thread-safe, idempotent.
  void RequestStop(common::Nanos grace);

  const WorkerCounters& counters() const { return counters_; }
  const WorkerTotals& totals() const { return totals_; }

  // The engine's own limit on requests in flight per worker when no --concurrency cap is given.
  static constexpr uint32_t kEngineMaxInFlight = 4096;

 private:
  class Impl;
  WorkerCounters counters_;
  WorkerTotals totals_;
  std::unique_ptr<Impl> impl_;  // last: it points at the two above
};

}  // namespace barrage::agent
