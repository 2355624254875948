// Poisson arrivals: with --arrival poisson the gaps between consecutive sends follow the
// exponential law of the requested rate (one-sample Kolmogorov-Smirnov test at alpha 0.01), both
// in the schedule and in the actual send instants, and their mean is within 5% of 1/rate.

#include <algorithm>
#include <cmath>
#include <vector>

#include "integration_util.h"

namespace barrage::integration {
namespace {

constexpr double kRate = 500;  // requests per second
constexpr double kDurationSeconds = 8;

// Critical value of the one-sample KS statistic (Stephens' approximation:
// D * (sqrt(n) + 0.12 + 0.11 / sqrt(n)) > c rejects; c = 1.628 at alpha 0.01, 1.949 at 0.001).
double KsCriticalValue(size_t n, double c) {
  const double root = std::sqrt(static_cast<double>(n));
  return c / (root + 0.12 + 0.11 / root);
}

// The KS statistic of `gaps_seconds` against Exp(rate): sup |F_n(x) - F(x)|.
double KsStatisticAgainstExponential(std::vector<double> gaps_seconds, double rate) {
  std::sort(gaps_seconds.begin(), gaps_seconds.end());
  const double n = static_cast<double>(gaps_seconds.size());
  double statistic = 0;
  for (size_t i = 0; i < gaps_seconds.size(); ++i) {
    const double cdf = 1.0 - std::exp(-rate * gaps_seconds[i]);
    statistic = std::max(statistic, static_cast<double>(i + 1) / n - cdf);
    statistic = std::max(statistic, cdf - static_cast<double>(i) / n);
  }
  return statistic;
}

// Gaps between consecutive instants, in seconds, after sorting them.
std::vector<double> SortedGapsSeconds(std::vector<int64_t> instants_ns) {
  std::sort(instants_ns.begin(), instants_ns.end());
  std::vector<double> gaps;
  for (size_t i = 1; i < instants_ns.size(); ++i) {
    gaps.push_back(static_cast<double>(instants_ns[i] - instants_ns[i - 1]) * 1e-9);
  }
  return gaps;
}

double Mean(const std::vector<double>& values) {
  double sum = 0;
  for (double value : values) {
    sum += value;
  }
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

TEST(PoissonTest, InterSendGapsAreExponential) {
  NginxServer nginx;
  absl::Status started = nginx.Start();
  ASSERT_TRUE(started.ok()) << started;
  TempDir dir;
  const std::string records_path = dir.File("records.jsonl");

  ProcessResult run =
      RunBarrage({"--url", nginx.url(), "--rate", "500", "--arrival", "poisson", "--duration", "8s",
                  "--seed", "12345", "--save-records", records_path, "--quiet"},
                 std::chrono::seconds(60));
  ASSERT_FALSE(run.timed_out) << Describe(run);
  ASSERT_EQ(run.exit_code, 0) << Describe(run);

  std::vector<Record> records = ReadRecords(records_path);
  // A Poisson count over 8 s at 500/s: mean 4000, standard deviation about 63.
  const double expected_count = kRate * kDurationSeconds;
  ASSERT_NEAR(static_cast<double>(records.size()), expected_count, 0.1 * expected_count);
  std::vector<int64_t> scheduled;
  std::vector<int64_t> sent;
  size_t failed = 0;
  for (const Record& record : records) {
    failed += record.ok() ? 0 : 1;
    scheduled.push_back(record.scheduled_ns);
    sent.push_back(record.start_ns);
  }
  EXPECT_EQ(failed, 0u);
  const double critical = KsCriticalValue(records.size() - 1, 1.628);
  // Send instants add the timer's jitter (tens of microseconds, more on a busy machine) to gaps
  // of 2 ms on average, which shifts the smallest gaps: they are held to alpha 0.001.
  const double send_critical = KsCriticalValue(records.size() - 1, 1.949);

  // The schedule itself follows the law...
  std::vector<double> scheduled_gaps = SortedGapsSeconds(scheduled);
  EXPECT_LT(KsStatisticAgainstExponential(scheduled_gaps, kRate), critical);
  EXPECT_NEAR(Mean(scheduled_gaps), 1.0 / kRate, 0.05 / kRate);

  // ...and so do the instants requests actually went out.
  std::vector<double> send_gaps = SortedGapsSeconds(sent);
  EXPECT_LT(KsStatisticAgainstExponential(send_gaps, kRate), send_critical);
  EXPECT_NEAR(Mean(send_gaps), 1.0 / kRate, 0.05 / kRate);
}

}  // namespace
}  // namespace barrage::integration
