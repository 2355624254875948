// Open loop against a local nginx: barrage keeps a constant rate of 5000 requests/s for 10 s,
// every request succeeds, and the client keeps the schedule (send lag p99 under 1 ms).

#include "integration_util.h"

namespace barrage::integration {
namespace {

TEST(OpenLoopTest, KeepsFiveThousandRequestsPerSecondForTenSeconds) {
  NginxServer nginx;
  absl::Status started = nginx.Start();
  ASSERT_TRUE(started.ok()) << started;
  TempDir dir;
  const std::string result_path = dir.File("result.json");

  ProcessResult run = RunBarrage({"--url", nginx.url(), "--rate", "5000", "--duration", "10s",
                                  "--threads", "2", "--save-result", result_path, "--quiet"},
                                 std::chrono::seconds(70));
  ASSERT_FALSE(run.timed_out) << Describe(run);
  ASSERT_EQ(run.exit_code, 0) << Describe(run);

  std::optional<Json> result = ReadJsonFile(result_path);
  ASSERT_TRUE(result.has_value()) << "no result JSON at " << result_path << "\n" << Describe(run);
  // 50,000 +- 0.5%.
  EXPECT_NEAR(NumberAt(*result, "completed"), 50000, 250);
  EXPECT_EQ(NumberAt(*result, "failed"), 0);
  EXPECT_LT(NumberAt(*result, "schedule_lag_p99_ms"), 1.0);
}

}  // namespace
}  // namespace barrage::integration
