#pragma once

// The check shared by the percentile tests: every percentile, median, mean and standard
// deviation a result reports for e2el, ttfb, client_queue_time and e2el_including_client_queue
// agrees with the exact figure computed from the run's records: percentiles within the
// histogram's documented error (1/256 relative, LatencyHistogram::kMaxRelativeError), means and
// standard deviations exactly.

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "integration_util.h"

namespace barrage::integration {

inline constexpr double kMaxRelativeError = 1.0 / 256;
inline constexpr double kOneNanosecondMs = 1e-6;

// One latency metric as the result names it, and how to compute it from a record.
struct Metric {
  std::string key;
  std::function<int64_t(const Record&)> value_ns;
};

inline std::vector<Metric> Metrics() {
  return {
      {"e2el", [](const Record& r) { return r.end_ns - r.start_ns; }},
      {"ttfb", [](const Record& r) { return r.ttfb_ns.value_or(r.end_ns) - r.start_ns; }},
      {"client_queue_time", [](const Record& r) { return r.start_ns - r.scheduled_ns; }},
      {"e2el_including_client_queue", [](const Record& r) { return r.end_ns - r.scheduled_ns; }},
  };
}

inline double NsToMs(int64_t ns) { return static_cast<double>(ns) / 1e6; }

// Nearest-rank percentile of sorted values: rank ceil(p/100 * n), 1-based. p/100 * n may land a
// hair above an integer in floating point (99.9/100 * 15000 = 14985.000000000002), and an
// implementation may or may not guard against that; both ranks are accepted.
inline std::vector<int64_t> NearestRankCandidates(const std::vector<int64_t>& sorted, double p) {
  const double n = static_cast<double>(sorted.size());
  auto at_rank = [&](double rank) {
    size_t index = static_cast<size_t>(std::clamp(rank, 1.0, n)) - 1;
    return sorted[index];
  };
  return {at_rank(std::ceil(p / 100.0 * n)), at_rank(std::ceil(p * n / 100.0 - 1e-9))};
}

inline bool WithinHistogramError(double reported_ms, double exact_ms) {
  // A hair of slack for the double arithmetic between nanoseconds and milliseconds.
  const double bound = std::abs(exact_ms) * kMaxRelativeError * (1 + 1e-9) + kOneNanosecondMs;
  return std::abs(reported_ms - exact_ms) <= bound;
}

// Compares `result` with the successful records (records with no error).
inline void ExpectPercentilesMatchRecords(const Json& result, const std::vector<Record>& successful,
                                          const std::vector<double>& percentiles) {
  for (const Metric& metric : Metrics()) {
    SCOPED_TRACE("metric " + metric.key);
    std::vector<int64_t> values;
    values.reserve(successful.size());
    for (const Record& record : successful) {
      values.push_back(metric.value_ns(record));
    }
    std::sort(values.begin(), values.end());

    for (double p : percentiles) {
      const std::string key = "p" + PercentileWord(p) + "_" + metric.key + "_ms";
      const double reported = NumberAt(result, key);
      std::vector<int64_t> exact = NearestRankCandidates(values, p);
      EXPECT_TRUE(WithinHistogramError(reported, NsToMs(exact[0])) ||
                  WithinHistogramError(reported, NsToMs(exact[1])))
          << key << " = " << reported << " ms, exact nearest-rank value " << NsToMs(exact[0])
          << " ms (or " << NsToMs(exact[1]) << " ms)";
    }
    const std::string median_key = "median_" + metric.key + "_ms";
    std::vector<int64_t> median = NearestRankCandidates(values, 50);
    EXPECT_TRUE(WithinHistogramError(NumberAt(result, median_key), NsToMs(median[0])))
        << median_key << " = " << NumberAt(result, median_key) << " ms, exact " << NsToMs(median[0])
        << " ms";

    // Mean and population standard deviation are kept exactly (sums, not buckets).
    double sum = 0;
    for (int64_t value : values) {
      sum += static_cast<double>(value);
    }
    const double mean_ns = sum / static_cast<double>(values.size());
    double squares = 0;
    for (int64_t value : values) {
      const double deviation = static_cast<double>(value) - mean_ns;
      squares += deviation * deviation;
    }
    const double std_ms = std::sqrt(squares / static_cast<double>(values.size())) / 1e6;
    const double mean_ms = mean_ns / 1e6;
    EXPECT_NEAR(NumberAt(result, "mean_" + metric.key + "_ms"), mean_ms, mean_ms * 1e-6 + 1e-9);
    EXPECT_NEAR(NumberAt(result, "std_" + metric.key + "_ms"), std_ms, std_ms * 1e-6 + 1e-9);
  }
}

}  // namespace barrage::integration
