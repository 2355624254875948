// Thresholds: a crossed --threshold ends the run with exit code 99 after the summary and the
// result file are written; thresholds that hold leave the exit code at 0.

#include "integration_util.h"

namespace barrage::integration {
namespace {

ProcessResult RunWithThresholds(const NginxServer& nginx, const std::string& result_path,
                                const std::vector<std::string>& thresholds) {
  std::vector<std::string> args = {"--url", nginx.url(), "--rate",        "200",      "--duration",
                                   "1s",    "--quiet",   "--save-result", result_path};
  for (const std::string& threshold : thresholds) {
    args.insert(args.end(), {"--threshold", threshold});
  }
  return RunBarrage(args, std::chrono::seconds(30));
}

TEST(ThresholdTest, ACrossedThresholdExitsNinetyNineAndStillWritesTheResult) {
  NginxServer nginx;
  absl::Status started = nginx.Start();
  ASSERT_TRUE(started.ok()) << started;
  TempDir dir;
  const std::string result_path = dir.File("result.json");

  // No loopback request completes in a picosecond; every request succeeds against nginx.
  ProcessResult run =
      RunWithThresholds(nginx, result_path, {"p99_e2el_ms<0.000000001", "error_rate<0.5"});
  ASSERT_FALSE(run.timed_out) << Describe(run);
  EXPECT_EQ(run.exit_code, 99) << Describe(run);
  EXPECT_NE(run.err.find("threshold crossed: p99_e2el_ms<0.000000001"), std::string::npos)
      << Describe(run);
  EXPECT_EQ(run.err.find("error_rate<0.5"), std::string::npos) << "a holding threshold was "
                                                                  "reported as crossed\n"
                                                               << Describe(run);
  EXPECT_NE(run.out.find("Serving Benchmark Result"), std::string::npos) << Describe(run);
  std::optional<Json> result = ReadJsonFile(result_path);
  ASSERT_TRUE(result.has_value()) << Describe(run);
  EXPECT_NEAR(NumberAt(*result, "completed"), 200, 2);
}

TEST(ThresholdTest, ThresholdsThatHoldExitZero) {
  NginxServer nginx;
  absl::Status started = nginx.Start();
  ASSERT_TRUE(started.ok()) << started;
  TempDir dir;
  ProcessResult run = RunWithThresholds(nginx, dir.File("result.json"),
                                        {"error_rate==0", "completed>=190", "p99_e2el_ms<5000"});
  ASSERT_FALSE(run.timed_out) << Describe(run);
  EXPECT_EQ(run.exit_code, 0) << Describe(run);
}

}  // namespace
}  // namespace barrage::integration
