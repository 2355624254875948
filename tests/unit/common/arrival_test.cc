#include "barrage/common/arrival.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace barrage::common {
namespace {

std::vector<Arrival> Take(ArrivalProcess& process, size_t count) {
  std::vector<Arrival> arrivals;
  arrivals.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    arrivals.push_back(process.Next());
  }
  return arrivals;
}

// Gaps between consecutive arrivals, in seconds.
std::vector<double> GapsSeconds(ArrivalProcess& process, size_t count) {
  std::vector<Arrival> arrivals = Take(process, count + 1);
  std::vector<double> gaps;
  gaps.reserve(count);
  for (size_t i = 1; i < arrivals.size(); ++i) {
    gaps.push_back(static_cast<double>(arrivals[i].offset - arrivals[i - 1].offset) / 1e9);
  }
  return gaps;
}

// One-sample Kolmogorov-Smirnov test of `gaps` against Exp(rate) at alpha 0.01.
bool PassesExponentialKs(std::vector<double> gaps, double rate, double* statistic) {
  std::sort(gaps.begin(), gaps.end());
  const double n = static_cast<double>(gaps.size());
  double d = 0;
  for (size_t i = 0; i < gaps.size(); ++i) {
    const double cdf = 1.0 - std::exp(-rate * gaps[i]);
    d = std::max(d, cdf - static_cast<double>(i) / n);
    d = std::max(d, static_cast<double>(i + 1) / n - cdf);
  }
  *statistic = d;
  const double critical = 1.628 / (std::sqrt(n) + 0.12 + 0.11 / std::sqrt(n));
  return d <= critical;
}

bool SameArrivals(const std::vector<Arrival>& a, const std::vector<Arrival>& b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].index != b[i].index || a[i].offset != b[i].offset) {
      return false;
    }
  }
  return true;
}

TEST(ArrivalTest, ConstantOffsetsAreExactlyIndexOverRate) {
  for (uint64_t rate : {1u, 3u, 7u, 1'000u, 12'345u, 1'000'000u}) {
    ArrivalProcessPtr process =
        MakeArrivalProcess(ArrivalKind::kConstant, static_cast<double>(rate), 1.0, 0);
    for (uint64_t i = 0; i < 100'000; ++i) {
      const Arrival arrival = process->Next();
      ASSERT_EQ(arrival.index, i);
      // round(i * 1e9 / rate) in integers (no tie is possible unless 2 divides rate exactly).
      const uint64_t numerator = i * 1'000'000'000;
      const Nanos expected = static_cast<Nanos>((2 * numerator + rate) / (2 * rate));
      ASSERT_EQ(arrival.offset, expected) << "rate " << rate << " index " << i;
    }
  }
  // A fractional rate: 2.5/s is exactly 400 ms apart.
  ArrivalProcessPtr process = MakeArrivalProcess(ArrivalKind::kConstant, 2.5, 1.0, 0);
  for (uint64_t i = 0; i < 10'000; ++i) {
    ASSERT_EQ(process->Next().offset, static_cast<Nanos>(i * 400'000'000));
  }
}

TEST(ArrivalTest, PoissonGapsAreExponential) {
  constexpr double kRate = 1'000;
  ArrivalProcessPtr process = MakeArrivalProcess(ArrivalKind::kPoisson, kRate, 1.0, 42);
  const std::vector<double> gaps = GapsSeconds(*process, 20'000);
  double statistic = 0;
  EXPECT_TRUE(PassesExponentialKs(gaps, kRate, &statistic)) << "D = " << statistic;
  double mean = 0;
  for (double gap : gaps) {
    mean += gap;
  }
  mean /= static_cast<double>(gaps.size());
  EXPECT_NEAR(mean, 1.0 / kRate, 0.03 / kRate);
}

TEST(ArrivalTest, KsTestRejectsNonExponentialGaps) {
  // Negative controls: the same test must fail on gaps that are not exponential.
  constexpr double kRate = 1'000;
  double statistic = 0;
  ArrivalProcessPtr constant = MakeArrivalProcess(ArrivalKind::kConstant, kRate, 1.0, 42);
  EXPECT_FALSE(PassesExponentialKs(GapsSeconds(*constant, 20'000), kRate, &statistic))
      << "D = " << statistic;
  ArrivalProcessPtr bursty = MakeArrivalProcess(ArrivalKind::kGamma, kRate, 0.2, 42);
  EXPECT_FALSE(PassesExponentialKs(GapsSeconds(*bursty, 20'000), kRate, &statistic))
      << "D = " << statistic;
  // Poisson at the wrong rate too.
  ArrivalProcessPtr wrong_rate = MakeArrivalProcess(ArrivalKind::kPoisson, kRate * 1.1, 1.0, 42);
  EXPECT_FALSE(PassesExponentialKs(GapsSeconds(*wrong_rate, 20'000), kRate, &statistic))
      << "D = " << statistic;
}

TEST(ArrivalTest, GammaWithShapeOneIsExponential) {
  constexpr double kRate = 500;
  ArrivalProcessPtr process = MakeArrivalProcess(ArrivalKind::kGamma, kRate, 1.0, 9);
  double statistic = 0;
  EXPECT_TRUE(PassesExponentialKs(GapsSeconds(*process, 20'000), kRate, &statistic))
      << "D = " << statistic;
}

TEST(ArrivalTest, GammaMeanAndVariance) {
  constexpr double kRate = 200;
  for (double burstiness : {0.5, 4.0}) {
    ArrivalProcessPtr process = MakeArrivalProcess(ArrivalKind::kGamma, kRate, burstiness, 11);
    const std::vector<double> gaps = GapsSeconds(*process, 100'000);
    double mean = 0;
    for (double gap : gaps) {
      mean += gap;
    }
    mean /= static_cast<double>(gaps.size());
    double variance = 0;
    for (double gap : gaps) {
      variance += (gap - mean) * (gap - mean);
    }
    variance /= static_cast<double>(gaps.size() - 1);
    const double cv_squared = variance / (mean * mean);
    EXPECT_NEAR(mean, 1.0 / kRate, 0.03 / kRate) << "burstiness " << burstiness;
    EXPECT_NEAR(cv_squared, 1.0 / burstiness, 0.1 / burstiness) << "burstiness " << burstiness;
  }
}

TEST(ArrivalTest, OffsetsNeverDecrease) {
  for (ArrivalKind kind : {ArrivalKind::kConstant, ArrivalKind::kPoisson, ArrivalKind::kGamma}) {
    ArrivalProcessPtr process = MakeArrivalProcess(kind, 1e6, 0.1, 3);
    Arrival previous = process->Next();
    EXPECT_EQ(previous.index, 0u);
    EXPECT_EQ(previous.offset, 0);
    for (int i = 1; i < 50'000; ++i) {
      const Arrival arrival = process->Next();
      ASSERT_EQ(arrival.index, previous.index + 1);
      ASSERT_GE(arrival.offset, previous.offset);
      previous = arrival;
    }
  }
}

TEST(ArrivalTest, SameSeedSameSequenceOtherSeedOther) {
  for (ArrivalKind kind : {ArrivalKind::kPoisson, ArrivalKind::kGamma}) {
    ArrivalProcessPtr a = MakeArrivalProcess(kind, 1'000, 0.5, 123);
    ArrivalProcessPtr b = MakeArrivalProcess(kind, 1'000, 0.5, 123);
    ArrivalProcessPtr c = MakeArrivalProcess(kind, 1'000, 0.5, 124);
    const std::vector<Arrival> first = Take(*a, 5'000);
    EXPECT_TRUE(SameArrivals(first, Take(*b, 5'000))) << ArrivalKindName(kind);
    const std::vector<Arrival> other = Take(*c, 5'000);
    int same_offsets = 0;
    for (size_t i = 1; i < first.size(); ++i) {
      same_offsets += first[i].offset == other[i].offset ? 1 : 0;
    }
    EXPECT_LT(same_offsets, 10) << ArrivalKindName(kind);
  }
  Rng x(77);
  Rng y(77);
  Rng z(78);
  int same = 0;
  for (int i = 0; i < 1'000; ++i) {
    const uint64_t value = x.NextU64();
    ASSERT_EQ(value, y.NextU64());
    same += value == z.NextU64() ? 1 : 0;
  }
  EXPECT_EQ(same, 0);
}

TEST(ArrivalTest, RngOpenUnitStaysInside) {
  Rng rng(5);
  double sum = 0;
  for (int i = 0; i < 100'000; ++i) {
    const double u = rng.NextOpenUnit();
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 100'000, 0.5, 0.01);
}

ArrivalProcessPtr Base(ArrivalKind kind) { return MakeArrivalProcess(kind, 1'000, 0.5, 2024); }

TEST(ArrivalTest, SlicesPartitionTheTimeline) {
  constexpr size_t kTotal = 12'000;
  for (ArrivalKind kind : {ArrivalKind::kConstant, ArrivalKind::kPoisson, ArrivalKind::kGamma}) {
    ArrivalProcessPtr whole_process = Base(kind);
    const std::vector<Arrival> whole = Take(*whole_process, kTotal);
    for (uint32_t count : {1u, 3u, 4u}) {
      std::vector<Arrival> joined;
      for (uint32_t index = 0; index < count; ++index) {
        ArrivalProcessPtr slice = MakeSlicedArrivals(Base(kind), index, count);
        const std::vector<Arrival> part = Take(*slice, kTotal / count);
        for (size_t i = 0; i < part.size(); ++i) {
          // Slice `index` holds exactly the arrivals at positions index, index + count, ...
          ASSERT_EQ(part[i].index, index + i * count);
        }
        joined.insert(joined.end(), part.begin(), part.end());
      }
      std::sort(joined.begin(), joined.end(),
                [](const Arrival& a, const Arrival& b) { return a.index < b.index; });
      EXPECT_TRUE(SameArrivals(joined, whole))
          << ArrivalKindName(kind) << " in " << count << " slices";
    }
  }
}

TEST(ArrivalTest, SlicesOfASliceStillPartitionIt) {
  constexpr size_t kAgentTotal = 6'000;
  for (ArrivalKind kind : {ArrivalKind::kConstant, ArrivalKind::kPoisson, ArrivalKind::kGamma}) {
    ArrivalProcessPtr agent_process = MakeSlicedArrivals(Base(kind), 2, 3);
    const std::vector<Arrival> agent = Take(*agent_process, kAgentTotal);
    std::vector<Arrival> joined;
    for (uint32_t worker = 0; worker < 2; ++worker) {
      ArrivalProcessPtr slice = MakeSlicedArrivals(MakeSlicedArrivals(Base(kind), 2, 3), worker, 2);
      const std::vector<Arrival> part = Take(*slice, kAgentTotal / 2);
      for (size_t i = 0; i < part.size(); ++i) {
        ASSERT_EQ(part[i].index, 2 + 3 * (worker + 2 * i));
      }
      joined.insert(joined.end(), part.begin(), part.end());
    }
    std::sort(joined.begin(), joined.end(),
              [](const Arrival& a, const Arrival& b) { return a.index < b.index; });
    EXPECT_TRUE(SameArrivals(joined, agent)) << ArrivalKindName(kind);
  }
}

TEST(ArrivalTest, ParseArrivalKind) {
  for (ArrivalKind kind : {ArrivalKind::kConstant, ArrivalKind::kPoisson, ArrivalKind::kGamma}) {
    absl::StatusOr<ArrivalKind> parsed = ParseArrivalKind(ArrivalKindName(kind));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, kind);
  }
  EXPECT_EQ(ArrivalKindName(ArrivalKind::kConstant), "constant");
  EXPECT_EQ(ArrivalKindName(ArrivalKind::kPoisson), "poisson");
  EXPECT_EQ(ArrivalKindName(ArrivalKind::kGamma), "gamma");
  for (std::string_view bad : {"", "uniform", "Poisson", "gamma ", "const"}) {
    absl::StatusOr<ArrivalKind> parsed = ParseArrivalKind(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(parsed.status().message());
    EXPECT_NE(message.find("'" + std::string(bad) + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("constant, poisson or gamma"), std::string::npos) << message;
  }
}

TEST(ArrivalTest, SliceIndexOutOfRangeDoesNotSpin) {
  // Index 5 of 3 slices is read as index 2 rather than never matching (which would loop forever).
  ArrivalProcessPtr slice = MakeSlicedArrivals(Base(ArrivalKind::kConstant), 5, 3);
  for (uint64_t i = 0; i < 100; ++i) {
    ASSERT_EQ(slice->Next().index, 2 + 3 * i);
  }
}

TEST(ArrivalTest, InvalidShapeFallsBackToPoissonInsteadOfLooping) {
  // ValidatePlan refuses these; a caller that skipped it still gets a terminating sampler.
  for (double shape : {0.0, -1.0, std::nan("")}) {
    ArrivalProcessPtr process = MakeArrivalProcess(ArrivalKind::kGamma, 1'000, shape, 1);
    ArrivalProcessPtr poisson = MakeArrivalProcess(ArrivalKind::kGamma, 1'000, 1.0, 1);
    EXPECT_TRUE(SameArrivals(Take(*process, 1'000), Take(*poisson, 1'000))) << shape;
  }
}

}  // namespace
}  // namespace barrage::common
