#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "barrage/common/arrival.h"
#include "barrage/common/time.h"

namespace barrage::common {

// One HTTP request template: what every request of a plain HTTP test sends.
struct HttpRequestSpec {
  std::string url;
  std::string method = "GET";
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
};

// How load is offered. Open loop when `rate` is set (arrivals from a timeline; `concurrency`,
// when non-zero, caps requests in flight and arrivals wait for a slot). Closed loop when `rate`
// is unset ("inf"): `concurrency` requests are always in flight.
struct LoadSpec {
  std::optional<double> rate;  // requests per second; nullopt means inf
  ArrivalKind arrival = ArrivalKind::kConstant;
  double burstiness = 1.0;               // gamma shape
  uint32_t concurrency = 0;              // 0: no cap (open loop); closed loop requires > 0
  Nanos duration = 0;                    // 0: no time limit (then `requests` must be set)
  uint64_t requests = 0;                 // 0: no count limit
  Nanos warmup = 0;                      // load before measurement starts, excluded from results
  Nanos timeout = 30 * kNanosPerSecond;  // per request
  Nanos grace = 5 * kNanosPerSecond;     // after Ctrl-C, how long in-flight requests may finish
  uint64_t seed = 0;
  uint32_t threads = 1;  // worker threads per agent

  bool open_loop() const { return rate.has_value(); }
};

// Everything an agent needs to run a test. Built and validated by the coordinator's CLI.
struct TestPlan {
  HttpRequestSpec request;
  LoadSpec load;
};

// Checks invariants that do not depend on the command line (a plan may come from elsewhere).
// @return InvalidArgument naming the flag at fault and the fix.
absl::Status ValidatePlan(const TestPlan& plan);

// The part of a plan one agent runs: its slice of the global arrival timeline (arrivals i with
// i % slice_count == slice_index), its share of the concurrency and of the request count.
struct AgentShare {
  TestPlan plan;
  uint32_t slice_index = 0;
  uint32_t slice_count = 1;
  uint32_t concurrency = 0;  // this agent's share of plan.load.concurrency
  uint64_t requests = 0;     // this agent's share of plan.load.requests (0: no limit)
  // One weight per agent (slice_count of them): the timeline is split by weighted round robin.
  // Empty: equal weights.
  std::vector<uint32_t> slice_weights;
};

// Splits `total` into `parts` integer shares that differ by at most one and add up to `total`.
// @return the share of part `index`.
uint64_t IntegerShare(uint64_t total, uint32_t parts, uint32_t index);

}  // namespace barrage::common
