#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "barrage/common/histogram.h"
#include "barrage/common/record.h"
#include "barrage/common/time.h"

namespace barrage::coordinator {

// The latency metrics every run reports (percentiles over successful requests).
enum class LatencyMetric {
  kE2el,                      // start -> end
  kTtfb,                      // start -> first byte
  kClientQueueTime,           // scheduled -> start
  kE2elIncludingClientQueue,  // scheduled -> end: free of coordinated omission
  kDns,
  kConnect,
  kTls,
  kSend,
  kWait,
  kReceive,
};
inline constexpr int kLatencyMetricCount = 10;

// The key used in result JSON names: "e2el", "ttfb", "client_queue_time",
// "e2el_including_client_queue", "dns", "connect", "tls", "send", "wait", "receive".
std::string_view LatencyMetricKey(LatencyMetric metric);
// The section title in the summary: "End-to-end Latency", "Time to First Byte", ...
std::string_view LatencyMetricTitle(LatencyMetric metric);
// The abbreviation in summary lines: "E2EL", "TTFB", "Client Queue", ...
std::string_view LatencyMetricLabel(LatencyMetric metric);
// The value of `metric` for one record.
common::Nanos LatencyMetricValue(LatencyMetric metric, const common::RequestRecord& record);

// One second of the run (second k covers [k s, k+1 s) from measurement start).
struct SecondSample {
  uint64_t completed = 0;  // successful requests that ended in this second
  uint64_t failed = 0;     // failed requests that ended in this second
  double in_flight = 0;    // time-averaged number of requests in flight during this second
};

// Everything merged from all agents' records. Add() is the coordinator's per-record path: it
// allocates only when the run grows into a new second.
struct RunStats {
  std::array<common::LatencyHistogram, kLatencyMetricCount> latency;
  uint64_t completed = 0;
  uint64_t failed = 0;
  std::array<uint64_t, common::kErrorClassCount> errors_by_class{};
  std::map<int, uint64_t> status_counts;  // HTTP status -> requests (0: no response)
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  common::Nanos first_scheduled = INT64_MAX;  // over all records
  common::Nanos first_start = INT64_MAX;
  common::Nanos last_end = INT64_MIN;
  std::vector<SecondSample> per_second;

  void Add(const common::RequestRecord& record);
  const common::LatencyHistogram& histogram(LatencyMetric metric) const {
    return latency[static_cast<int>(metric)];
  }
  // First scheduled instant -> last completion, as DESIGN.md section 7 defines it; 0 if empty.
  common::Nanos duration() const;
  uint64_t total() const { return completed + failed; }
};

}  // namespace barrage::coordinator
