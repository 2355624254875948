#include "barrage/common/weighted_slices.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "absl/numeric/int128.h"

namespace barrage::common {
namespace {

// The arrivals of `base` at the positions `slices` gives to slice_index_.
class WeightedSliceArrivals : public ArrivalProcess {
 public:
  WeightedSliceArrivals(ArrivalProcessPtr base, WeightedSlices slices, uint32_t slice_index)
      : base_(std::move(base)), slices_(std::move(slices)), slice_index_(slice_index) {}
  Arrival Next() override {
    while (true) {
      const Arrival arrival = base_->Next();
      const uint64_t position = position_++;
      if (slices_.Owner(position) == slice_index_) {
        return arrival;
      }
    }
  }

 private:
  ArrivalProcessPtr base_;
  const WeightedSlices slices_;
  const uint32_t slice_index_;
  uint64_t position_ = 0;
};

}  // namespace

absl::StatusOr<WeightedSlices> WeightedSlices::Make(std::vector<uint32_t> weights) {
  if (weights.empty()) {
    return absl::InvalidArgumentError("no slice weights; give one weight >= 1 per slice");
  }
  uint64_t total = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] == 0) {
      return absl::InvalidArgumentError("weight " + std::to_string(i + 1) +
                                        " is 0; every weight must be at least 1");
    }
    total += weights[i];
  }
  if (total > kMaxTotalWeight) {
    return absl::InvalidArgumentError(
        "the weights add up to " + std::to_string(total) + ", more than " +
        std::to_string(kMaxTotalWeight) + "; use smaller weights in the same proportions");
  }

  // Scaling every weight alike leaves the ideal instants' order unchanged, so one period of the
  // reduced weights is the whole pattern.
  uint32_t divisor = 0;
  for (uint32_t weight : weights) {
    divisor = std::gcd(divisor, weight);
  }
  std::vector<uint32_t> reduced(weights.size());
  for (size_t i = 0; i < weights.size(); ++i) {
    reduced[i] = weights[i] / divisor;
  }

  // Slot (slice, j) ideally lies at (2j + 1) / (2 reduced[slice]); compared exactly in integers.
  struct Slot {
    uint32_t slice;
    uint32_t j;
  };
  std::vector<Slot> slots;
  slots.reserve(static_cast<size_t>(total / divisor));
  for (uint32_t slice = 0; slice < reduced.size(); ++slice) {
    for (uint32_t j = 0; j < reduced[slice]; ++j) {
      slots.push_back({slice, j});
    }
  }
  std::sort(slots.begin(), slots.end(), [&reduced](const Slot& a, const Slot& b) {
    const uint64_t a_scaled = (2 * uint64_t{a.j} + 1) * reduced[b.slice];
    const uint64_t b_scaled = (2 * uint64_t{b.j} + 1) * reduced[a.slice];
    if (a_scaled != b_scaled) {
      return a_scaled < b_scaled;
    }
    return a.slice < b.slice;
  });

  auto table = std::make_shared<Table>();
  table->owner.resize(slots.size());
  table->first.assign(reduced.size() + 1, 0);
  for (size_t i = 0; i < reduced.size(); ++i) {
    table->first[i + 1] = table->first[i] + reduced[i];
  }
  table->positions.resize(slots.size());
  // Slots of one slice appear in order of j, so position j of the slice is its j-th entry.
  for (size_t position = 0; position < slots.size(); ++position) {
    const Slot& slot = slots[position];
    table->owner[position] = slot.slice;
    table->positions[table->first[slot.slice] + slot.j] = static_cast<uint32_t>(position);
  }
  table->weights = std::move(weights);
  return WeightedSlices(std::move(table));
}

uint64_t WeightedSlices::CountBefore(uint32_t slice_index, uint64_t end) const {
  if (slice_index >= count()) {
    return 0;
  }
  const uint64_t period_length = period();
  const auto begin = table_->positions.begin() + table_->first[slice_index];
  const auto stop = table_->positions.begin() + table_->first[slice_index + 1];
  const uint64_t per_period = static_cast<uint64_t>(stop - begin);
  const uint64_t rest = static_cast<uint64_t>(
      std::lower_bound(begin, stop, static_cast<uint32_t>(end % period_length)) - begin);
  return end / period_length * per_period + rest;
}

ArrivalProcessPtr MakeWeightedSlice(ArrivalProcessPtr base, const WeightedSlices& slices,
                                    uint32_t slice_index) {
  if (slices.count() <= 1) {
    return base;
  }
  // An index outside [0, count) would never own a position and Next() would spin forever.
  return std::make_unique<WeightedSliceArrivals>(std::move(base), slices,
                                                 slice_index % slices.count());
}

uint64_t WeightedShare(uint64_t total, const std::vector<uint32_t>& weights, uint32_t index) {
  uint64_t weight_sum = 0;
  for (uint32_t weight : weights) {
    weight_sum += weight;
  }
  if (index >= weights.size() || weight_sum == 0) {
    return 0;
  }
  // total * weight / weight_sum needs up to 96 bits.
  auto quota = [&](size_t i) {
    const absl::uint128 scaled = absl::uint128(total) * weights[i];
    return std::pair<uint64_t, uint64_t>(absl::Uint128Low64(scaled / weight_sum),
                                         absl::Uint128Low64(scaled % weight_sum));
  };
  uint64_t floors = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    floors += quota(i).first;
  }
  const uint64_t left_over = total - floors;  // fewer than weights.size()
  const auto [share, remainder] = quota(index);
  uint64_t rank = 0;  // how many parts get a left-over unit before `index`
  for (size_t i = 0; i < weights.size() && rank < left_over; ++i) {
    const uint64_t other = quota(i).second;
    if (other > remainder || (other == remainder && i < index)) {
      ++rank;
    }
  }
  return share + (rank < left_over ? 1 : 0);
}

double WeightedRate(double rate, const std::vector<uint32_t>& weights, uint32_t index) {
  uint64_t weight_sum = 0;
  for (uint32_t weight : weights) {
    weight_sum += weight;
  }
  if (index >= weights.size() || weight_sum == 0) {
    return 0;
  }
  return rate * static_cast<double>(weights[index]) / static_cast<double>(weight_sum);
}

}  // namespace barrage::common
