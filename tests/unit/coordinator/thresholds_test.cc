#include "barrage/coordinator/thresholds.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace barrage::coordinator {
namespace {

using Op = Threshold::Op;

const std::vector<double> kPercentiles = {50, 90, 95, 99};

Threshold MustParse(std::string_view text, const std::vector<double>& percentiles = kPercentiles) {
  absl::StatusOr<Threshold> threshold = ParseThreshold(text, percentiles);
  EXPECT_TRUE(threshold.ok()) << text << ": " << threshold.status();
  return threshold.ok() ? *threshold : Threshold{};
}

void ExpectInvalid(std::string_view text, const std::vector<double>& percentiles = kPercentiles) {
  absl::StatusOr<Threshold> threshold = ParseThreshold(text, percentiles);
  ASSERT_FALSE(threshold.ok()) << text;
  EXPECT_EQ(threshold.status().code(), absl::StatusCode::kInvalidArgument) << text;
  EXPECT_NE(threshold.status().message().find("--threshold"), std::string_view::npos)
      << threshold.status();
}

// Evaluates one threshold against {"p99_e2el_ms": actual}.
bool Passes(std::string_view text, double actual) {
  const Threshold threshold = MustParse(text);
  const nlohmann::json result = {{"p99_e2el_ms", actual}};
  const std::vector<ThresholdOutcome> outcomes = EvaluateThresholds({threshold}, result);
  EXPECT_EQ(outcomes.size(), 1u);
  if (outcomes.empty()) {
    return false;
  }
  EXPECT_DOUBLE_EQ(outcomes[0].actual, actual);
  return outcomes[0].passed;
}

TEST(ThresholdsTest, EveryOperatorParses) {
  struct Case {
    const char* text;
    Op op;
  };
  const Case cases[] = {{"p99_e2el_ms<250", Op::kLess},    {"p99_e2el_ms<=250", Op::kLessEqual},
                        {"p99_e2el_ms>250", Op::kGreater}, {"p99_e2el_ms>=250", Op::kGreaterEqual},
                        {"p99_e2el_ms==250", Op::kEqual},  {"p99_e2el_ms!=250", Op::kNotEqual}};
  for (const Case& c : cases) {
    const Threshold threshold = MustParse(c.text);
    EXPECT_EQ(threshold.op, c.op) << c.text;
    EXPECT_EQ(threshold.metric, "p99_e2el_ms") << c.text;
    EXPECT_DOUBLE_EQ(threshold.value, 250) << c.text;
    EXPECT_EQ(threshold.text, c.text);
  }
}

TEST(ThresholdsTest, SpacesAroundTheOperatorAreAllowed) {
  const Threshold threshold = MustParse("  error_rate  <=  0.01 ");
  EXPECT_EQ(threshold.metric, "error_rate");
  EXPECT_EQ(threshold.op, Op::kLessEqual);
  EXPECT_DOUBLE_EQ(threshold.value, 0.01);
}

TEST(ThresholdsTest, EveryOperatorEvaluates) {
  EXPECT_TRUE(Passes("p99_e2el_ms<250", 249));
  EXPECT_FALSE(Passes("p99_e2el_ms<250", 250));
  EXPECT_TRUE(Passes("p99_e2el_ms<=250", 250));
  EXPECT_FALSE(Passes("p99_e2el_ms<=250", 250.5));
  EXPECT_TRUE(Passes("p99_e2el_ms>250", 251));
  EXPECT_FALSE(Passes("p99_e2el_ms>250", 250));
  EXPECT_TRUE(Passes("p99_e2el_ms>=250", 250));
  EXPECT_FALSE(Passes("p99_e2el_ms>=250", 249.9));
  EXPECT_TRUE(Passes("p99_e2el_ms==250", 250));
  EXPECT_FALSE(Passes("p99_e2el_ms==250", 251));
  EXPECT_TRUE(Passes("p99_e2el_ms!=250", 251));
  EXPECT_FALSE(Passes("p99_e2el_ms!=250", 250));
}

TEST(ThresholdsTest, SeveralThresholdsAgainstOneResult) {
  const std::vector<Threshold> thresholds = {
      MustParse("completed>=100"), MustParse("error_rate<0.01"), MustParse("mean_ttfb_ms < 5")};
  const nlohmann::json result = {
      {"completed", 120}, {"error_rate", 0.02}, {"mean_ttfb_ms", 4.5}, {"failed", 3}};
  const std::vector<ThresholdOutcome> outcomes = EvaluateThresholds(thresholds, result);
  ASSERT_EQ(outcomes.size(), 3u);
  EXPECT_EQ(outcomes[0].threshold, &thresholds[0]);
  EXPECT_TRUE(outcomes[0].passed);
  EXPECT_DOUBLE_EQ(outcomes[0].actual, 120);
  EXPECT_FALSE(outcomes[1].passed);
  EXPECT_DOUBLE_EQ(outcomes[1].actual, 0.02);
  EXPECT_TRUE(outcomes[2].passed);
  EXPECT_EQ(outcomes[2].threshold, &thresholds[2]);
}

TEST(ThresholdsTest, MissingOrNonNumericKeyDoesNotPass) {
  const std::vector<Threshold> thresholds = {MustParse("p99_e2el_ms<250"),
                                             MustParse("achieved_rate!=0")};
  const nlohmann::json result = {{"achieved_rate", "inf"}};
  const std::vector<ThresholdOutcome> outcomes = EvaluateThresholds(thresholds, result);
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_FALSE(outcomes[0].passed);
  EXPECT_TRUE(std::isnan(outcomes[0].actual));
  EXPECT_FALSE(outcomes[1].passed);
}

TEST(ThresholdsTest, KnownKeysParse) {
  for (const char* text :
       {"completed>0", "failed==0", "request_throughput>=10", "achieved_rate>1",
        "schedule_lag_p99_ms<5", "dropped_arrivals==0", "agent_cpu<0.9", "total_bytes_in>0",
        "median_e2el_ms<1", "std_wait_ms<1", "p50_e2el_including_client_queue_ms<1",
        "p95_client_queue_time_ms<1", "mean_dns_ms<1", "p90_receive_ms<1", "error_rate<-1"}) {
    MustParse(text);
  }
}

TEST(ThresholdsTest, FractionalPercentileMustBeRequested) {
  ExpectInvalid("p99.9_e2el_ms<250");
  const Threshold threshold = MustParse("p99.9_e2el_ms<250", {50, 99.9});
  EXPECT_EQ(threshold.metric, "p99.9_e2el_ms");
  absl::StatusOr<Threshold> refused = ParseThreshold("p99.9_e2el_ms<250", kPercentiles);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--percentiles"), std::string_view::npos)
      << refused.status();
}

TEST(ThresholdsTest, BadInputsAreInvalidArgument) {
  ExpectInvalid("p99_e2el_ms");        // no operator
  ExpectInvalid("p99_e2el_ms=250");    // "=" is not an operator
  ExpectInvalid("<250");               // no metric
  ExpectInvalid("p99_e2el_ms<");       // no number
  ExpectInvalid("p99_e2el_ms<fast");   // not a number
  ExpectInvalid("p99_e2el_ms<250ms");  // trailing junk
  ExpectInvalid("p99_e2el_ms<inf");    // not finite
  ExpectInvalid("latency<1");          // unknown metric
  ExpectInvalid("p99_bogus_ms<1");     // unknown latency metric
  ExpectInvalid("mean_e2el<1");        // no _ms
  ExpectInvalid("p75_e2el_ms<1");      // percentile not requested
  ExpectInvalid("");
}

TEST(ThresholdsTest, EveryLatencyKeyOfTheResultParses) {
  const std::vector<double> percentiles = {50, 90, 99, 99.9};
  for (const char* metric : {"e2el", "ttfb", "client_queue_time", "e2el_including_client_queue",
                             "dns", "connect", "tls", "send", "wait", "receive"}) {
    for (const char* statistic : {"mean", "median", "std", "p50", "p90", "p99", "p99.9"}) {
      const std::string key = std::string(statistic) + "_" + metric + "_ms";
      EXPECT_EQ(MustParse(key + "<1", percentiles).metric, key);
    }
  }
  for (const char* key :
       {"completed", "failed", "duration", "request_throughput", "error_rate", "achieved_rate",
        "schedule_lag_p99_ms", "schedule_lag_p50_ms", "dropped_arrivals"}) {
    EXPECT_EQ(MustParse(std::string(key) + ">=0").metric, key);
  }
}

TEST(ThresholdsTest, UnknownKeyMessageGivesExamples) {
  absl::StatusOr<Threshold> threshold = ParseThreshold("p99_latency_ms<5", kPercentiles);
  ASSERT_FALSE(threshold.ok());
  const std::string message(threshold.status().message());
  EXPECT_EQ(message.rfind("--threshold: ", 0), 0u) << message;
  EXPECT_NE(message.find("p99_latency_ms"), std::string::npos) << message;
  EXPECT_NE(message.find("p99_e2el_ms"), std::string::npos) << message;
  EXPECT_NE(message.find("error_rate"), std::string::npos) << message;
}

TEST(ThresholdsTest, PercentileMessagesSayWhatToDo) {
  auto message = [](std::string_view text) {
    absl::StatusOr<Threshold> threshold = ParseThreshold(text, kPercentiles);
    EXPECT_FALSE(threshold.ok()) << text;
    return threshold.ok() ? std::string() : std::string(threshold.status().message());
  };
  EXPECT_NE(message("p75_ttfb_ms<1").find("add 75 to --percentiles"), std::string::npos)
      << message("p75_ttfb_ms<1");
  EXPECT_NE(message("p50.0_e2el_ms<1").find("p50_e2el_ms"), std::string::npos)
      << message("p50.0_e2el_ms<1");
  EXPECT_NE(message("p100_e2el_ms<1").find("outside (0, 100)"), std::string::npos)
      << message("p100_e2el_ms<1");
}

TEST(ThresholdsTest, KeepsTextAndValue) {
  const Threshold threshold = MustParse("mean_ttfb_ms >= -2.5e1");
  EXPECT_EQ(threshold.text, "mean_ttfb_ms >= -2.5e1");
  EXPECT_EQ(threshold.metric, "mean_ttfb_ms");
  EXPECT_EQ(threshold.op, Op::kGreaterEqual);
  EXPECT_DOUBLE_EQ(threshold.value, -25);
}

TEST(ThresholdsTest, NullValueDoesNotPassAndOutcomesPointAtTheirThreshold) {
  const std::vector<Threshold> thresholds = {MustParse("failed==0"), MustParse("completed>0")};
  const nlohmann::json result = {{"failed", nullptr}, {"completed", 3}};
  const std::vector<ThresholdOutcome> outcomes = EvaluateThresholds(thresholds, result);
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[0].threshold, &thresholds[0]);
  EXPECT_FALSE(outcomes[0].passed);
  EXPECT_EQ(outcomes[1].threshold, &thresholds[1]);
  EXPECT_TRUE(outcomes[1].passed);
  EXPECT_DOUBLE_EQ(outcomes[1].actual, 3);
}

}  // namespace
}  // namespace barrage::coordinator
