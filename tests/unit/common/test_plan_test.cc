#include "barrage/common/test_plan.h"

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace barrage::common {
namespace {

TestPlan GoodPlan() {
  TestPlan plan;
  plan.request.url = "http://127.0.0.1:8080/";
  plan.load.rate = 100;
  plan.load.duration = 10 * kNanosPerSecond;
  return plan;
}

TEST(ValidatePlanTest, AcceptsGoodPlans) {
  EXPECT_TRUE(ValidatePlan(GoodPlan()).ok());

  TestPlan closed = GoodPlan();
  closed.load.rate.reset();
  closed.load.concurrency = 8;
  EXPECT_TRUE(ValidatePlan(closed).ok());

  TestPlan by_count = GoodPlan();
  by_count.load.duration = 0;
  by_count.load.requests = 1'000;
  EXPECT_TRUE(ValidatePlan(by_count).ok());

  TestPlan gamma = GoodPlan();
  gamma.load.arrival = ArrivalKind::kGamma;
  gamma.load.burstiness = 0.3;
  EXPECT_TRUE(ValidatePlan(gamma).ok());

  // Burstiness is only read by gamma arrivals.
  TestPlan poisson = GoodPlan();
  poisson.load.arrival = ArrivalKind::kPoisson;
  poisson.load.burstiness = 0;
  EXPECT_TRUE(ValidatePlan(poisson).ok());
}

TEST(ValidatePlanTest, NamesTheFlagAtFault) {
  const struct {
    const char* flag;
    std::function<void(TestPlan&)> spoil;
  } cases[] = {
      {"--url:", [](TestPlan& p) { p.request.url.clear(); }},
      {"--rate:", [](TestPlan& p) { p.load.rate = 0; }},
      {"--rate:", [](TestPlan& p) { p.load.rate = -5; }},
      {"--rate:", [](TestPlan& p) { p.load.rate = std::numeric_limits<double>::infinity(); }},
      {"--rate:", [](TestPlan& p) { p.load.rate = std::nan(""); }},
      {"--concurrency:",
       [](TestPlan& p) {
         p.load.rate.reset();
         p.load.concurrency = 0;
       }},
      {"--duration:",
       [](TestPlan& p) {
         p.load.duration = 0;
         p.load.requests = 0;
       }},
      {"--duration:",
       [](TestPlan& p) {
         p.load.duration = -kNanosPerSecond;
         p.load.requests = 0;
       }},
      {"--burstiness:",
       [](TestPlan& p) {
         p.load.arrival = ArrivalKind::kGamma;
         p.load.burstiness = 0;
       }},
      {"--warmup:", [](TestPlan& p) { p.load.warmup = -1; }},
      {"--grace:", [](TestPlan& p) { p.load.grace = -1; }},
      {"--burstiness:",
       [](TestPlan& p) {
         p.load.arrival = ArrivalKind::kGamma;
         p.load.burstiness = -1;
       }},
      {"--burstiness:",
       [](TestPlan& p) {
         p.load.arrival = ArrivalKind::kGamma;
         p.load.burstiness = std::nan("");
       }},
      {"--timeout:", [](TestPlan& p) { p.load.timeout = 0; }},
      {"--timeout:", [](TestPlan& p) { p.load.timeout = -1; }},
      {"--threads:", [](TestPlan& p) { p.load.threads = 0; }},
  };
  for (const auto& c : cases) {
    TestPlan plan = GoodPlan();
    c.spoil(plan);
    const absl::Status status = ValidatePlan(plan);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.flag << " " << status;
    EXPECT_EQ(std::string(status.message()).rfind(c.flag, 0), 0u)
        << "expected the message to start with " << c.flag << ": " << status.message();
  }
}

TEST(IntegerShareTest, SharesDifferByAtMostOneAndAddUp) {
  const std::vector<uint64_t> totals = {0,  1,   2,    3,     5,       7,         10,
                                        63, 100, 1001, 65537, 999'999, UINT64_MAX};
  for (uint64_t total : totals) {
    for (uint32_t parts = 1; parts <= 70; ++parts) {
      uint64_t sum = 0;
      uint64_t smallest = UINT64_MAX;
      uint64_t largest = 0;
      for (uint32_t index = 0; index < parts; ++index) {
        const uint64_t share = IntegerShare(total, parts, index);
        sum += share;
        smallest = std::min(smallest, share);
        largest = std::max(largest, share);
      }
      ASSERT_EQ(sum, total) << total << " in " << parts;
      ASSERT_LE(largest - smallest, 1u) << total << " in " << parts;
    }
  }
  EXPECT_EQ(IntegerShare(10, 3, 0), 4u);
  EXPECT_EQ(IntegerShare(10, 3, 1), 3u);
  EXPECT_EQ(IntegerShare(10, 3, 2), 3u);
  EXPECT_EQ(IntegerShare(2, 4, 3), 0u);
  EXPECT_EQ(IntegerShare(100, 0, 0), 0u);
}

}  // namespace
}  // namespace barrage::common
