// Tests of the stall target (tests/support/stall_target.cc): immediate keep-alive answers outside
// the stall windows, held responses inside them.

#include <chrono>

#include "gtest/gtest.h"
#include "integration_util.h"

namespace barrage::integration {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kResponse = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n";

TEST(StallTargetTest, AnswersAtOnceOnAKeepAliveConnection) {
  StallTarget target;
  // The first stall would start after 59 s; the target exits after 30.
  ASSERT_TRUE(target.Start(/*stall_every_ms=*/60000, /*stall_for_ms=*/1000, /*max_seconds=*/30));
  LoopbackClient client;
  ASSERT_TRUE(client.Connect(target.port()));
  ASSERT_TRUE(client.Send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(client.ReadResponses(1), kResponse);
  // A body announced by Content-Length is consumed, not taken for the next request.
  ASSERT_TRUE(client.Send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"));
  EXPECT_EQ(client.ReadResponses(1), kResponse);
  ASSERT_TRUE(client.Send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  EXPECT_EQ(client.ReadResponses(1),
            "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\nok\n");
  EXPECT_TRUE(client.ReadsEof());
}

TEST(StallTargetTest, HoldsResponsesDuringAStall) {
  StallTarget target;
  // Stalls during [300 ms, 600 ms), [900 ms, 1200 ms) ... from the target's start.
  ASSERT_TRUE(target.Start(/*stall_every_ms=*/600, /*stall_for_ms=*/300, /*max_seconds=*/30));
  LoopbackClient client;
  ASSERT_TRUE(client.Connect(target.port()));
  // One request after another for 1.4 s: at least one of them runs into each of two stalls.
  int slow = 0;
  int fast = 0;
  Clock::duration longest{};
  const Clock::time_point end = Clock::now() + std::chrono::milliseconds(1400);
  while (Clock::now() < end) {
    const Clock::time_point sent = Clock::now();
    ASSERT_TRUE(client.Send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    ASSERT_EQ(client.ReadResponses(1), kResponse);
    const Clock::duration latency = Clock::now() - sent;
    longest = std::max(longest, latency);
    if (latency > std::chrono::milliseconds(100)) {
      ++slow;
    } else {
      ++fast;
    }
  }
  EXPECT_GE(slow, 2);
  EXPECT_GT(fast, 10 * slow);
  EXPECT_LT(longest, std::chrono::milliseconds(450));
}

TEST(StallTargetTest, RefusesBadFlags) {
  barrage::testing::ProcessResult result =
      barrage::testing::RunProcess({STALL_TARGET_BIN, "--stall-every", "100", "--stall-for", "100"},
                                   std::chrono::milliseconds(5000));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("--stall-for"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace barrage::integration
