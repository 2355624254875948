// Percentile accuracy: every percentile barrage reports for a run is within the histogram's
// documented error (1/256 relative, LatencyHistogram::kMaxRelativeError) of the exact
// nearest-rank percentile computed from the same run's records; means and standard deviations
// are exact.

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "integration_util.h"

namespace barrage::integration {
namespace {

constexpr double kMaxRelativeError = 1.0 / 256;
constexpr double kOneNanosecondMs = 1e-6;
const std::vector<double> kPercentiles = {50, 90, 95, 99, 99.9};

// One latency metric as the result names it, and how to compute it from a record.
struct Metric {
  std::string key;
  std::function<int64_t(const Record&)> value_ns;
};

std::vector<Metric> Metrics() {
  return {
      {"e2el", [](const Record& r) { return r.end_ns - r.start_ns; }},
      {"ttfb", [](const Record& r) { return r.ttfb_ns.value_or(r.end_ns) - r.start_ns; }},
      {"client_queue_time", [](const Record& r) { return r.start_ns - r.scheduled_ns; }},
      {"e2el_including_client_queue", [](const Record& r) { return r.end_ns - r.scheduled_ns; }},
  };
}

double NsToMs(int64_t ns) { return static_cast<double>(ns) / 1e6; }

// Nearest-rank percentile of sorted values: rank ceil(p/100 * n), 1-based. p/100 * n may land a
// hair above an integer in floating point (99.9/100 * 15000 = 14985.000000000002), and an
// implementation may or may not guard against that; both ranks are accepted.
std::vector<int64_t> NearestRankCandidates(const std::vector<int64_t>& sorted, double p) {
  const double n = static_cast<double>(sorted.size());
  auto at_rank = [&](double rank) {
    size_t index = static_cast<size_t>(std::clamp(rank, 1.0, n)) - 1;
    return sorted[index];
  };
  return {at_rank(std::ceil(p / 100.0 * n)), at_rank(std::ceil(p * n / 100.0 - 1e-9))};
}

bool WithinHistogramError(double reported_ms, double exact_ms) {
  // A hair of slack for the double arithmetic between nanoseconds and milliseconds.
  const double bound = std::abs(exact_ms) * kMaxRelativeError * (1 + 1e-9) + kOneNanosecondMs;
  return std::abs(reported_ms - exact_ms) <= bound;
}

TEST(PercentileAccuracyTest, ReportedPercentilesMatchTheRecordsWithinHistogramError) {
  NginxServer nginx;
  absl::Status started = nginx.Start();
  ASSERT_TRUE(started.ok()) << started;
  TempDir dir;
  const std::string result_path = dir.File("result.json");
  const std::string records_path = dir.File("records.jsonl");

  ProcessResult run = RunBarrage(
      {"--url", nginx.url(), "--rate", "3000", "--duration", "5s", "--save-records", records_path,
       "--save-result", result_path, "--percentiles", "50,90,95,99,99.9", "--quiet"},
      std::chrono::seconds(60));
  ASSERT_FALSE(run.timed_out) << Describe(run);
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  std::optional<Json> result = ReadJsonFile(result_path);
  ASSERT_TRUE(result.has_value()) << "no result JSON at " << result_path << "\n" << Describe(run);

  std::vector<Record> records = ReadRecords(records_path);
  EXPECT_EQ(static_cast<double>(records.size()),
            NumberAt(*result, "completed") + NumberAt(*result, "failed"));
  std::vector<Record> successful;
  for (const Record& record : records) {
    if (record.ok()) {
      successful.push_back(record);
    }
  }
  ASSERT_GT(successful.size(), 10000u) << "expected about 15000 successful requests";
  EXPECT_EQ(static_cast<double>(successful.size()), NumberAt(*result, "completed"));

  for (const Metric& metric : Metrics()) {
    SCOPED_TRACE("metric " + metric.key);
    std::vector<int64_t> values;
    values.reserve(successful.size());
    for (const Record& record : successful) {
      values.push_back(metric.value_ns(record));
    }
    std::sort(values.begin(), values.end());

    for (double p : kPercentiles) {
      const std::string key = "p" + PercentileWord(p) + "_" + metric.key + "_ms";
      const double reported = NumberAt(*result, key);
      std::vector<int64_t> exact = NearestRankCandidates(values, p);
      EXPECT_TRUE(WithinHistogramError(reported, NsToMs(exact[0])) ||
                  WithinHistogramError(reported, NsToMs(exact[1])))
          << key << " = " << reported << " ms, exact nearest-rank value " << NsToMs(exact[0])
          << " ms (or " << NsToMs(exact[1]) << " ms)";
    }
    const std::string median_key = "median_" + metric.key + "_ms";
    std::vector<int64_t> median = NearestRankCandidates(values, 50);
    EXPECT_TRUE(WithinHistogramError(NumberAt(*result, median_key), NsToMs(median[0])))
        << median_key << " = " << NumberAt(*result, median_key) << " ms, exact "
        << NsToMs(median[0]) << " ms";

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
    EXPECT_NEAR(NumberAt(*result, "mean_" + metric.key + "_ms"), mean_ms, mean_ms * 1e-6 + 1e-9);
    EXPECT_NEAR(NumberAt(*result, "std_" + metric.key + "_ms"), std_ms, std_ms * 1e-6 + 1e-9);
  }
}

}  // namespace
}  // namespace barrage::integration
