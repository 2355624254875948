#include "barrage/common/arrival.h"

#include <cmath>
#include <numbers>
#include <string>

namespace barrage::common {
namespace {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t RotateLeft(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

Nanos SecondsToNanos(double seconds) {
  // Saturates instead of overflowing: an arrival beyond ~292 years (or a NaN from a rate the
  // plan validation refuses) lies after any run's end, never before it.
  const double nanos = seconds * static_cast<double>(kNanosPerSecond);
  if (!(nanos < 9.2e18)) {
    return INT64_MAX;
  }
  return static_cast<Nanos>(std::llround(nanos));
}

// wrk2's schedule: arrival i at exactly i / rate. Computed from the index, not summed, so
// rounding never drifts.
class ConstantArrivals : public ArrivalProcess {
 public:
  explicit ConstantArrivals(double rate) : period_seconds_(1.0 / rate) {}
  Arrival Next() override {
    const Arrival arrival{next_index_,
                          SecondsToNanos(static_cast<double>(next_index_) * period_seconds_)};
    ++next_index_;
    return arrival;
  }

 private:
  const double period_seconds_;
  uint64_t next_index_ = 0;
};

// Independent gaps drawn by `Gap`; the first arrival is at 0. Time is summed in double seconds
// and rounded once per arrival, so rounding does not accumulate either.
template <typename Gap>
class RenewalArrivals : public ArrivalProcess {
 public:
  RenewalArrivals(Gap gap, uint64_t seed) : gap_(gap), rng_(seed) {}
  Arrival Next() override {
    const Arrival arrival{next_index_, SecondsToNanos(elapsed_seconds_)};
    ++next_index_;
    elapsed_seconds_ += gap_(rng_);
    return arrival;
  }

 private:
  Gap gap_;
  Rng rng_;
  uint64_t next_index_ = 0;
  double elapsed_seconds_ = 0;
};

// Exponential gaps of mean 1/rate: a Poisson process.
struct ExponentialGap {
  double rate;
  double operator()(Rng& rng) const { return -std::log(rng.NextOpenUnit()) / rate; }
};

// Gamma(shape, scale) by Marsaglia and Tsang (2000); shape < 1 through the boost
// Gamma(shape) = Gamma(shape + 1) * U^(1/shape). Mean gap shape * scale = 1/rate, as vLLM
// parameterizes its burstiness.
struct GammaGap {
  double shape;
  double scale;
  double operator()(Rng& rng) const {
    const double boosted_shape = shape < 1 ? shape + 1 : shape;
    const double d = boosted_shape - 1.0 / 3.0;
    const double c = 1.0 / std::sqrt(9.0 * d);
    double sample = 0;
    while (true) {
      double x = 0;
      double v = 0;
      do {
        x = rng.NextStandardNormal();
        v = 1.0 + c * x;
      } while (v <= 0);
      v = v * v * v;
      const double u = rng.NextOpenUnit();
      if (u < 1.0 - 0.0331 * x * x * x * x ||
          std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) {
        sample = d * v;
        break;
      }
    }
    if (shape < 1) {
      sample *= std::pow(rng.NextOpenUnit(), 1.0 / shape);
    }
    return sample * scale;
  }
};

// Every slice_count-th arrival of `base`, counted by position in base's own sequence, so that
// slices of slices (an agent's share split among its workers) still partition the timeline.
class SlicedArrivals : public ArrivalProcess {
 public:
  SlicedArrivals(ArrivalProcessPtr base, uint32_t slice_index, uint32_t slice_count)
      : base_(std::move(base)), slice_index_(slice_index), slice_count_(slice_count) {}
  Arrival Next() override {
    while (true) {
      const Arrival arrival = base_->Next();
      const uint64_t position = position_++;
      if (position % slice_count_ == slice_index_) {
        return arrival;
      }
    }
  }

 private:
  ArrivalProcessPtr base_;
  const uint32_t slice_index_;
  const uint32_t slice_count_;
  uint64_t position_ = 0;
};

}  // namespace

std::string_view ArrivalKindName(ArrivalKind kind) {
  switch (kind) {
    case ArrivalKind::kConstant:
      return "constant";
    case ArrivalKind::kPoisson:
      return "poisson";
    case ArrivalKind::kGamma:
      return "gamma";
  }
  return "constant";
}

absl::StatusOr<ArrivalKind> ParseArrivalKind(std::string_view text) {
  for (ArrivalKind kind : {ArrivalKind::kConstant, ArrivalKind::kPoisson, ArrivalKind::kGamma}) {
    if (text == ArrivalKindName(kind)) {
      return kind;
    }
  }
  return absl::InvalidArgumentError("'" + std::string(text) +
                                    "' is not an arrival process; use constant, poisson or gamma");
}

ArrivalProcessPtr MakeArrivalProcess(ArrivalKind kind, double rate, double burstiness,
                                     uint64_t seed) {
  // ValidatePlan refuses a non-positive shape; treating it as Poisson here only keeps the gamma
  // sampler from rejecting forever if a caller skipped validation.
  if (!(burstiness > 0) || !std::isfinite(burstiness)) {
    burstiness = 1.0;
  }
  switch (kind) {
    case ArrivalKind::kConstant:
      return std::make_unique<ConstantArrivals>(rate);
    case ArrivalKind::kPoisson:
      return std::make_unique<RenewalArrivals<ExponentialGap>>(ExponentialGap{rate}, seed);
    case ArrivalKind::kGamma:
      return std::make_unique<RenewalArrivals<GammaGap>>(
          GammaGap{burstiness, 1.0 / (rate * burstiness)}, seed);
  }
  return std::make_unique<ConstantArrivals>(rate);
}

ArrivalProcessPtr MakeSlicedArrivals(ArrivalProcessPtr base, uint32_t slice_index,
                                     uint32_t slice_count) {
  if (slice_count <= 1) {
    return base;
  }
  // An index outside [0, slice_count) would never match and Next() would spin forever.
  return std::make_unique<SlicedArrivals>(std::move(base), slice_index % slice_count, slice_count);
}

Rng::Rng(uint64_t seed) {
  uint64_t state = seed;
  for (uint64_t& word : s_) {
    word = SplitMix64(state);
  }
}

uint64_t Rng::NextU64() {
  const uint64_t result = RotateLeft(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = RotateLeft(s_[3], 45);
  return result;
}

double Rng::NextOpenUnit() {
  // 53 random bits, shifted by half a step: never 0, never 1.
  return (static_cast<double>(NextU64() >> 11) + 0.5) * 0x1.0p-53;
}

double Rng::NextStandardNormal() {
  // Box-Muller, one of the pair: simple and the same on every machine.
  const double radius = std::sqrt(-2.0 * std::log(NextOpenUnit()));
  return radius * std::cos(2.0 * std::numbers::pi * NextOpenUnit());
}

}  // namespace barrage::common
