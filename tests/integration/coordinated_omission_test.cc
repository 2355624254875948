// Coordinated omission: against a target that stalls for 1 s every 3 s, open-loop latency
// measured from the scheduled instant shows the stalls in its p99, while a closed loop with one
// connection (which simply stops sending during a stall) does not. With a concurrency cap the
// wait shows up as client queue time.

#include "integration_util.h"

namespace barrage::integration {
namespace {

constexpr int kStallEveryMs = 3000;
constexpr int kStallForMs = 1000;
constexpr int kTargetMaxSeconds = 60;  // the stall target exits by itself after this
constexpr auto kRunTimeout = std::chrono::seconds(45);

// Runs barrage with `args` plus --url and --save-result against a fresh stall target.
// @return the result JSON, or nullopt after recording a failure.
std::optional<Json> RunAgainstStallTarget(std::vector<std::string> args) {
  StallTarget target;
  if (!target.Start(kStallEveryMs, kStallForMs, kTargetMaxSeconds)) {
    return std::nullopt;
  }
  TempDir dir;
  const std::string result_path = dir.File("result.json");
  args.insert(args.end(), {"--url", target.url(), "--save-result", result_path, "--quiet"});
  ProcessResult run = RunBarrage(args, kRunTimeout);
  if (run.timed_out || run.exit_code != 0) {
    ADD_FAILURE() << Describe(run);
    return std::nullopt;
  }
  std::optional<Json> result = ReadJsonFile(result_path);
  if (!result.has_value()) {
    ADD_FAILURE() << "no result JSON at " << result_path << "\n" << Describe(run);
  }
  return result;
}

TEST(CoordinatedOmissionTest, OpenLoopLatencyFromScheduleShowsTheStalls) {
  std::optional<Json> result = RunAgainstStallTarget({"--rate", "200", "--duration", "9s"});
  ASSERT_TRUE(result.has_value());
  // About a third of the arrivals land in a stall and wait up to 1 s for their response.
  EXPECT_GT(NumberAt(*result, "p99_e2el_including_client_queue_ms"), 500);
  EXPECT_EQ(NumberAt(*result, "failed"), 0);
}

TEST(CoordinatedOmissionTest, ClosedLoopLatencyHidesTheStalls) {
  std::optional<Json> result = RunAgainstStallTarget({"--concurrency", "1", "--duration", "9s"});
  ASSERT_TRUE(result.has_value());
  // One connection sends nothing while it waits, so only ~3 of thousands of requests are slow.
  EXPECT_LT(NumberAt(*result, "p99_e2el_ms"), 100);
  EXPECT_GT(NumberAt(*result, "completed"), 1000);
  EXPECT_EQ(NumberAt(*result, "failed"), 0);
}

TEST(CoordinatedOmissionTest, ConcurrencyCapShowsTheWaitAsClientQueueTime) {
  std::optional<Json> result =
      RunAgainstStallTarget({"--rate", "200", "--concurrency", "4", "--duration", "9s"});
  ASSERT_TRUE(result.has_value());
  // Four requests hang in each stall; the arrivals behind them queue in the client for up to 1 s.
  EXPECT_GT(NumberAt(*result, "p99_e2el_including_client_queue_ms"), 500);
  EXPECT_GT(NumberAt(*result, "p99_client_queue_time_ms"), 200);
  EXPECT_EQ(NumberAt(*result, "failed"), 0);
}

}  // namespace
}  // namespace barrage::integration
