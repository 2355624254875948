#include "barrage/common/weighted_slices.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "barrage/common/arrival.h"
#include "barrage/common/test_plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace barrage::common {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

const std::vector<std::vector<uint32_t>> kWeightSets = {
    {1, 1, 1}, {1, 2, 1}, {3, 1}, {5}, {7, 2, 5, 1}, {4, 6}, {1, 10, 1, 1, 3}};

uint64_t Sum(const std::vector<uint32_t>& weights) {
  return std::accumulate(weights.begin(), weights.end(), uint64_t{0});
}

WeightedSlices MakeOrDie(const std::vector<uint32_t>& weights) {
  absl::StatusOr<WeightedSlices> slices = WeightedSlices::Make(weights);
  EXPECT_TRUE(slices.ok()) << slices.status();
  return *std::move(slices);
}

ArrivalProcessPtr Base(ArrivalKind kind) { return MakeArrivalProcess(kind, 1000.0, 0.5, 42); }

// Positions of `slice` in one period, and the gaps between them, the last one wrapping around.
std::vector<uint64_t> CyclicGaps(const WeightedSlices& slices, uint32_t slice) {
  std::vector<uint64_t> positions;
  for (uint64_t p = 0; p < slices.period(); ++p) {
    if (slices.Owner(p) == slice) {
      positions.push_back(p);
    }
  }
  std::vector<uint64_t> gaps;
  for (size_t i = 0; i < positions.size(); ++i) {
    const uint64_t next =
        i + 1 < positions.size() ? positions[i + 1] : positions[0] + slices.period();
    gaps.push_back(next - positions[i]);
  }
  return gaps;
}

uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

TEST(WeightedSlicesTest, UnionOfSlicesIsTheUnsplitTimeline) {
  constexpr uint64_t kArrivals = 10'007;
  for (ArrivalKind kind : {ArrivalKind::kConstant, ArrivalKind::kPoisson, ArrivalKind::kGamma}) {
    std::vector<Arrival> unsplit;
    ArrivalProcessPtr base = Base(kind);
    for (uint64_t i = 0; i < kArrivals; ++i) {
      unsplit.push_back(base->Next());
    }
    for (const std::vector<uint32_t>& weights : kWeightSets) {
      SCOPED_TRACE(::testing::PrintToString(weights) + " " + std::string(ArrivalKindName(kind)));
      const WeightedSlices slices = MakeOrDie(weights);
      std::vector<int> seen(kArrivals, 0);
      for (uint32_t slice = 0; slice < slices.count(); ++slice) {
        ArrivalProcessPtr process = MakeWeightedSlice(Base(kind), slices, slice);
        const uint64_t owned = slices.CountBefore(slice, kArrivals);
        uint64_t previous_index = 0;
        for (uint64_t i = 0; i < owned; ++i) {
          const Arrival arrival = process->Next();
          ASSERT_LT(arrival.index, kArrivals);
          ASSERT_EQ(slices.Owner(arrival.index), slice);
          ASSERT_EQ(arrival.offset, unsplit[arrival.index].offset);
          if (i > 0) {
            ASSERT_GT(arrival.index, previous_index);
          }
          previous_index = arrival.index;
          ++seen[arrival.index];
        }
        // CountBefore is exact: the slice's next arrival lies beyond the first kArrivals.
        EXPECT_GE(process->Next().index, kArrivals);
      }
      for (uint64_t i = 0; i < kArrivals; ++i) {
        ASSERT_EQ(seen[i], 1) << "arrival " << i;
      }
    }
  }
}

TEST(WeightedSlicesTest, EachSliceOwnsExactlyItsWeightOfEveryPeriod) {
  for (const std::vector<uint32_t>& weights : kWeightSets) {
    SCOPED_TRACE(::testing::PrintToString(weights));
    const WeightedSlices slices = MakeOrDie(weights);
    const uint64_t total = Sum(weights);
    ASSERT_EQ(slices.count(), weights.size());
    EXPECT_EQ(total % slices.period(), 0u);
    for (uint64_t k = 1; k <= 5; ++k) {
      std::vector<uint64_t> owned(weights.size(), 0);
      for (uint64_t p = 0; p < total * k; ++p) {
        ++owned[slices.Owner(p)];
      }
      for (uint32_t slice = 0; slice < weights.size(); ++slice) {
        EXPECT_EQ(owned[slice], weights[slice] * k) << "slice " << slice << " k " << k;
      }
    }
    // CountBefore agrees with counting, for every prefix.
    std::vector<uint64_t> owned(weights.size(), 0);
    for (uint64_t end = 0; end <= 3 * total + 1; ++end) {
      for (uint32_t slice = 0; slice < weights.size(); ++slice) {
        ASSERT_EQ(slices.CountBefore(slice, end), owned[slice]) << "slice " << slice << " end "
                                                                << end;
      }
      ++owned[slices.Owner(end)];
    }
  }
}

TEST(WeightedSlicesTest, PatternsInterleaveInsteadOfBlocks) {
  auto pattern = [](const std::vector<uint32_t>& weights) {
    const WeightedSlices slices = MakeOrDie(weights);
    std::vector<uint32_t> owners;
    for (uint64_t p = 0; p < slices.period(); ++p) {
      owners.push_back(slices.Owner(p));
    }
    return owners;
  };
  EXPECT_THAT(pattern({1, 2, 1}), ElementsAreArray({1u, 0u, 2u, 1u}));
  EXPECT_THAT(pattern({3, 1}), ElementsAreArray({0u, 0u, 1u, 0u}));
  EXPECT_THAT(pattern({2, 3}), ElementsAreArray({1u, 0u, 1u, 0u, 1u}));
  EXPECT_THAT(pattern({5}), ElementsAreArray({0u}));
  // Common factors do not change the owners, only shorten the stored period.
  EXPECT_THAT(pattern({20, 30}), ElementsAreArray({1u, 0u, 1u, 0u, 1u}));
}

TEST(WeightedSlicesTest, GapsAreAtMostCeilOfTotalOverWeightPlusOneForUpToThreeSlices) {
  for (uint32_t a = 1; a <= 12; ++a) {
    for (uint32_t b = 1; b <= 12; ++b) {
      for (uint32_t c = 0; c <= 12; ++c) {
        std::vector<uint32_t> weights = {a, b};
        if (c > 0) {
          weights.push_back(c);
        }
        const WeightedSlices slices = MakeOrDie(weights);
        const uint64_t total = Sum(weights);
        for (uint32_t slice = 0; slice < weights.size(); ++slice) {
          const std::vector<uint64_t> gaps = CyclicGaps(slices, slice);
          ASSERT_EQ(gaps.size(), weights[slice] / (total / slices.period()));
          ASSERT_LE(*std::max_element(gaps.begin(), gaps.end()),
                    CeilDiv(total, weights[slice]) + 1)
              << ::testing::PrintToString(weights) << " slice " << slice;
        }
      }
    }
  }
}

TEST(WeightedSlicesTest, GapsStayWithinTheDocumentedBoundForManySlices) {
  Rng rng(7);
  const uint32_t kChoices[] = {1, 1, 2, 3, 5, 7, 10, 16, 60};
  for (int trial = 0; trial < 500; ++trial) {
    const size_t count = 1 + rng.NextU64() % 9;
    std::vector<uint32_t> weights;
    for (size_t i = 0; i < count; ++i) {
      weights.push_back(kChoices[rng.NextU64() % std::size(kChoices)]);
    }
    const WeightedSlices slices = MakeOrDie(weights);
    const uint64_t total = Sum(weights);
    for (uint32_t slice = 0; slice < count; ++slice) {
      uint64_t bound = 1;
      for (uint32_t other = 0; other < count; ++other) {
        if (other != slice) {
          bound += CeilDiv(weights[other], weights[slice]);
        }
      }
      const std::vector<uint64_t> gaps = CyclicGaps(slices, slice);
      const uint64_t max_gap = *std::max_element(gaps.begin(), gaps.end());
      ASSERT_LE(max_gap, bound) << ::testing::PrintToString(weights) << " slice " << slice;
      ASSERT_LE(max_gap, CeilDiv(total, weights[slice]) + std::max<uint64_t>(count, 3) - 2)
          << ::testing::PrintToString(weights) << " slice " << slice;
    }
  }
}

TEST(WeightedSlicesTest, EqualWeightsAreRoundRobinLikeMakeSlicedArrivals) {
  for (uint32_t count = 1; count <= 5; ++count) {
    for (uint32_t weight : {1u, 3u}) {
      const WeightedSlices slices = MakeOrDie(std::vector<uint32_t>(count, weight));
      for (uint64_t p = 0; p < 1000; ++p) {
        ASSERT_EQ(slices.Owner(p), p % count);
      }
      for (uint32_t slice = 0; slice < count; ++slice) {
        ArrivalProcessPtr weighted = MakeWeightedSlice(Base(ArrivalKind::kPoisson), slices, slice);
        ArrivalProcessPtr sliced =
            MakeSlicedArrivals(Base(ArrivalKind::kPoisson), slice, count);
        for (int i = 0; i < 3000; ++i) {
          const Arrival a = weighted->Next();
          const Arrival b = sliced->Next();
          ASSERT_EQ(a.index, b.index);
          ASSERT_EQ(a.offset, b.offset);
        }
      }
    }
  }
}

TEST(WeightedSlicesTest, WorkerSlicesOfAWeightedSlicePartitionIt) {
  const WeightedSlices slices = MakeOrDie({1, 2, 1});
  std::vector<uint64_t> agent;
  ArrivalProcessPtr agent_process = MakeWeightedSlice(Base(ArrivalKind::kPoisson), slices, 1);
  for (int i = 0; i < 3000; ++i) {
    agent.push_back(agent_process->Next().index);
  }
  std::vector<uint64_t> workers;
  for (uint32_t worker = 0; worker < 3; ++worker) {
    ArrivalProcessPtr process = MakeSlicedArrivals(
        MakeWeightedSlice(Base(ArrivalKind::kPoisson), slices, 1), worker, 3);
    for (int i = 0; i < 1000; ++i) {
      workers.push_back(process->Next().index);
    }
  }
  std::sort(workers.begin(), workers.end());
  EXPECT_EQ(workers, agent);
}

TEST(WeightedSlicesTest, SliceIndexIsTakenModuloTheCount) {
  const WeightedSlices slices = MakeOrDie({1, 2, 1});
  ArrivalProcessPtr wrapped = MakeWeightedSlice(Base(ArrivalKind::kConstant), slices, 4);
  ArrivalProcessPtr direct = MakeWeightedSlice(Base(ArrivalKind::kConstant), slices, 1);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(wrapped->Next().index, direct->Next().index);
  }
  EXPECT_EQ(slices.CountBefore(7, 100), 0u);
}

TEST(WeightedSlicesTest, MakeRefusesBadWeights) {
  EXPECT_THAT(std::string(WeightedSlices::Make({}).status().message()), HasSubstr("no slice"));
  EXPECT_THAT(std::string(WeightedSlices::Make({0}).status().message()),
              HasSubstr("weight 1 is 0"));
  EXPECT_THAT(std::string(WeightedSlices::Make({1, 0, 2}).status().message()),
              HasSubstr("weight 2 is 0"));
  EXPECT_THAT(std::string(WeightedSlices::Make({100'000, 1}).status().message()),
              HasSubstr("more than 100000"));
  const uint32_t kMax = std::numeric_limits<uint32_t>::max();
  EXPECT_EQ(WeightedSlices::Make({kMax, kMax}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(WeightedSlices::Make({100'000}).ok());
  EXPECT_TRUE(WeightedSlices::Make({50'000, 49'999, 1}).ok());
}

TEST(WeightedSlicesTest, TheLargestPatternIsRoundRobin) {
  const WeightedSlices slices = MakeOrDie(std::vector<uint32_t>(100'000, 1));
  EXPECT_EQ(slices.period(), 100'000u);
  for (uint64_t p = 0; p < 300'000; p += 997) {
    ASSERT_EQ(slices.Owner(p), p % 100'000);
  }
  EXPECT_EQ(slices.CountBefore(99'999, 1'000'000), 10u);
}

TEST(WeightedShareTest, SharesAddUpExactlyAndStayWithinOneOfTheQuota) {
  std::vector<uint64_t> totals;
  for (uint64_t total = 0; total <= 2000; ++total) {
    totals.push_back(total);
  }
  const uint64_t kMax = std::numeric_limits<uint64_t>::max();
  totals.insert(totals.end(), {1'000'000'007ULL, kMax / 3, kMax - 1, kMax});
  for (const std::vector<uint32_t>& weights : kWeightSets) {
    const long double weight_sum = static_cast<long double>(Sum(weights));
    for (uint64_t total : totals) {
      uint64_t sum = 0;
      for (uint32_t index = 0; index < weights.size(); ++index) {
        const uint64_t share = WeightedShare(total, weights, index);
        const long double quota = static_cast<long double>(total) * weights[index] / weight_sum;
        ASSERT_LT(std::abs(static_cast<long double>(share) - quota), 1.0L + quota * 1e-15L)
            << ::testing::PrintToString(weights) << " total " << total << " index " << index;
        sum += share;
      }
      ASSERT_EQ(sum, total) << ::testing::PrintToString(weights);
    }
  }
}

TEST(WeightedShareTest, LargestRemaindersGetTheLeftOversLowerIndexFirst) {
  // Quotas 2.5, 5, 2.5: one unit left, equal remainders, so the lower index gets it.
  EXPECT_EQ(WeightedShare(10, {1, 2, 1}, 0), 3u);
  EXPECT_EQ(WeightedShare(10, {1, 2, 1}, 1), 5u);
  EXPECT_EQ(WeightedShare(10, {1, 2, 1}, 2), 2u);
  // Quotas 1.4, 2.8, 2.8: two units left, to the two larger remainders.
  EXPECT_EQ(WeightedShare(7, {1, 2, 2}, 0), 1u);
  EXPECT_EQ(WeightedShare(7, {1, 2, 2}, 1), 3u);
  EXPECT_EQ(WeightedShare(7, {1, 2, 2}, 2), 3u);
  // Fewer units than parts: some parts get none.
  EXPECT_EQ(WeightedShare(2, {1, 1, 1}, 2), 0u);
  EXPECT_EQ(WeightedShare(5, {1, 2}, 7), 0u);
  EXPECT_EQ(WeightedShare(5, {}, 0), 0u);
  EXPECT_EQ(WeightedShare(5, {0, 0}, 0), 0u);
}

TEST(WeightedShareTest, EqualWeightsMatchIntegerShare) {
  for (uint32_t parts = 1; parts <= 7; ++parts) {
    for (uint64_t total = 0; total <= 100; ++total) {
      for (uint32_t index = 0; index < parts; ++index) {
        ASSERT_EQ(WeightedShare(total, std::vector<uint32_t>(parts, 4), index),
                  IntegerShare(total, parts, index));
      }
    }
  }
}

TEST(WeightedRateTest, RatesAreProportionalToWeights) {
  EXPECT_DOUBLE_EQ(WeightedRate(100, {1, 2, 1}, 0), 25);
  EXPECT_DOUBLE_EQ(WeightedRate(100, {1, 2, 1}, 1), 50);
  EXPECT_DOUBLE_EQ(WeightedRate(100, {1, 2, 1}, 2), 25);
  EXPECT_DOUBLE_EQ(WeightedRate(6000, {1, 1, 1}, 2), 2000);
  EXPECT_EQ(WeightedRate(100, {1, 2, 1}, 3), 0);
  EXPECT_EQ(WeightedRate(100, {}, 0), 0);
  EXPECT_EQ(WeightedRate(std::numeric_limits<double>::infinity(), {1, 3}, 1),
            std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace barrage::common
