#include "barrage/common/time.h"

#include <string>

#include "gtest/gtest.h"

namespace barrage::common {
namespace {

TEST(ParseDurationTest, AcceptsUnits) {
  const struct {
    const char* text;
    Nanos expected;
  } cases[] = {
      {"10s", 10 * kNanosPerSecond},
      {"500ms", 500 * kNanosPerMilli},
      {"5m", 300 * kNanosPerSecond},
      {"1h", 3'600 * kNanosPerSecond},
      {"1.5s", 1'500 * kNanosPerMilli},
      {"250us", 250 * kNanosPerMicro},
      {"500ns", 500},
      {"0", 0},
      {"0s", 0},
      {"10", 10 * kNanosPerSecond},  // a bare number is seconds
      {"0.25", 250 * kNanosPerMilli},
      {"2.5ms", 2'500 * kNanosPerMicro},
      {"100us", 100 * kNanosPerMicro},
  };
  for (const auto& c : cases) {
    const absl::StatusOr<Nanos> parsed = ParseDuration(c.text);
    ASSERT_TRUE(parsed.ok()) << c.text << ": " << parsed.status();
    EXPECT_EQ(*parsed, c.expected) << c.text;
  }
}

TEST(ParseDurationTest, RejectsWithAMessage) {
  for (const char* text :
       {"", "abc", "-1s", "10x", "s", "ms", "10 s", "1s2", "inf", "nan", "10S", "1e30s"}) {
    const absl::StatusOr<Nanos> parsed = ParseDuration(text);
    ASSERT_FALSE(parsed.ok()) << "'" << text << "' parsed as " << *parsed;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(parsed.status().message());
    EXPECT_NE(message.find("'" + std::string(text) + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("10s"), std::string::npos) << message;  // shows an example
  }
}

TEST(FormatDurationTest, PicksAReadableUnit) {
  EXPECT_EQ(FormatDuration(0), "0s");
  EXPECT_EQ(FormatDuration(10 * kNanosPerSecond), "10s");
  EXPECT_EQ(FormatDuration(1'500 * kNanosPerMilli), "1.500s");
  EXPECT_EQ(FormatDuration(250 * kNanosPerMilli), "250ms");
  // Just below a unit boundary: the larger unit, never an exponent like "1e+03ms".
  EXPECT_EQ(FormatDuration(999'999'999), "1.000s");
  EXPECT_EQ(FormatDuration(999'600), "1ms");
  EXPECT_EQ(FormatDuration(1'500 * kNanosPerMicro), "1.5ms");
  EXPECT_EQ(FormatDuration(12 * kNanosPerMicro), "12us");
  EXPECT_EQ(FormatDuration(500), "0.5us");
  EXPECT_EQ(FormatDuration(3'600 * kNanosPerSecond), "3600s");
}

TEST(FormatDurationTest, RoundTripsThroughParse) {
  for (Nanos duration : {Nanos{0}, 10 * kNanosPerSecond, 250 * kNanosPerMilli, 12 * kNanosPerMicro,
                         1'500 * kNanosPerMilli}) {
    const absl::StatusOr<Nanos> parsed = ParseDuration(FormatDuration(duration));
    ASSERT_TRUE(parsed.ok()) << FormatDuration(duration);
    EXPECT_EQ(*parsed, duration) << FormatDuration(duration);
  }
}

TEST(ClockTest, MonotonicNeverGoesBackAndWallIsAfter2020) {
  Nanos previous = MonotonicNowNs();
  for (int i = 0; i < 1'000; ++i) {
    const Nanos now = MonotonicNowNs();
    ASSERT_GE(now, previous);
    previous = now;
  }
  EXPECT_GT(WallNowNs(), Nanos{1'577'836'800} * kNanosPerSecond);
}

}  // namespace
}  // namespace barrage::common
