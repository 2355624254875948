// An unreachable target: every request is a connect error, counted as such; barrage exits 2
// ("the run failed") without crashing and still writes its result.

#include "integration_util.h"

namespace barrage::integration {
namespace {

TEST(UnreachableTest, EveryRequestIsAConnectErrorAndTheRunFails) {
  // Nobody listens there: the port was free a moment ago and nothing of ours binds it.
  const int port = barrage::testing::FreeLoopbackPort();
  ASSERT_GT(port, 0);
  TempDir dir;
  const std::string result_path = dir.File("result.json");

  ProcessResult run =
      RunBarrage({"--url", "http://127.0.0.1:" + std::to_string(port) + "/", "--rate", "100",
                  "--duration", "2s", "--save-result", result_path, "--quiet"},
                 std::chrono::seconds(40));
  ASSERT_FALSE(run.timed_out) << Describe(run);
  EXPECT_FALSE(LooksLikeCrash(run)) << Describe(run);
  EXPECT_EQ(run.exit_code, 2) << Describe(run);

  std::optional<Json> result = ReadJsonFile(result_path);
  ASSERT_TRUE(result.has_value()) << "no result JSON at " << result_path << "\n" << Describe(run);
  ASSERT_TRUE(result->contains("errors_by_class")) << result->dump(2);
  const double total = NumberAt(*result, "completed") + NumberAt(*result, "failed");
  EXPECT_EQ(NumberAt(*result, "completed"), 0);
  EXPECT_EQ(NumberAt((*result)["errors_by_class"], "connect"), total);
  // 100 requests/s for 2 s.
  EXPECT_NEAR(total, 200, 10);
}

}  // namespace
}  // namespace barrage::integration
