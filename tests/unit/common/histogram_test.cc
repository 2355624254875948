#include "barrage/common/histogram.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "barrage/common/arrival.h"
#include "barrage/v1/agent.pb.h"
#include "gtest/gtest.h"

namespace barrage::common {
namespace {

using H = LatencyHistogram;

// Percentiles as integer thousandths, so the reference rank is computed without rounding.
constexpr uint64_t kPercentileMillis[] = {0,     1,     100,   1000,  10000, 25000, 50000,
                                          75000, 90000, 95000, 99000, 99900, 99990, 100000};

// The exact nearest-rank value: the sample of rank ceil(p/100 * n), at least rank 1.
uint64_t ExactNearestRank(const std::vector<uint64_t>& sorted, uint64_t percentile_millis) {
  const uint64_t n = sorted.size();
  uint64_t rank = (percentile_millis * n + 99'999) / 100'000;
  rank = std::clamp<uint64_t>(rank, 1, n);
  return sorted[rank - 1];
}

void ExpectPercentilesWithinBound(std::vector<uint64_t> values, const std::string& label) {
  H histogram;
  for (uint64_t value : values) {
    histogram.Record(value);
  }
  std::sort(values.begin(), values.end());
  for (uint64_t millis : kPercentileMillis) {
    const double percentile = static_cast<double>(millis) / 1000.0;
    const uint64_t exact = ExactNearestRank(values, millis);
    const uint64_t reported = histogram.ValueAtPercentile(percentile);
    const double error = std::abs(static_cast<double>(reported) - static_cast<double>(exact));
    EXPECT_LE(error, static_cast<double>(exact) * H::kMaxRelativeError)
        << label << " p" << percentile << ": exact " << exact << ", reported " << reported;
  }
}

TEST(LatencyHistogramTest, UniformPercentilesWithinDocumentedError) {
  Rng rng(1);
  std::vector<uint64_t> values;
  for (int i = 0; i < 20'000; ++i) {
    values.push_back(rng.NextU64() % 2'000'000'000);  // 0 to 2 s
  }
  ExpectPercentilesWithinBound(values, "uniform");
}

TEST(LatencyHistogramTest, ExponentialPercentilesWithinDocumentedError) {
  Rng rng(2);
  std::vector<uint64_t> values;
  for (int i = 0; i < 20'000; ++i) {
    values.push_back(static_cast<uint64_t>(-std::log(rng.NextOpenUnit()) * 5e6));  // mean 5 ms
  }
  ExpectPercentilesWithinBound(values, "exponential");
}

TEST(LatencyHistogramTest, LognormalPercentilesWithinDocumentedError) {
  Rng rng(3);
  std::vector<uint64_t> values;
  for (int i = 0; i < 20'000; ++i) {
    // Median 1 ms, a tail reaching seconds.
    values.push_back(
        static_cast<uint64_t>(std::exp(std::log(1e6) + 1.5 * rng.NextStandardNormal())));
  }
  ExpectPercentilesWithinBound(values, "lognormal");
}

TEST(LatencyHistogramTest, SmallValuesAreExact) {
  H histogram;
  std::vector<uint64_t> values;
  for (uint64_t value = 0; value < 256; ++value) {
    for (uint64_t copy = 0; copy <= value % 3; ++copy) {
      histogram.Record(value);
      values.push_back(value);
    }
  }
  for (uint64_t millis : kPercentileMillis) {
    EXPECT_EQ(histogram.ValueAtPercentile(static_cast<double>(millis) / 1000.0),
              ExactNearestRank(values, millis))
        << "p" << static_cast<double>(millis) / 1000.0;
  }
  for (uint64_t value = 0; value < 256; ++value) {
    H single;
    single.Record(value);
    EXPECT_EQ(single.ValueAtPercentile(50), value);
    EXPECT_EQ(H::BucketLowest(H::BucketIndex(value)), value);
    EXPECT_EQ(H::BucketHighest(H::BucketIndex(value)), value);
  }
}

TEST(LatencyHistogramTest, NearestRankAtExactBoundary) {
  // 99.9% of 15000 is exactly rank 14985; floating point must not push it to 14986.
  H histogram;
  for (uint64_t value = 1; value <= 15'000; ++value) {
    histogram.Record(value < 14'986 ? 100 : 200);
  }
  EXPECT_EQ(histogram.ValueAtPercentile(99.9), 100u);
  EXPECT_EQ(histogram.ValueAtPercentile(99.91), 200u);
}

void ExpectSameHistogram(const H& a, const H& b) {
  EXPECT_EQ(a.count(), b.count());
  EXPECT_EQ(a.min(), b.min());
  EXPECT_EQ(a.max(), b.max());
  EXPECT_EQ(a.Mean(), b.Mean());
  EXPECT_EQ(a.Stddev(), b.Stddev());
  for (int tenths = 0; tenths <= 1000; ++tenths) {
    const double percentile = tenths / 10.0;
    EXPECT_EQ(a.ValueAtPercentile(percentile), b.ValueAtPercentile(percentile))
        << "p" << percentile;
  }
  for (uint64_t millis : kPercentileMillis) {
    const double percentile = static_cast<double>(millis) / 1000.0;
    EXPECT_EQ(a.ValueAtPercentile(percentile), b.ValueAtPercentile(percentile))
        << "p" << percentile;
  }
}

TEST(LatencyHistogramTest, MergeEqualsRecordingAllIntoOne) {
  Rng rng(4);
  H all;
  H first;
  H second;
  for (int i = 0; i < 10'000; ++i) {
    const uint64_t value = static_cast<uint64_t>(-std::log(rng.NextOpenUnit()) * 1e7);
    all.Record(value);
    first.Record(value);
  }
  for (int i = 0; i < 7'000; ++i) {
    // A different range, so min and max come from different sides.
    const uint64_t value = 500 + rng.NextU64() % 100'000'000'000;
    all.Record(value);
    second.Record(value);
  }
  H merged = first;
  merged.Merge(second);
  ExpectSameHistogram(merged, all);

  H reversed = second;
  reversed.Merge(first);
  ExpectSameHistogram(reversed, all);

  H from_empty;
  from_empty.Merge(all);
  ExpectSameHistogram(from_empty, all);

  H unchanged = all;
  unchanged.Merge(H());
  ExpectSameHistogram(unchanged, all);
}

TEST(LatencyHistogramTest, ProtoRoundTrip) {
  Rng rng(5);
  H original;
  for (int i = 0; i < 5'000; ++i) {
    original.Record(rng.NextU64() % 10'000'000'000);
  }
  original.RecordN(42, 1'000);
  v1::Histogram proto;
  original.ToProto(&proto);
  EXPECT_EQ(proto.layout_id(), H::kLayoutId);
  EXPECT_EQ(proto.count(), original.count());
  EXPECT_EQ(proto.bucket_index_size(), proto.bucket_count_size());
  EXPECT_LT(proto.bucket_index_size(), H::BucketCount());  // sparse

  // Through the wire bytes too.
  v1::Histogram parsed;
  ASSERT_TRUE(parsed.ParseFromString(proto.SerializeAsString()));
  H copy;
  ASSERT_TRUE(copy.MergeProto(parsed).ok());
  ExpectSameHistogram(copy, original);

  // MergeProto adds to what is there.
  H doubled = original;
  ASSERT_TRUE(doubled.MergeProto(proto).ok());
  H expected = original;
  expected.Merge(original);
  ExpectSameHistogram(doubled, expected);

  // An empty histogram's proto merges as nothing.
  v1::Histogram empty_proto;
  H().ToProto(&empty_proto);
  H still = original;
  ASSERT_TRUE(still.MergeProto(empty_proto).ok());
  ExpectSameHistogram(still, original);
}

TEST(LatencyHistogramTest, MergeProtoRefusesOtherLayout) {
  H source;
  source.Record(1'000);
  v1::Histogram proto;
  source.ToProto(&proto);
  proto.set_layout_id(H::kLayoutId + 1);
  H target;
  target.Record(7);
  const absl::Status status = target.MergeProto(proto);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_NE(status.message().find("layout"), std::string_view::npos) << status;
  EXPECT_EQ(target.count(), 1u);
  EXPECT_EQ(target.max(), 7u);
}

TEST(LatencyHistogramTest, MergeProtoRefusesMalformed) {
  H source;
  source.Record(1'000);
  source.Record(2'000);
  v1::Histogram good;
  source.ToProto(&good);

  v1::Histogram short_column = good;
  short_column.mutable_bucket_count()->RemoveLast();
  v1::Histogram bad_index = good;
  bad_index.set_bucket_index(0, static_cast<uint32_t>(H::BucketCount()));
  v1::Histogram bad_count = good;
  bad_count.set_count(good.count() + 1);
  for (const v1::Histogram* proto : {&short_column, &bad_index, &bad_count}) {
    H target;
    target.Record(3);
    const absl::Status status = target.MergeProto(*proto);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_EQ(target.count(), 1u);
    EXPECT_EQ(target.min(), 3u);
    EXPECT_EQ(target.max(), 3u);
  }
}

TEST(LatencyHistogramTest, EmptyHistogramReportsZero) {
  H histogram;
  EXPECT_EQ(histogram.count(), 0u);
  EXPECT_EQ(histogram.min(), 0u);
  EXPECT_EQ(histogram.max(), 0u);
  EXPECT_EQ(histogram.Mean(), 0.0);
  EXPECT_EQ(histogram.Stddev(), 0.0);
  for (double percentile : {0.0, 50.0, 99.9, 100.0}) {
    EXPECT_EQ(histogram.ValueAtPercentile(percentile), 0u);
  }
  histogram.Record(12'345);
  histogram.Reset();
  EXPECT_EQ(histogram.count(), 0u);
  EXPECT_EQ(histogram.min(), 0u);
  EXPECT_EQ(histogram.max(), 0u);
  EXPECT_EQ(histogram.ValueAtPercentile(50), 0u);
}

TEST(LatencyHistogramTest, ClampsAboveMaxValue) {
  H histogram;
  histogram.Record(H::kMaxValue + 1'000);
  histogram.Record(UINT64_MAX);
  histogram.RecordN(H::kMaxValue * 2, 3);
  EXPECT_EQ(histogram.count(), 5u);
  EXPECT_EQ(histogram.max(), H::kMaxValue);
  EXPECT_EQ(histogram.min(), H::kMaxValue);
  EXPECT_EQ(histogram.Mean(), static_cast<double>(H::kMaxValue));
  EXPECT_EQ(histogram.ValueAtPercentile(0), H::kMaxValue);
  EXPECT_EQ(histogram.ValueAtPercentile(100), H::kMaxValue);
  EXPECT_EQ(H::BucketIndex(UINT64_MAX), H::BucketCount() - 1);
  EXPECT_EQ(H::BucketHighest(H::BucketCount() - 1), H::kMaxValue);
}

TEST(LatencyHistogramTest, BucketLayoutIsConsistent) {
  EXPECT_EQ(H::BucketLowest(0), 0u);
  for (int index = 0; index < H::BucketCount(); ++index) {
    const uint64_t lowest = H::BucketLowest(index);
    const uint64_t highest = H::BucketHighest(index);
    ASSERT_LE(lowest, highest) << index;
    ASSERT_EQ(H::BucketIndex(lowest), index);
    ASSERT_EQ(H::BucketIndex(highest), index);
    if (index + 1 < H::BucketCount()) {
      ASSERT_EQ(H::BucketLowest(index + 1), highest + 1) << index;  // no gaps, no overlaps
    }
    if (lowest < 256) {
      ASSERT_EQ(highest, lowest) << index;  // exact below 2^8
    } else {
      ASSERT_LE(static_cast<double>(highest - lowest + 1) / static_cast<double>(lowest), 1.0 / 128)
          << index;
    }
  }
  // Random values across every power of two.
  Rng rng(6);
  for (int i = 0; i < 200'000; ++i) {
    const int bits = static_cast<int>(rng.NextU64() % 45);
    const uint64_t value = bits == 0 ? 0 : rng.NextU64() >> (64 - bits);
    const int index = H::BucketIndex(value);
    ASSERT_GE(index, 0);
    ASSERT_LT(index, H::BucketCount());
    const uint64_t clamped = std::min(value, H::kMaxValue);
    ASSERT_LE(H::BucketLowest(index), clamped) << value;
    ASSERT_LE(clamped, H::BucketHighest(index)) << value;
  }
}

TEST(LatencyHistogramTest, MeanAndStddevMatchDirectComputation) {
  Rng rng(7);
  H histogram;
  std::vector<uint64_t> values;
  for (int i = 0; i < 30'000; ++i) {
    const uint64_t value = static_cast<uint64_t>(-std::log(rng.NextOpenUnit()) * 2e8);
    histogram.Record(value);
    values.push_back(value);
  }
  long double sum = 0;
  for (uint64_t value : values) {
    sum += static_cast<long double>(value);
  }
  const long double mean = sum / values.size();
  long double squares = 0;
  for (uint64_t value : values) {
    const long double diff = static_cast<long double>(value) - mean;
    squares += diff * diff;
  }
  const double stddev = static_cast<double>(std::sqrt(squares / values.size()));  // population
  EXPECT_DOUBLE_EQ(histogram.Mean(), static_cast<double>(mean));
  EXPECT_NEAR(histogram.Stddev(), stddev, stddev * 1e-12);
  EXPECT_EQ(histogram.min(), *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(histogram.max(), *std::max_element(values.begin(), values.end()));
}

TEST(LatencyHistogramTest, StddevOfKnownSmallSets) {
  H histogram;
  for (uint64_t value : {2, 4, 4, 4, 5, 5, 7, 9}) {
    histogram.Record(value);
  }
  EXPECT_EQ(histogram.Mean(), 5.0);
  EXPECT_EQ(histogram.Stddev(), 2.0);  // population, not sample (which would be 2.138)

  H constant;
  constant.RecordN(1'000'000'007, 1'000);
  EXPECT_EQ(constant.Stddev(), 0.0);
}

TEST(LatencyHistogramTest, StddevOfTightClusterOfLargeValues) {
  // Ten-second latencies a nanosecond apart: the documented exact standard deviation must not be
  // lost to cancellation between the sum of squares and the squared mean.
  H histogram;
  histogram.RecordN(10'000'000'000, 500);
  histogram.RecordN(10'000'000'002, 500);
  EXPECT_EQ(histogram.Mean(), 10'000'000'001.0);
  EXPECT_NEAR(histogram.Stddev(), 1.0, 1e-6);
}

TEST(LatencyHistogramTest, MergeProtoRefusesInconsistentExtremesAndOverflow) {
  H source;
  source.Record(1'000);
  source.Record(2'000);
  v1::Histogram good;
  source.ToProto(&good);

  v1::Histogram min_above_max = good;
  min_above_max.set_min(5'000);
  v1::Histogram max_beyond_layout = good;
  max_beyond_layout.set_max(H::kMaxValue + 1);
  v1::Histogram counts_overflow = good;
  counts_overflow.set_bucket_count(0, UINT64_MAX);
  counts_overflow.set_bucket_count(1, 3);  // wraps around to the stated count of 2
  for (const v1::Histogram* proto : {&min_above_max, &max_beyond_layout, &counts_overflow}) {
    H target;
    target.Record(3);
    const absl::Status status = target.MergeProto(*proto);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_EQ(target.count(), 1u);
    EXPECT_EQ(target.ValueAtPercentile(100), 3u);
  }
}

TEST(LatencyHistogramTest, PercentileOutsideRangeIsClamped) {
  H histogram;
  for (uint64_t value = 1; value <= 1'000; ++value) {
    histogram.Record(value * 1'000);
  }
  EXPECT_EQ(histogram.ValueAtPercentile(-5), histogram.ValueAtPercentile(0));
  EXPECT_EQ(histogram.ValueAtPercentile(std::nan("")), histogram.ValueAtPercentile(0));
  EXPECT_EQ(histogram.ValueAtPercentile(250), histogram.ValueAtPercentile(100));
  // p0 and p100 are the buckets of min and max, reported within the bound and inside [min, max].
  EXPECT_GE(histogram.ValueAtPercentile(0), histogram.min());
  EXPECT_LE(histogram.ValueAtPercentile(0) - histogram.min(),
            static_cast<double>(histogram.min()) * H::kMaxRelativeError);
  EXPECT_LE(histogram.ValueAtPercentile(100), histogram.max());
  EXPECT_LE(histogram.max() - histogram.ValueAtPercentile(100),
            static_cast<double>(histogram.max()) * H::kMaxRelativeError);
}

TEST(LatencyHistogramTest, NearestRankStaysExactForLargeCounts) {
  // 99.9% of 15,000,000 is exactly rank 14,985,000: no absolute epsilon would survive the
  // floating-point product at this size.
  H histogram;
  histogram.RecordN(100, 14'985'000);
  histogram.RecordN(200, 15'000);
  EXPECT_EQ(histogram.ValueAtPercentile(99.9), 100u);
  EXPECT_EQ(histogram.ValueAtPercentile(99.9001), 200u);
}

}  // namespace
}  // namespace barrage::common
