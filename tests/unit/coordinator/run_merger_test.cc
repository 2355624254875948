#include "barrage/coordinator/run_merger.h"

#include "barrage/common/record_codec.h"
#include "gtest/gtest.h"

namespace barrage::coordinator {
namespace {

v1::AgentMessage BatchOf(const std::vector<common::RequestRecord>& records) {
  v1::AgentMessage message;
  common::EncodeRecordBatch(records, message.mutable_records());
  return message;
}

v1::AgentMessage FinishedWith(uint64_t completed, uint64_t failed, uint64_t not_streamed = 0) {
  v1::AgentMessage message;
  v1::Totals* totals = message.mutable_finished()->mutable_totals();
  totals->set_completed(completed);
  totals->set_failed(failed);
  totals->set_records_not_streamed(not_streamed);
  return message;
}

std::vector<common::RequestRecord> Records(int ok, int failed) {
  std::vector<common::RequestRecord> records;
  for (int i = 0; i < ok + failed; ++i) {
    common::RequestRecord record;
    record.arrival_index = static_cast<uint64_t>(i);
    record.scheduled = i * 1000;
    record.start = i * 1000 + 10;
    record.ttfb = i < ok ? i * 1000 + 500 : 0;
    record.end = i * 1000 + 900;
    record.status = i < ok ? 200 : 503;
    record.error = i < ok ? common::ErrorClass::kNone : common::ErrorClass::kHttp5xx;
    records.push_back(record);
  }
  return records;
}

TEST(RunMergerTest, MergesBatchesFromSeveralAgentsAndReconciles) {
  RunMerger merger(nullptr);
  merger.OnMessage("a", BatchOf(Records(3, 1)));
  merger.OnMessage("b", BatchOf(Records(2, 0)));
  merger.OnMessage("a", BatchOf(Records(1, 0)));
  merger.OnMessage("a", FinishedWith(4, 1));
  merger.OnMessage("b", FinishedWith(2, 0));
  const RunStats stats = merger.Snapshot();
  EXPECT_EQ(stats.completed, 6u);
  EXPECT_EQ(stats.failed, 1u);
  EXPECT_EQ(merger.Agents().at("a").records, 5u);
  EXPECT_TRUE(merger.Reconcile().empty());
}

TEST(RunMergerTest, ReportsACountMismatchInsteadOfHidingIt) {
  RunMerger merger(nullptr);
  merger.OnMessage("a", BatchOf(Records(3, 0)));
  merger.OnMessage("a", FinishedWith(5, 0));
  const std::vector<std::string> problems = merger.Reconcile();
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems.front().find("agent a counted 5 requests but 3 records arrived"),
            std::string::npos);
}

TEST(RunMergerTest, SaysWhenRecordsCouldNotBeStreamed) {
  RunMerger merger(nullptr);
  merger.OnMessage("a", BatchOf(Records(3, 0)));
  merger.OnMessage("a", FinishedWith(5, 0, 2));
  const std::vector<std::string> problems = merger.Reconcile();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems.front().find("could not stream 2 records"), std::string::npos);
}

TEST(RunMergerTest, AnAgentWithoutTotalsIsAProblem) {
  RunMerger merger(nullptr);
  merger.OnMessage("a", BatchOf(Records(1, 0)));
  ASSERT_EQ(merger.Reconcile().size(), 1u);
  EXPECT_NE(merger.Reconcile().front().find("did not report"), std::string::npos);
}

TEST(RunMergerTest, AMalformedBatchIsReportedAndNotMerged) {
  RunMerger merger(nullptr);
  v1::AgentMessage message = BatchOf(Records(2, 0));
  message.mutable_records()->add_status(200);  // one column longer than the others
  merger.OnMessage("a", message);
  merger.OnMessage("a", FinishedWith(0, 0));
  EXPECT_EQ(merger.Snapshot().total(), 0u);
  const std::vector<std::string> problems = merger.Reconcile();
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems.front().find("malformed"), std::string::npos);
}

}  // namespace
}  // namespace barrage::coordinator
