#include "barrage/agent/local_agent_session.h"

#include <mutex>
#include <set>

#include "barrage/common/record_codec.h"
#include "barrage/v1/agent.pb.h"
#include "gtest/gtest.h"
#include "nginx_fixture.h"

namespace barrage::agent {
namespace {

using common::kNanosPerMilli;
using common::kNanosPerSecond;

// Collects what a session streams, decoding record batches as the coordinator would.
class CollectingSink : public common::AgentMessageSink {
 public:
  void OnMessage(const std::string& agent_name, const v1::AgentMessage& message) override {
    std::lock_guard<std::mutex> lock(mutex_);
    names.insert(agent_name);
    if (message.has_records()) {
      ++batches;
      ASSERT_TRUE(common::DecodeRecordBatch(message.records(), &records).ok());
    } else if (message.has_heartbeat()) {
      ++heartbeats;
    } else if (message.has_finished()) {
      ++finished_count;
      finished = message.finished();
    }
  }

  std::mutex mutex_;
  std::set<std::string> names;
  std::vector<common::RequestRecord> records;
  int batches = 0;
  int heartbeats = 0;
  int finished_count = 0;
  v1::Finished finished;
};

TEST(LocalAgentSessionTest, StreamsEveryRecordThenFinishedTotalsThatMatch) {
  testing::NginxServer nginx;
  ASSERT_TRUE(nginx.Start().ok());
  common::AgentShare share;
  share.plan.request.url = nginx.url();
  share.plan.load.rate = 2000;
  share.plan.load.duration = 1500 * kNanosPerMilli;
  share.plan.load.threads = 2;
  CollectingSink sink;
  common::AgentSessionPtr session = MakeLocalAgentSession("local");
  EXPECT_EQ(session->name(), "local");
  ASSERT_TRUE(session->Start(share, common::MonotonicNowNs() + 20 * kNanosPerMilli, &sink).ok());
  ASSERT_TRUE(session->Wait().ok());

  EXPECT_EQ(sink.names, std::set<std::string>{"local"});
  EXPECT_EQ(sink.finished_count, 1);
  EXPECT_GE(sink.batches, 5);     // about one every 100 ms
  EXPECT_GE(sink.heartbeats, 1);  // one a second
  ASSERT_EQ(sink.records.size(), 3000u);
  const v1::Totals& totals = sink.finished.totals();
  EXPECT_EQ(totals.completed() + totals.failed(), sink.records.size());
  EXPECT_EQ(totals.records_not_streamed(), 0u);
  EXPECT_EQ(totals.threads(), 2u);
  EXPECT_GT(totals.cpu_ns(), 0u);
  EXPECT_EQ(sink.finished.e2el().count(), totals.completed());
  std::set<uint64_t> indices;
  for (const common::RequestRecord& record : sink.records) indices.insert(record.arrival_index);
  EXPECT_EQ(indices.size(), 3000u);
  EXPECT_EQ(*indices.rbegin(), 2999u);
}

TEST(LocalAgentSessionTest, StopEndsALongRunEarly) {
  testing::NginxServer nginx;
  ASSERT_TRUE(nginx.Start().ok());
  common::AgentShare share;
  share.plan.request.url = nginx.url();
  share.plan.load.concurrency = 4;
  share.concurrency = 4;
  share.plan.load.duration = 60 * kNanosPerSecond;
  CollectingSink sink;
  common::AgentSessionPtr session = MakeLocalAgentSession("local");
  const common::Nanos begin = common::MonotonicNowNs();
  ASSERT_TRUE(session->Start(share, begin, &sink).ok());
  session->Stop(kNanosPerSecond);
  ASSERT_TRUE(session->Wait().ok());
  EXPECT_LT(common::MonotonicNowNs() - begin, 5 * kNanosPerSecond);
  EXPECT_EQ(sink.finished_count, 1);
}

TEST(LocalAgentSessionTest, RefusesAnInvalidShare) {
  common::AgentShare share;  // no URL
  share.plan.load.concurrency = 1;
  share.plan.load.duration = kNanosPerSecond;
  CollectingSink sink;
  common::AgentSessionPtr session = MakeLocalAgentSession("local");
  const absl::Status status = session->Start(share, common::MonotonicNowNs(), &sink);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(session->Wait().ok());
  EXPECT_EQ(sink.finished_count, 0);
}

}  // namespace
}  // namespace barrage::agent
