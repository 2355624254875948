#include "barrage/common/time.h"

#include <time.h>

#include <charconv>
#include <cmath>
#include <cstdio>

namespace barrage::common {
namespace {

Nanos ReadClock(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return Nanos{ts.tv_sec} * kNanosPerSecond + ts.tv_nsec;
}

}  // namespace

Nanos MonotonicNowNs() { return ReadClock(CLOCK_MONOTONIC); }

Nanos WallNowNs() { return ReadClock(CLOCK_REALTIME); }

absl::StatusOr<Nanos> ParseDuration(std::string_view text) {
  const auto expected = [&] {
    return absl::InvalidArgumentError(
        "'" + std::string(text) +
        "' is not a duration; use a positive number with a unit: 500ms, 10s, 5m, 1h");
  };
  if (text.empty()) return expected();
  double number = 0;
  const auto [rest, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || !std::isfinite(number) || number < 0) return expected();
  const std::string_view unit(rest, text.data() + text.size() - rest);
  double scale = 0;
  if (unit.empty() || unit == "s") {
    scale = kNanosPerSecond;
  } else if (unit == "ms") {
    scale = kNanosPerMilli;
  } else if (unit == "us") {
    scale = kNanosPerMicro;
  } else if (unit == "ns") {
    scale = 1;
  } else if (unit == "m") {
    scale = 60.0 * kNanosPerSecond;
  } else if (unit == "h") {
    scale = 3600.0 * kNanosPerSecond;
  } else {
    return expected();
  }
  const double nanos = std::round(number * scale);
  if (nanos > 1e18) return expected();
  return static_cast<Nanos>(nanos);
}

std::string FormatDuration(Nanos duration) {
  char buffer[32];
  if (duration % kNanosPerSecond == 0) {
    std::snprintf(buffer, sizeof buffer, "%llds",
                  static_cast<long long>(duration / kNanosPerSecond));
  } else if (duration >= kNanosPerSecond - kNanosPerMilli / 2) {  // no "1e+03ms"
    std::snprintf(buffer, sizeof buffer, "%.3fs", static_cast<double>(duration) / kNanosPerSecond);
  } else if (duration >= kNanosPerMilli - kNanosPerMicro / 2) {
    std::snprintf(buffer, sizeof buffer, "%.3gms", static_cast<double>(duration) / kNanosPerMilli);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.3gus", static_cast<double>(duration) / kNanosPerMicro);
  }
  return buffer;
}

}  // namespace barrage::common
