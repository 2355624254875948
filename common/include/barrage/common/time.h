#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace barrage::common {

// Durations and instants are integer nanoseconds. Instants come from the monotonic clock; the
// wall clock is read once per run, as its epoch.
using Nanos = int64_t;

inline constexpr Nanos kNanosPerMicro = 1'000;
inline constexpr Nanos kNanosPerMilli = 1'000'000;
inline constexpr Nanos kNanosPerSecond = 1'000'000'000;

// Reads CLOCK_MONOTONIC (vDSO, no system call).
Nanos MonotonicNowNs();

// Reads CLOCK_REALTIME, for the run's epoch and the result's date only.
Nanos WallNowNs();

// Parses "250ms", "10s", "5m", "1h", "1.5s", "100us", "500ns"; a bare number means seconds.
// @return the duration, or InvalidArgument saying what was expected.
absl::StatusOr<Nanos> ParseDuration(std::string_view text);

// "1.500s", "250ms", "12us": for messages and logs.
std::string FormatDuration(Nanos duration);

}  // namespace barrage::common
