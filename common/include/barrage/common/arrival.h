#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "barrage/common/time.h"

namespace barrage::common {

enum class ArrivalKind { kConstant, kPoisson, kGamma };

// @return "constant", "poisson", "gamma".
std::string_view ArrivalKindName(ArrivalKind kind);
absl::StatusOr<ArrivalKind> ParseArrivalKind(std::string_view text);

// One arrival of a timeline: its index in the global timeline and its offset from the start.
struct Arrival {
  uint64_t index = 0;
  Nanos offset = 0;
};

// A deterministic sequence of arrival instants. The same parameters and seed give the same
// sequence on every machine (our own samplers, not std:: distributions, whose output differs
// between standard libraries), which is what lets every agent and worker derive the one global
// timeline and keep its own slice. Next() allocates nothing.
class ArrivalProcess {
 public:
  virtual ~ArrivalProcess() = default;
  // @return the next arrival; offsets never decrease.
  virtual Arrival Next() = 0;
};
using ArrivalProcessPtr = std::unique_ptr<ArrivalProcess>;

// The base timeline of a run.
// @param rate arrivals per second, > 0 and finite.
// @param burstiness gamma shape (1.0 is Poisson, < 1 burstier); used by kGamma only.
ArrivalProcessPtr MakeArrivalProcess(ArrivalKind kind, double rate, double burstiness,
                                     uint64_t seed);

// Keeps every slice_count-th arrival of `base`, starting with its slice_index-th (counted by
// position in base's sequence; arrivals keep their global index): one agent's share of the
// global timeline, or one worker's share of an agent's. The union of all slices is `base`.
ArrivalProcessPtr MakeSlicedArrivals(ArrivalProcessPtr base, uint32_t slice_index,
                                     uint32_t slice_count);

// A splitmix64-seeded xoshiro256** generator: small, fast and the same everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t NextU64();
  // Uniform in (0, 1): never 0, so log() is finite.
  double NextOpenUnit();
  double NextStandardNormal();

 private:
  uint64_t s_[4];
};

}  // namespace barrage::common
