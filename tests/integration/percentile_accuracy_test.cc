// Percentile accuracy: every percentile barrage reports for a run is within the histogram's
// documented error (1/256 relative, LatencyHistogram::kMaxRelativeError) of the exact
// nearest-rank percentile computed from the same run's records; means and standard deviations
// are exact.

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "percentile_check.h"

namespace barrage::integration {
namespace {

TEST(PercentileAccuracyTest, ReportedPercentilesMatchTheRecordsWithinHistogramError) {
  NginxServer nginx;
  absl::Status started = nginx.Start();
  ASSERT_TRUE(started.ok()) << started;
  TempDir dir;
  const std::string result_path = dir.File("result.json");
  const std::string records_path = dir.File("records.jsonl");

  ProcessResult run = RunBarrage(
      {"--url", nginx.url(), "--rate", "3000", "--duration", "5s", "--save-records", records_path,
       "--save-result", result_path, "--percentiles", "50,90,95,99,99.9", "--quiet"},
      std::chrono::seconds(60));
  ASSERT_FALSE(run.timed_out) << Describe(run);
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  std::optional<Json> result = ReadJsonFile(result_path);
  ASSERT_TRUE(result.has_value()) << "no result JSON at " << result_path << "\n" << Describe(run);

  std::vector<Record> records = ReadRecords(records_path);
  EXPECT_EQ(static_cast<double>(records.size()),
            NumberAt(*result, "completed") + NumberAt(*result, "failed"));
  std::vector<Record> successful;
  for (const Record& record : records) {
    if (record.ok()) {
      successful.push_back(record);
    }
  }
  ASSERT_GT(successful.size(), 10000u) << "expected about 15000 successful requests";
  EXPECT_EQ(static_cast<double>(successful.size()), NumberAt(*result, "completed"));

  ExpectPercentilesMatchRecords(*result, successful, {50, 90, 95, 99, 99.9});
}

}  // namespace
}  // namespace barrage::integration
