// Ctrl-C: SIGINT stops sending, in-flight requests drain within the grace period, and the
// summary, the result JSON (marked interrupted) and the records file are still written.

#include <signal.h>

#include <thread>

#include "integration_util.h"

namespace barrage::integration {
namespace {

// The default grace period for in-flight requests after Ctrl-C (LoadSpec::grace), plus slack.
constexpr auto kGrace = std::chrono::seconds(5);
constexpr auto kExitSlack = std::chrono::seconds(5);

TEST(InterruptTest, SigintStopsTheRunAndStillWritesTheResults) {
  NginxServer nginx;
  absl::Status started = nginx.Start();
  ASSERT_TRUE(started.ok()) << started;
  TempDir dir;
  const std::string result_path = dir.File("result.json");
  const std::string records_path = dir.File("records.jsonl");

  ChildProcess barrage;
  ASSERT_TRUE(
      barrage
          .Start({BARRAGE_BIN, "run", "--url", nginx.url(), "--rate", "1000", "--duration", "60s",
                  "--save-result", result_path, "--save-records", records_path, "--quiet"})
          .ok());
  // How long the run goes before Ctrl-C: this is the test's scenario, not a wait for a condition.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ASSERT_FALSE(barrage.Exited()) << Describe(barrage.Wait(std::chrono::milliseconds(0)));
  ASSERT_TRUE(barrage.Signal(SIGINT));
  ProcessResult run = barrage.Wait(kGrace + kExitSlack);
  ASSERT_FALSE(run.timed_out) << "barrage did not exit within grace + 5 s of SIGINT\n"
                              << Describe(run);
  EXPECT_FALSE(LooksLikeCrash(run)) << Describe(run);
  ASSERT_EQ(run.exit_code, 0) << Describe(run);

  std::optional<Json> result = ReadJsonFile(result_path);
  ASSERT_TRUE(result.has_value()) << "no result JSON at " << result_path << "\n" << Describe(run);
  ASSERT_TRUE(result->contains("interrupted")) << result->dump(2);
  EXPECT_EQ((*result)["interrupted"], true);
  const double completed = NumberAt(*result, "completed");
  EXPECT_GE(completed, 1000);
  EXPECT_LE(completed, 4000);
  EXPECT_EQ(static_cast<double>(CountLines(records_path)), completed + NumberAt(*result, "failed"));
}

}  // namespace
}  // namespace barrage::integration
