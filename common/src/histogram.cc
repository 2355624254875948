#include "barrage/common/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "barrage/v1/agent.pb.h"

namespace barrage::common {
namespace {

// Values below 2^kSubBucketBits have one bucket each. Above, the range [2^e, 2^(e+1)) is cut
// into kSubBuckets buckets of width 2^(e - kSubBucketShift).
constexpr int kExactBuckets = 1 << LatencyHistogram::kSubBucketBits;  // 256
constexpr int kSubBucketShift = 7;
constexpr int kSubBuckets = 1 << kSubBucketShift;  // 128
constexpr int kMaxExponent = 43;                   // kMaxValue < 2^44
constexpr int kBucketCount =
    kExactBuckets + (kMaxExponent - LatencyHistogram::kSubBucketBits + 1) * kSubBuckets;

}  // namespace

LatencyHistogram::LatencyHistogram() : buckets_(kBucketCount, 0) {}

int LatencyHistogram::BucketCount() { return kBucketCount; }

int LatencyHistogram::BucketIndex(uint64_t value) {
  value = std::min(value, kMaxValue);
  if (value < static_cast<uint64_t>(kExactBuckets)) {
    return static_cast<int>(value);
  }
  const int exponent = std::bit_width(value) - 1;  // 2^exponent <= value
  const int shift = exponent - kSubBucketShift;
  const int sub_bucket = static_cast<int>(value >> shift) - kSubBuckets;  // 0..127
  return kExactBuckets + (exponent - kSubBucketBits) * kSubBuckets + sub_bucket;
}

uint64_t LatencyHistogram::BucketLowest(int index) {
  if (index < kExactBuckets) {
    return static_cast<uint64_t>(index);
  }
  const int above = index - kExactBuckets;
  const int exponent = kSubBucketBits + above / kSubBuckets;
  const uint64_t sub_bucket = static_cast<uint64_t>(kSubBuckets + above % kSubBuckets);
  return sub_bucket << (exponent - kSubBucketShift);
}

uint64_t LatencyHistogram::BucketHighest(int index) {
  if (index < kExactBuckets) {
    return static_cast<uint64_t>(index);
  }
  const int exponent = kSubBucketBits + (index - kExactBuckets) / kSubBuckets;
  return BucketLowest(index) + (uint64_t{1} << (exponent - kSubBucketShift)) - 1;
}

void LatencyHistogram::Record(uint64_t value) { RecordN(value, 1); }

void LatencyHistogram::RecordN(uint64_t value, uint64_t count) {
  if (count == 0) {
    return;
  }
  value = std::min(value, kMaxValue);
  buckets_[BucketIndex(value)] += count;
  count_ += count;
  sum_ += value * count;
  sum_sq_ += static_cast<unsigned __int128>(value) * value * count;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  if (other.count_ == 0) {
    return;
  }
  for (int i = 0; i < kBucketCount; ++i) {
    buckets_[i] += other.buckets_[i];
  }
  count_ += other.count_;
  sum_ += other.sum_;
  sum_sq_ += other.sum_sq_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

void LatencyHistogram::Reset() {
  std::fill(buckets_.begin(), buckets_.end(), 0);
  count_ = 0;
  sum_ = 0;
  sum_sq_ = 0;
  min_ = UINT64_MAX;
  max_ = 0;
}

double LatencyHistogram::Mean() const {
  return count_ == 0 ? 0.0 : static_cast<double>(sum_) / static_cast<double>(count_);
}

double LatencyHistogram::Stddev() const {
  if (count_ == 0) {
    return 0.0;
  }
  // n^2 * variance = n * sum_sq - sum^2, computed exactly in 128 bits while n * sum_sq fits
  // (it does for any realistic run: 10^9 samples of 10 s each), so a tight cluster of large
  // values keeps its small deviation instead of losing it to cancellation.
  const unsigned __int128 n = count_;
  const unsigned __int128 sum = sum_;
  constexpr unsigned __int128 kMax = ~static_cast<unsigned __int128>(0);
  if (sum_sq_ <= kMax / n) {
    const unsigned __int128 product = n * sum_sq_;
    const unsigned __int128 square = sum * sum;
    if (product <= square) {
      return 0.0;
    }
    const long double n_squared = static_cast<long double>(count_) * count_;
    return static_cast<double>(std::sqrt(static_cast<long double>(product - square) / n_squared));
  }
  const long double count = static_cast<long double>(count_);
  const long double mean = static_cast<long double>(sum_) / count;
  const long double variance = static_cast<long double>(sum_sq_) / count - mean * mean;
  return variance <= 0 ? 0.0 : static_cast<double>(std::sqrt(variance));
}

uint64_t LatencyHistogram::ValueAtPercentile(double percentile) const {
  if (count_ == 0) {
    return 0;
  }
  if (!(percentile > 0)) {  // also NaN
    percentile = 0;
  }
  percentile = std::min(percentile, 100.0);
  // Nearest rank: the smallest rank r with r >= p/100 * n. The relative epsilon keeps
  // 99.9/100 * 15000 = 14985.000000000002 at rank 14985, as exact arithmetic would, at any n.
  const double wanted = percentile / 100.0 * static_cast<double>(count_);
  const double rounded = std::ceil(wanted - std::max(1e-9, wanted * 1e-12));
  uint64_t rank = rounded < 1 ? 1 : static_cast<uint64_t>(std::min(rounded, 1.8e19));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (int i = 0; i < kBucketCount; ++i) {
    seen += buckets_[i];
    if (seen >= rank) {
      const uint64_t lowest = BucketLowest(i);
      const uint64_t midpoint = lowest + (BucketHighest(i) - lowest) / 2;
      return std::clamp(midpoint, min_, max_);
    }
  }
  return max_;
}

void LatencyHistogram::ToProto(v1::Histogram* out) const {
  out->Clear();
  out->set_layout_id(kLayoutId);
  out->set_count(count_);
  out->set_sum(sum_);
  out->set_sum_sq_hi(static_cast<uint64_t>(sum_sq_ >> 64));
  out->set_sum_sq_lo(static_cast<uint64_t>(sum_sq_));
  out->set_min(min());
  out->set_max(max_);
  for (int i = 0; i < kBucketCount; ++i) {
    if (buckets_[i] != 0) {
      out->add_bucket_index(static_cast<uint32_t>(i));
      out->add_bucket_count(buckets_[i]);
    }
  }
}

absl::Status LatencyHistogram::MergeProto(const v1::Histogram& in) {
  if (in.layout_id() != kLayoutId) {
    return absl::FailedPreconditionError("histogram layout " + std::to_string(in.layout_id()) +
                                         " differs from this build's layout " +
                                         std::to_string(kLayoutId));
  }
  if (in.bucket_index_size() != in.bucket_count_size()) {
    return absl::InvalidArgumentError("histogram bucket columns differ in length");
  }
  uint64_t total = 0;
  for (int i = 0; i < in.bucket_index_size(); ++i) {
    if (in.bucket_index(i) >= static_cast<uint32_t>(kBucketCount)) {
      return absl::InvalidArgumentError("histogram bucket index out of range");
    }
    if (__builtin_add_overflow(total, in.bucket_count(i), &total)) {
      return absl::InvalidArgumentError("histogram bucket counts overflow");
    }
  }
  if (total != in.count()) {
    return absl::InvalidArgumentError("histogram buckets do not add up to its count");
  }
  if (in.count() > 0 && (in.min() > in.max() || in.max() > kMaxValue)) {
    return absl::InvalidArgumentError("histogram min/max out of range");
  }
  if (__builtin_add_overflow(count_, in.count(), &total)) {
    return absl::InvalidArgumentError("merged histogram count would overflow");
  }
  if (in.count() == 0) {
    return absl::OkStatus();
  }
  for (int i = 0; i < in.bucket_index_size(); ++i) {
    buckets_[in.bucket_index(i)] += in.bucket_count(i);
  }
  count_ += in.count();
  sum_ += in.sum();
  sum_sq_ += (static_cast<unsigned __int128>(in.sum_sq_hi()) << 64) | in.sum_sq_lo();
  min_ = std::min(min_, in.min());
  max_ = std::max(max_, in.max());
  return absl::OkStatus();
}

}  // namespace barrage::common
