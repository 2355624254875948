#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "barrage/common/arrival.h"

namespace barrage::common {

// Splits a sequence of positions (the arrivals of the global timeline) among weighted slices
// (agents): a fixed pattern, computed once, in which slice i owns exactly weights[i] of every
// W = sum(weights) consecutive positions, spread evenly rather than in blocks. The j-th position
// of slice i (0 <= j < weights[i]) ideally lies at (j + 1/2) / weights[i] of the pattern; the
// pattern lists all these ideal instants in order, ties to the lower slice index (the Sainte-Laguë
// / Webster apportionment sequence). Hence:
//  - equal weights give plain round robin, position p owned by slice p % count;
//  - slice i's consecutive positions are at most 1 + sum over other slices m of
//    ceil(weights[m] / weights[i]) apart, i.e. at most ceil(W / weights[i]) + count - 2 (for two
//    or three slices: ceil(W / weights[i]) + 1).
// Immutable once made; copies share the pattern. Owner() is O(1) and allocates nothing.
class WeightedSlices {
 public:
  // The largest sum of weights: the pattern holds one entry per unit of weight.
  static constexpr uint64_t kMaxTotalWeight = 100000;

  // @param weights one per slice, each >= 1, sum <= kMaxTotalWeight.
  // @return InvalidArgument for no weights, a zero weight or too large a sum.
  static absl::StatusOr<WeightedSlices> Make(std::vector<uint32_t> weights);

  // @return the slice that owns the position-th element of the sequence.
  uint32_t Owner(uint64_t position) const {
    return table_->owner[static_cast<size_t>(position % table_->owner.size())];
  }

  // @return how many of the positions [0, end) slice_index owns (0 for an unknown slice): its
  //     exact share of the first `end` arrivals.
  uint64_t CountBefore(uint32_t slice_index, uint64_t end) const;

  uint32_t count() const { return static_cast<uint32_t>(table_->weights.size()); }
  uint32_t weight(uint32_t slice_index) const { return table_->weights[slice_index]; }
  const std::vector<uint32_t>& weights() const { return table_->weights; }
  // @return the length of the repeating pattern: W divided by the weights' greatest common
  //     divisor (scaling every weight alike gives the same owners).
  uint32_t period() const { return static_cast<uint32_t>(table_->owner.size()); }

 private:
  struct Table {
    std::vector<uint32_t> weights;
    std::vector<uint32_t> owner;      // owner[p] for p in [0, period)
    std::vector<uint32_t> positions;  // each slice's positions in the period, slice after slice
    std::vector<uint32_t> first;      // slice i's positions are [first[i], first[i + 1])
  };

  explicit WeightedSlices(std::shared_ptr<const Table> table) : table_(std::move(table)) {}

  std::shared_ptr<const Table> table_;
};

// Keeps the arrivals of `base` whose position in base's own sequence is owned by slice_index
// (taken modulo slices.count()); arrivals keep their global index. The union of all slices is
// `base`; with equal weights this equals MakeSlicedArrivals(base, slice_index, slices.count()).
ArrivalProcessPtr MakeWeightedSlice(ArrivalProcessPtr base, const WeightedSlices& slices,
                                    uint32_t slice_index);

// Splits `total` into integer shares proportional to `weights` that add up exactly to `total`
// (largest remainder method; equal remainders go to the lower index first). Equal weights give
// IntegerShare(total, weights.size(), index).
// @return the share of `index`; 0 for an index out of range or all-zero weights.
uint64_t WeightedShare(uint64_t total, const std::vector<uint32_t>& weights, uint32_t index);

// @return rate * weights[index] / sum(weights); 0 for an index out of range or all-zero weights.
double WeightedRate(double rate, const std::vector<uint32_t>& weights, uint32_t index);

}  // namespace barrage::common
