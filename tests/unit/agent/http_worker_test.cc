#include "barrage/agent/http_worker.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <thread>

#include "gtest/gtest.h"
#include "nginx_fixture.h"
#include "process.h"

namespace barrage::agent {
namespace {

using common::ErrorClass;
using common::kNanosPerMilli;
using common::kNanosPerSecond;
using common::Nanos;
using common::RequestRecord;

// A loopback port that completes TCP handshakes (in the kernel's backlog) but never answers:
// requests to it stay in flight until they time out or are cancelled.
class SilentListener {
 public:
  SilentListener() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    listen(fd_, 512);
    socklen_t length = sizeof address;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~SilentListener() { close(fd_); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

common::TestPlan ClosedLoopPlan(const std::string& url, uint32_t concurrency) {
  common::TestPlan plan;
  plan.request.url = url;
  plan.load.concurrency = concurrency;
  plan.load.timeout = 5 * kNanosPerSecond;
  return plan;
}

common::TestPlan OpenLoopPlan(const std::string& url, double rate) {
  common::TestPlan plan;
  plan.request.url = url;
  plan.load.rate = rate;
  plan.load.timeout = 5 * kNanosPerSecond;
  return plan;
}

WorkerShare ShareOf(const common::TestPlan& plan) {
  WorkerShare share;
  share.plan = &plan;
  share.concurrency = plan.load.concurrency;
  share.requests = plan.load.requests;
  share.start_at = common::MonotonicNowNs() + 10 * kNanosPerMilli;
  return share;
}

std::vector<RequestRecord> RunToEnd(const WorkerShare& share, WorkerTotals* totals = nullptr) {
  RecordRing ring(1 << 16);
  HttpWorker worker(share, &ring);
  worker.Run();
  std::vector<RequestRecord> records;
  ring.Drain(&records);
  if (totals != nullptr) {
    totals->completed = worker.totals().completed;
    totals->failed = worker.totals().failed;
    totals->dropped_arrivals = worker.totals().dropped_arrivals;
    totals->engine_limited_arrivals = worker.totals().engine_limited_arrivals;
    totals->records_not_streamed = worker.totals().records_not_streamed;
    totals->e2el.Merge(worker.totals().e2el);
    totals->schedule_lag.Merge(worker.totals().schedule_lag);
  }
  return records;
}

class HttpWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(nginx_.Start().ok()); }
  testing::NginxServer nginx_;
};

TEST_F(HttpWorkerTest, ClosedLoopSendsExactlyTheRequestCountAndRecordsEachOne) {
  common::TestPlan plan = ClosedLoopPlan(nginx_.url(), 8);
  plan.load.requests = 500;
  WorkerTotals totals;
  const std::vector<RequestRecord> records = RunToEnd(ShareOf(plan), &totals);
  ASSERT_EQ(records.size(), 500u);
  EXPECT_EQ(totals.completed, 500u);
  EXPECT_EQ(totals.failed, 0u);
  EXPECT_EQ(totals.e2el.count(), 500u);
  std::set<uint64_t> indices;
  for (const RequestRecord& record : records) {
    EXPECT_TRUE(record.ok()) << common::ErrorClassName(record.error);
    EXPECT_EQ(record.status, 200);
    EXPECT_GE(record.start, 0);
    EXPECT_EQ(record.scheduled, record.start);  // closed loop: no schedule to lag behind
    EXPECT_GT(record.ttfb, record.start);
    EXPECT_GE(record.end, record.ttfb);
    EXPECT_GT(record.bytes_in, 3u);    // headers and "ok\n"
    EXPECT_GT(record.bytes_out, 10u);  // the request line and headers
    EXPECT_GE(record.phases.wait, 0);
    indices.insert(record.arrival_index);
  }
  EXPECT_EQ(indices.size(), 500u);
}

// Connections stay registered in epoll between requests; a server that closes them every few
// requests must cost nothing but new connections: no error, no lost or stuck request.
TEST(HttpWorkerKeepAliveTest, ServerClosingConnectionsEveryFewRequestsLosesNothing) {
  testing::NginxServer nginx(testing::NginxServer::Options{.keepalive_requests = 3});
  ASSERT_TRUE(nginx.Start().ok());
  common::TestPlan plan = ClosedLoopPlan(nginx.url(), 8);
  plan.load.requests = 600;
  WorkerTotals totals;
  const std::vector<RequestRecord> records = RunToEnd(ShareOf(plan), &totals);
  ASSERT_EQ(records.size(), 600u);
  EXPECT_EQ(totals.completed, 600u);
  EXPECT_EQ(totals.failed, 0u);
  uint64_t new_connections = 0;
  for (const RequestRecord& record : records) {
    EXPECT_TRUE(record.ok()) << common::ErrorClassName(record.error);
    new_connections += record.phases.connect > 0 ? 1 : 0;
  }
  // 600 requests at 3 per connection: about 200 connections were made.
  EXPECT_GE(new_connections, 150u);
}

TEST_F(HttpWorkerTest, OpenLoopSlicesOfTwoWorkersAddUpToTheTimeline) {
  common::TestPlan plan = OpenLoopPlan(nginx_.url(), 2000);
  plan.load.requests = 300;
  std::vector<RequestRecord> all;
  for (uint32_t worker = 0; worker < 2; ++worker) {
    WorkerShare share = ShareOf(plan);
    share.worker_index = worker;
    share.worker_count = 2;
    for (const RequestRecord& record : RunToEnd(share)) {
      EXPECT_EQ(record.arrival_index % 2, worker);
      all.push_back(record);
    }
  }
  ASSERT_EQ(all.size(), 300u);
  std::sort(all.begin(), all.end(), [](const RequestRecord& a, const RequestRecord& b) {
    return a.arrival_index < b.arrival_index;
  });
  for (uint64_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].arrival_index, i);
    // Constant arrivals at 2000/s: one every 500 us.
    EXPECT_EQ(all[i].scheduled, static_cast<Nanos>(i) * 500'000);
    EXPECT_GE(all[i].start, all[i].scheduled);
    EXPECT_TRUE(all[i].ok());
  }
}

TEST_F(HttpWorkerTest, OpenLoopStopsAtTheEndOfTheDuration) {
  common::TestPlan plan = OpenLoopPlan(nginx_.url(), 1000);
  plan.load.duration = 300 * kNanosPerMilli;
  WorkerTotals totals;
  const std::vector<RequestRecord> records = RunToEnd(ShareOf(plan), &totals);
  EXPECT_EQ(records.size(), 300u);
  EXPECT_EQ(totals.dropped_arrivals, 0u);
  EXPECT_EQ(totals.schedule_lag.count(), 300u);
  for (const RequestRecord& record : records) EXPECT_LT(record.scheduled, plan.load.duration);
}

TEST_F(HttpWorkerTest, WarmupRequestsAreNotRecorded) {
  common::TestPlan plan = OpenLoopPlan(nginx_.url(), 1000);
  plan.load.warmup = 100 * kNanosPerMilli;
  plan.load.requests = 50;
  const std::vector<RequestRecord> records = RunToEnd(ShareOf(plan));
  ASSERT_EQ(records.size(), 50u);
  for (const RequestRecord& record : records) {
    EXPECT_GE(record.scheduled, 0);
    // The first measured arrival is the 101st of the timeline (100 in the warm-up).
    EXPECT_GE(record.arrival_index, 100u);
    EXPECT_LT(record.arrival_index, 150u);
  }
}

TEST(HttpWorkerFailureTest, UnreachableTargetGivesConnectErrors) {
  const int port = testing::FreeLoopbackPort();
  common::TestPlan plan = OpenLoopPlan("http://127.0.0.1:" + std::to_string(port) + "/", 500);
  plan.load.requests = 20;
  WorkerTotals totals;
  const std::vector<RequestRecord> records = RunToEnd(ShareOf(plan), &totals);
  ASSERT_EQ(records.size(), 20u);
  EXPECT_EQ(totals.failed, 20u);
  for (const RequestRecord& record : records) {
    EXPECT_EQ(record.error, ErrorClass::kConnect);
    EXPECT_EQ(record.status, 0);
    EXPECT_EQ(record.ttfb, 0);
  }
}

TEST(HttpWorkerFailureTest, SilentServerGivesTimeouts) {
  SilentListener silent;
  common::TestPlan plan = ClosedLoopPlan(silent.url(), 2);
  plan.load.requests = 2;
  plan.load.timeout = 200 * kNanosPerMilli;
  const std::vector<RequestRecord> records = RunToEnd(ShareOf(plan));
  ASSERT_EQ(records.size(), 2u);
  for (const RequestRecord& record : records) {
    EXPECT_EQ(record.error, ErrorClass::kTimeout);
    EXPECT_GE(record.e2el(), 200 * kNanosPerMilli);
  }
}

TEST(HttpWorkerFailureTest, StopCancelsInFlightRequestsAfterTheGracePeriod) {
  SilentListener silent;
  common::TestPlan plan = ClosedLoopPlan(silent.url(), 4);
  plan.load.duration = 30 * kNanosPerSecond;
  plan.load.timeout = 30 * kNanosPerSecond;
  RecordRing ring(1024);
  HttpWorker worker(ShareOf(plan), &ring);
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    worker.RequestStop(100 * kNanosPerMilli);
  });
  const Nanos begin = common::MonotonicNowNs();
  worker.Run();
  const Nanos took = common::MonotonicNowNs() - begin;
  stopper.join();
  EXPECT_LT(took, 3 * kNanosPerSecond);
  std::vector<RequestRecord> records;
  ring.Drain(&records);
  ASSERT_EQ(records.size(), 4u);
  for (const RequestRecord& record : records) EXPECT_EQ(record.error, ErrorClass::kCancelled);
}

TEST(HttpWorkerFailureTest, ConcurrencyCapQueuesArrivalsAndCountsDrops) {
  SilentListener silent;
  // One slot; every request takes the 300 ms timeout; 100 arrivals/s for 1 s.
  common::TestPlan plan = OpenLoopPlan(silent.url(), 100);
  plan.load.concurrency = 1;
  plan.load.duration = 1 * kNanosPerSecond;
  plan.load.timeout = 300 * kNanosPerMilli;
  WorkerTotals totals;
  const std::vector<RequestRecord> records = RunToEnd(ShareOf(plan), &totals);
  // Sent at about 0, 0.3, 0.6, 0.9 s: the rest waited for the slot and were dropped at the end.
  ASSERT_GE(records.size(), 3u);
  ASSERT_LE(records.size(), 5u);
  EXPECT_EQ(records.size() + totals.dropped_arrivals, 100u);
  // Only the first arrival went out on its timer; the others waited, and that wait is queue time.
  EXPECT_EQ(totals.schedule_lag.count(), 1u);
  EXPECT_EQ(totals.engine_limited_arrivals, 0u);  // the cap was the user's
  for (size_t i = 1; i < records.size(); ++i) {
    EXPECT_GT(records[i].client_queue_time(), 100 * kNanosPerMilli);
  }
}

}  // namespace
}  // namespace barrage::agent
