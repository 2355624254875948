#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"

namespace barrage::v1 {
class Histogram;
}

namespace barrage::common {

// A log-linear latency histogram in the manner of HdrHistogram, with one fixed layout:
// values are non-negative integers (nanoseconds) from 0 to kMaxValue; values up to 2^8 have
// buckets of width 1; above that each power of two is split into 128 equal sub-buckets, so a
// bucket's width is at most 1/128 of its lower bound. Percentiles report a bucket's midpoint,
// so a reported value differs from the exact sample it stands for by at most 1/256 (0.4%).
// Values above kMaxValue are clamped to it (and still counted).
//
// Count, sum, sum of squares, min and max are kept exactly, so mean and standard deviation are
// exact. Merge is bucket addition. Recording allocates nothing (the buckets are allocated once).
// Not thread-safe: each worker owns its own and they are merged at the edges.
class LatencyHistogram {
 public:
  static constexpr uint32_t kLayoutId = 1;  // changes whenever the layout below changes
  static constexpr int kSubBucketBits = 8;  // 256 sub-buckets in the first range
  static constexpr uint64_t kMaxValue = (uint64_t{1} << 44) - 1;  // about 4.9 hours in ns
  // Documented bound on |reported - exact| / exact for every percentile.
  static constexpr double kMaxRelativeError = 1.0 / 256;

  LatencyHistogram();

  void Record(uint64_t value);
  void RecordN(uint64_t value, uint64_t count);
  void Merge(const LatencyHistogram& other);
  void Reset();

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  double Mean() const;
  // Population standard deviation (numpy's default, as vLLM reports it).
  double Stddev() const;
  // Nearest-rank percentile: the value of the sample of rank ceil(p/100 * count), reported as its
  // bucket's midpoint (clamped to [min, max]). 0 for an empty histogram.
  // @param percentile in [0, 100].
  uint64_t ValueAtPercentile(double percentile) const;

  // Sparse wire form.
  void ToProto(v1::Histogram* out) const;
  // @return FailedPrecondition when the layout differs, InvalidArgument when malformed.
  absl::Status MergeProto(const v1::Histogram& in);

  // Layout helpers, public for tests.
  static int BucketIndex(uint64_t value);
  static uint64_t BucketLowest(int index);
  static uint64_t BucketHighest(int index);  // inclusive
  static int BucketCount();

 private:
  std::vector<uint64_t> buckets_;
  uint64_t count_ = 0;
  uint64_t sum_ = 0;
  unsigned __int128 sum_sq_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
};

}  // namespace barrage::common
