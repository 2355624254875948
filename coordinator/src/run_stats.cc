#include "barrage/coordinator/run_stats.h"

#include <algorithm>

namespace barrage::coordinator {

using common::Nanos;
using common::RequestRecord;

std::string_view LatencyMetricKey(LatencyMetric metric) {
  switch (metric) {
    case LatencyMetric::kE2el:
      return "e2el";
    case LatencyMetric::kTtfb:
      return "ttfb";
    case LatencyMetric::kClientQueueTime:
      return "client_queue_time";
    case LatencyMetric::kE2elIncludingClientQueue:
      return "e2el_including_client_queue";
    case LatencyMetric::kDns:
      return "dns";
    case LatencyMetric::kConnect:
      return "connect";
    case LatencyMetric::kTls:
      return "tls";
    case LatencyMetric::kSend:
      return "send";
    case LatencyMetric::kWait:
      return "wait";
    case LatencyMetric::kReceive:
      return "receive";
  }
  return "";
}

std::string_view LatencyMetricTitle(LatencyMetric metric) {
  switch (metric) {
    case LatencyMetric::kE2el:
      return "End-to-end Latency";
    case LatencyMetric::kTtfb:
      return "Time to First Byte";
    case LatencyMetric::kClientQueueTime:
      return "Client Queue Time";
    case LatencyMetric::kE2elIncludingClientQueue:
      return "E2E Latency incl. Client Queue";
    case LatencyMetric::kDns:
      return "DNS Lookup";
    case LatencyMetric::kConnect:
      return "TCP Connect";
    case LatencyMetric::kTls:
      return "TLS Handshake";
    case LatencyMetric::kSend:
      return "Request Send";
    case LatencyMetric::kWait:
      return "Server Wait";
    case LatencyMetric::kReceive:
      return "Response Receive";
  }
  return "";
}

std::string_view LatencyMetricLabel(LatencyMetric metric) {
  switch (metric) {
    case LatencyMetric::kE2el:
      return "E2EL";
    case LatencyMetric::kTtfb:
      return "TTFB";
    case LatencyMetric::kClientQueueTime:
      return "Client Queue";
    case LatencyMetric::kE2elIncludingClientQueue:
      return "E2EL+Queue";
    case LatencyMetric::kDns:
      return "DNS";
    case LatencyMetric::kConnect:
      return "Connect";
    case LatencyMetric::kTls:
      return "TLS";
    case LatencyMetric::kSend:
      return "Send";
    case LatencyMetric::kWait:
      return "Wait";
    case LatencyMetric::kReceive:
      return "Receive";
  }
  return "";
}

Nanos LatencyMetricValue(LatencyMetric metric, const RequestRecord& record) {
  switch (metric) {
    case LatencyMetric::kE2el:
      return record.e2el();
    case LatencyMetric::kTtfb:
      return record.ttfb > 0 ? record.ttfb - record.start : 0;
    case LatencyMetric::kClientQueueTime:
      return record.client_queue_time();
    case LatencyMetric::kE2elIncludingClientQueue:
      return record.e2el_including_client_queue();
    case LatencyMetric::kDns:
      return record.phases.dns;
    case LatencyMetric::kConnect:
      return record.phases.connect;
    case LatencyMetric::kTls:
      return record.phases.tls;
    case LatencyMetric::kSend:
      return record.phases.send;
    case LatencyMetric::kWait:
      return record.phases.wait;
    case LatencyMetric::kReceive:
      return record.phases.receive;
  }
  return 0;
}

void RunStats::Add(const RequestRecord& record) {
  if (record.ok()) {
    ++completed;
    for (int i = 0; i < kLatencyMetricCount; ++i) {
      const auto metric = static_cast<LatencyMetric>(i);
      // A response with no byte has no TTFB sample (it cannot be a success, but stay safe).
      if (metric == LatencyMetric::kTtfb && record.ttfb == 0) continue;
      latency[i].Record(
          static_cast<uint64_t>(std::max<Nanos>(0, LatencyMetricValue(metric, record))));
    }
  } else {
    ++failed;
    ++errors_by_class[static_cast<int>(record.error)];
  }
  ++status_counts[record.status];
  bytes_in += record.bytes_in;
  bytes_out += record.bytes_out;
  first_scheduled = std::min(first_scheduled, record.scheduled);
  first_start = std::min(first_start, record.start);
  last_end = std::max(last_end, record.end);

  // Per-second series. Instants are >= 0 for measured requests.
  const Nanos second = common::kNanosPerSecond;
  const Nanos start = std::max<Nanos>(0, record.start);
  const Nanos end = std::max(start, record.end);
  const size_t last_second = static_cast<size_t>(end / second);
  if (per_second.size() <= last_second) per_second.resize(last_second + 1);
  if (record.ok()) {
    ++per_second[last_second].completed;
  } else {
    ++per_second[last_second].failed;
  }
  // Time-averaged in-flight: each second gets the part of [start, end) that falls in it.
  for (size_t k = static_cast<size_t>(start / second); k <= last_second; ++k) {
    const Nanos from = std::max(start, static_cast<Nanos>(k) * second);
    const Nanos to = std::min(end, static_cast<Nanos>(k + 1) * second);
    if (to > from) per_second[k].in_flight += static_cast<double>(to - from) / second;
  }
}

Nanos RunStats::duration() const {
  if (total() == 0) return 0;
  return last_end - first_scheduled;
}

}  // namespace barrage::coordinator
