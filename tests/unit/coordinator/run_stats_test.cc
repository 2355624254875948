#include "barrage/coordinator/run_stats.h"

#include "gtest/gtest.h"

namespace barrage::coordinator {
namespace {

using common::ErrorClass;
using common::kNanosPerMilli;
using common::kNanosPerSecond;
using common::RequestRecord;

RequestRecord Record(common::Nanos scheduled, common::Nanos start, common::Nanos end,
                     ErrorClass error = ErrorClass::kNone) {
  RequestRecord record;
  record.scheduled = scheduled;
  record.start = start;
  record.ttfb = error == ErrorClass::kNone ? start + (end - start) / 2 : 0;
  record.end = end;
  record.status = error == ErrorClass::kNone ? 200 : 0;
  record.error = error;
  record.bytes_in = 100;
  record.bytes_out = 50;
  record.phases.wait = (end - start) / 2;
  return record;
}

TEST(RunStatsTest, EachMetricTakesItsOwnSpanOfTheRecord) {
  RunStats stats;
  stats.Add(Record(0, 2 * kNanosPerMilli, 12 * kNanosPerMilli));
  const auto median = [&](LatencyMetric metric) {
    return static_cast<double>(stats.histogram(metric).ValueAtPercentile(50));
  };
  EXPECT_NEAR(median(LatencyMetric::kE2el), 10e6, 10e6 / 256);
  EXPECT_NEAR(median(LatencyMetric::kTtfb), 5e6, 5e6 / 256);
  EXPECT_NEAR(median(LatencyMetric::kClientQueueTime), 2e6, 2e6 / 256);
  EXPECT_NEAR(median(LatencyMetric::kE2elIncludingClientQueue), 12e6, 12e6 / 256);
  EXPECT_NEAR(median(LatencyMetric::kWait), 5e6, 5e6 / 256);
  EXPECT_EQ(stats.completed, 1u);
  EXPECT_EQ(stats.duration(), 12 * kNanosPerMilli);
}

TEST(RunStatsTest, FailuresAreCountedByClassAndKeptOutOfLatencies) {
  RunStats stats;
  stats.Add(Record(0, 0, kNanosPerMilli));
  stats.Add(Record(0, 0, 3 * kNanosPerSecond, ErrorClass::kTimeout));
  stats.Add(Record(0, 0, kNanosPerMilli, ErrorClass::kConnect));
  EXPECT_EQ(stats.completed, 1u);
  EXPECT_EQ(stats.failed, 2u);
  EXPECT_EQ(stats.total(), 3u);
  EXPECT_EQ(stats.errors_by_class[static_cast<int>(ErrorClass::kTimeout)], 1u);
  EXPECT_EQ(stats.errors_by_class[static_cast<int>(ErrorClass::kConnect)], 1u);
  EXPECT_EQ(stats.histogram(LatencyMetric::kE2el).count(), 1u);
  EXPECT_EQ(stats.status_counts.at(200), 1u);
  EXPECT_EQ(stats.status_counts.at(0), 2u);
  EXPECT_EQ(stats.bytes_in, 300u);
}

TEST(RunStatsTest, PerSecondSeriesCountsCompletionsAndAveragesInFlight) {
  RunStats stats;
  // Ends in second 0.
  stats.Add(Record(0, 0, 500 * kNanosPerMilli));
  // In flight from 0.5 s to 2.5 s: half of second 0, all of second 1, half of second 2.
  stats.Add(Record(0, 500 * kNanosPerMilli, 2500 * kNanosPerMilli, ErrorClass::kTimeout));
  ASSERT_EQ(stats.per_second.size(), 3u);
  EXPECT_EQ(stats.per_second[0].completed, 1u);
  EXPECT_EQ(stats.per_second[2].failed, 1u);
  EXPECT_DOUBLE_EQ(stats.per_second[0].in_flight, 1.0);  // 0.5 + 0.5
  EXPECT_DOUBLE_EQ(stats.per_second[1].in_flight, 1.0);
  EXPECT_DOUBLE_EQ(stats.per_second[2].in_flight, 0.5);
}

TEST(RunStatsTest, DurationRunsFromFirstScheduledToLastEnd) {
  RunStats stats;
  EXPECT_EQ(stats.duration(), 0);
  stats.Add(Record(100, 200, 1000));
  stats.Add(Record(50, 3000, 4000));
  EXPECT_EQ(stats.duration(), 4000 - 50);
}

TEST(RunStatsTest, MetricNamesAreTheResultKeys) {
  EXPECT_EQ(LatencyMetricKey(LatencyMetric::kE2el), "e2el");
  EXPECT_EQ(LatencyMetricKey(LatencyMetric::kE2elIncludingClientQueue),
            "e2el_including_client_queue");
  EXPECT_EQ(LatencyMetricKey(LatencyMetric::kClientQueueTime), "client_queue_time");
  for (int i = 0; i < kLatencyMetricCount; ++i) {
    EXPECT_FALSE(LatencyMetricKey(static_cast<LatencyMetric>(i)).empty());
    EXPECT_FALSE(LatencyMetricTitle(static_cast<LatencyMetric>(i)).empty());
  }
}

}  // namespace
}  // namespace barrage::coordinator
