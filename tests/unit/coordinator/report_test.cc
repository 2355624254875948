#include "barrage/coordinator/report.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace barrage::coordinator {
namespace {

using common::ErrorClass;
using common::kNanosPerMilli;
using common::kNanosPerSecond;
using common::Nanos;
using common::RequestRecord;
using Json = nlohmann::json;

constexpr Nanos kMicro = common::kNanosPerMicro;
constexpr double kHistogramError = common::LatencyHistogram::kMaxRelativeError;

const char* const kAllMetrics[] = {"e2el",
                                   "ttfb",
                                   "client_queue_time",
                                   "e2el_including_client_queue",
                                   "dns",
                                   "connect",
                                   "tls",
                                   "send",
                                   "wait",
                                   "receive"};

// A successful request: queued 1 ms, first byte 0.5 ms after the send, `e2el` in total.
RequestRecord Success(Nanos scheduled, Nanos e2el) {
  RequestRecord record;
  record.scheduled = scheduled;
  record.start = scheduled + kNanosPerMilli;
  record.ttfb = record.start + 500 * kMicro;
  record.end = record.start + e2el;
  record.status = 200;
  record.bytes_in = 200;
  record.bytes_out = 80;
  record.phases = {.dns = 3 * kMicro,
                   .connect = 40 * kMicro,
                   .tls = 0,
                   .send = 10 * kMicro,
                   .wait = 400 * kMicro,
                   .receive = 50 * kMicro};
  return record;
}

RequestRecord Failure(Nanos scheduled, ErrorClass error, uint16_t status) {
  RequestRecord record;
  record.scheduled = scheduled;
  record.start = scheduled;
  record.end = scheduled + 2 * kNanosPerMilli;
  record.status = status;
  record.error = error;
  return record;
}

// 100 successes with E2EL 1..100 ms, scheduled every 10 ms from 0, plus one connect error and
// one HTTP 503. Success i ends at 11 i + 2 ms, so the last completion is at 1091 ms.
RunStats KnownStats() {
  RunStats stats;
  for (int i = 0; i < 100; ++i) {
    stats.Add(Success(i * 10 * kNanosPerMilli, (i + 1) * kNanosPerMilli));
  }
  stats.Add(Failure(5 * kNanosPerMilli, ErrorClass::kConnect, 0));
  stats.Add(Failure(15 * kNanosPerMilli, ErrorClass::kHttp5xx, 503));
  return stats;
}

RunOptions OpenLoopOptions() {
  RunOptions options;
  options.plan.request.url = "http://127.0.0.1:8080/path";
  options.plan.request.method = "POST";
  options.plan.request.body = "{\"secret-body\": true}";
  options.plan.request.headers = {"Authorization: Bearer s3cr3t-token",
                                  "x-api-key: s3cr3t-key",
                                  " Cookie : session=s3cr3t-cookie",
                                  "Proxy-Authorization: Basic s3cr3t-proxy",
                                  "API-KEY: s3cr3t-api",
                                  "Accept: text/plain"};
  options.plan.load.rate = 100.0;
  options.plan.load.arrival = common::ArrivalKind::kPoisson;
  options.plan.load.burstiness = 1.0;
  options.plan.load.concurrency = 16;
  options.plan.load.duration = kNanosPerSecond;
  options.plan.load.warmup = 2 * kNanosPerSecond;
  options.plan.load.timeout = 30 * kNanosPerSecond;
  options.plan.load.seed = 42;
  options.plan.load.threads = 2;
  options.percentiles = {50, 99.9};
  options.argv = {"--url", "http://127.0.0.1:8080/path", "--header", "Authorization: <redacted>"};
  return options;
}

RunReport MakeReport(const RunOptions& options, RunStats stats) {
  RunReport report;
  report.options = &options;
  report.stats = std::move(stats);
  report.version = "1.2.3";
  report.wall_start = 1'700'000'000LL * kNanosPerSecond;
  return report;
}

double Ms(const Json& result, const std::string& key) {
  EXPECT_TRUE(result.contains(key)) << key;
  return result.value(key, -1.0);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) {
    lines.push_back(line);
  }
  return lines;
}

// A row as vLLM prints "{:<40} {:<10}": both fields padded, neither cut.
std::string Row(const std::string& label, const std::string& value) {
  std::string row = label;
  row.append(label.size() < 40 ? 40 - label.size() : 0, ' ');
  row += " " + value;
  row.append(value.size() < 10 ? 10 - value.size() : 0, ' ');
  return row;
}

bool HasLine(const std::vector<std::string>& lines, const std::string& wanted) {
  return std::find(lines.begin(), lines.end(), wanted) != lines.end();
}

size_t LineIndex(const std::vector<std::string>& lines, const std::string& wanted) {
  return static_cast<size_t>(std::find(lines.begin(), lines.end(), wanted) - lines.begin());
}

TEST(PercentileWordTest, SpellsPercentilesAsPythonStrDoes) {
  EXPECT_EQ(PercentileWord(50), "50");
  EXPECT_EQ(PercentileWord(99), "99");
  EXPECT_EQ(PercentileWord(99.9), "99.9");
  EXPECT_EQ(PercentileWord(99.99), "99.99");
  EXPECT_EQ(PercentileWord(12.5), "12.5");
  EXPECT_EQ(PercentileWord(0.1), "0.1");
  EXPECT_EQ(PercentileWord(0.0001), "0.0001");
  EXPECT_EQ(PercentileWord(0.00001), "1e-05");
}

TEST(BuildResultJsonTest, EveryMetricHasItsKeysForCustomPercentiles) {
  const RunOptions options = OpenLoopOptions();
  const Json result = BuildResultJson(MakeReport(options, KnownStats()));
  for (const char* metric : kAllMetrics) {
    const std::string m(metric);
    for (const std::string& key : {"mean_" + m + "_ms", "median_" + m + "_ms", "std_" + m + "_ms",
                                   "p50_" + m + "_ms", "p99.9_" + m + "_ms"}) {
      ASSERT_TRUE(result.contains(key)) << key;
      EXPECT_TRUE(result[key].is_number()) << key;
    }
    EXPECT_FALSE(result.contains("p99_" + m + "_ms")) << "99 was not requested";
  }
}

TEST(BuildResultJsonTest, LatencyNumbersMatchTheRecords) {
  const RunOptions options = OpenLoopOptions();
  const Json result = BuildResultJson(MakeReport(options, KnownStats()));

  // E2EL is 1..100 ms: mean 50.5 and population std sqrt((100^2 - 1) / 12) are exact; the
  // nearest-rank p50 is the 50th sample and p99.9 the 100th, within the histogram's error.
  EXPECT_NEAR(Ms(result, "mean_e2el_ms"), 50.5, 1e-9);
  EXPECT_NEAR(Ms(result, "std_e2el_ms"), std::sqrt((100.0 * 100.0 - 1) / 12), 1e-6);
  EXPECT_NEAR(Ms(result, "median_e2el_ms"), 50, 50 * kHistogramError);
  EXPECT_NEAR(Ms(result, "p50_e2el_ms"), 50, 50 * kHistogramError);
  EXPECT_NEAR(Ms(result, "p99.9_e2el_ms"), 100, 100 * kHistogramError);

  EXPECT_NEAR(Ms(result, "mean_e2el_including_client_queue_ms"), 51.5, 1e-9);
  EXPECT_NEAR(Ms(result, "p99.9_e2el_including_client_queue_ms"), 101, 101 * kHistogramError);
  EXPECT_NEAR(Ms(result, "mean_client_queue_time_ms"), 1, 1e-9);
  EXPECT_NEAR(Ms(result, "std_client_queue_time_ms"), 0, 1e-9);
  EXPECT_NEAR(Ms(result, "p50_client_queue_time_ms"), 1, kHistogramError);
  EXPECT_NEAR(Ms(result, "mean_ttfb_ms"), 0.5, 1e-9);
  EXPECT_NEAR(Ms(result, "p99.9_ttfb_ms"), 0.5, 0.5 * kHistogramError);
  EXPECT_NEAR(Ms(result, "mean_dns_ms"), 0.003, 1e-12);
  EXPECT_NEAR(Ms(result, "mean_connect_ms"), 0.04, 1e-12);
  EXPECT_NEAR(Ms(result, "mean_send_ms"), 0.01, 1e-12);
  EXPECT_NEAR(Ms(result, "median_wait_ms"), 0.4, 0.4 * kHistogramError);
  EXPECT_NEAR(Ms(result, "p99.9_receive_ms"), 0.05, 0.05 * kHistogramError);
  EXPECT_EQ(Ms(result, "mean_tls_ms"), 0);
}

TEST(BuildResultJsonTest, CountsRatesAndErrorsMatchTheRecords) {
  const RunOptions options = OpenLoopOptions();
  const Json result = BuildResultJson(MakeReport(options, KnownStats()));

  EXPECT_EQ(result["completed"], 100);
  EXPECT_EQ(result["failed"], 2);
  EXPECT_EQ(result["total_requests"], 102);
  EXPECT_EQ(result["num_prompts"], 102);
  EXPECT_NEAR(result["duration"].get<double>(), 1.091, 1e-12);
  EXPECT_NEAR(result["request_throughput"].get<double>(), 100 / 1.091, 1e-9);
  // The planned duration (1 s) bounds the window the sends are spread over.
  EXPECT_NEAR(result["achieved_rate"].get<double>(), 102.0, 1e-9);
  EXPECT_NEAR(result["error_rate"].get<double>(), 2.0 / 102, 1e-12);
  EXPECT_EQ(result["target_rate"], 100.0);
  EXPECT_EQ(result["request_rate"], 100.0);
  EXPECT_EQ(result["max_concurrency"], 16);
  EXPECT_EQ(result["arrival"], "poisson");
  EXPECT_EQ(result["burstiness"], 1.0);
  EXPECT_EQ(result["backend"], "http");
  EXPECT_EQ(result["url"], "http://127.0.0.1:8080/path");
  EXPECT_EQ(result["total_bytes_in"], 100 * 200);
  EXPECT_EQ(result["total_bytes_out"], 100 * 80);

  const Json expected_errors = {{"connect", 1},  {"timeout", 0},  {"tls", 0},      {"http_4xx", 0},
                                {"http_5xx", 1}, {"protocol", 0}, {"cancelled", 0}};
  EXPECT_EQ(result["errors_by_class"], expected_errors);
  const Json expected_statuses = {{"0", 1}, {"200", 100}, {"503", 1}};
  EXPECT_EQ(result["status_counts"], expected_statuses);
}

TEST(BuildResultJsonTest, AchievedRateUsesTheWholeRunWithoutAPlannedDuration) {
  RunOptions options = OpenLoopOptions();
  options.plan.load.duration = 0;
  options.plan.load.requests = 102;
  const Json result = BuildResultJson(MakeReport(options, KnownStats()));
  EXPECT_NEAR(result["achieved_rate"].get<double>(), 102 / 1.091, 1e-9);
}

TEST(BuildResultJsonTest, ClosedLoopHasNullTargetRateAndNoCapHasNullConcurrency) {
  RunOptions closed = OpenLoopOptions();
  closed.plan.load.rate.reset();
  const Json closed_result = BuildResultJson(MakeReport(closed, KnownStats()));
  EXPECT_TRUE(closed_result["target_rate"].is_null());
  EXPECT_EQ(closed_result["request_rate"], "inf");
  EXPECT_EQ(closed_result["config"]["rate"], "inf");
  EXPECT_EQ(closed_result["max_concurrency"], 16);

  RunOptions uncapped = OpenLoopOptions();
  uncapped.plan.load.concurrency = 0;
  const Json uncapped_result = BuildResultJson(MakeReport(uncapped, KnownStats()));
  EXPECT_TRUE(uncapped_result["max_concurrency"].is_null());
  EXPECT_EQ(uncapped_result["config"]["concurrency"], 0);
}

TEST(BuildResultJsonTest, AnEmptyRunHasEveryKeyAtZero) {
  const RunOptions options = OpenLoopOptions();
  const Json result = BuildResultJson(MakeReport(options, RunStats{}));
  for (const char* metric : kAllMetrics) {
    const std::string m(metric);
    for (const std::string& key : {"mean_" + m + "_ms", "median_" + m + "_ms", "std_" + m + "_ms",
                                   "p50_" + m + "_ms", "p99.9_" + m + "_ms"}) {
      EXPECT_EQ(Ms(result, key), 0) << key;
    }
  }
  EXPECT_EQ(result["completed"], 0);
  EXPECT_EQ(result["failed"], 0);
  EXPECT_EQ(result["duration"], 0.0);
  EXPECT_EQ(result["request_throughput"], 0.0);
  EXPECT_EQ(result["achieved_rate"], 0.0);
  EXPECT_EQ(result["error_rate"], 0.0);
  EXPECT_EQ(result["per_second"]["completed"], Json::array());
  EXPECT_EQ(result["status_counts"], Json::object());
}

TEST(BuildResultJsonTest, SecretHeadersAndTheBodyNeverReachTheResult) {
  const RunOptions options = OpenLoopOptions();
  const Json result = BuildResultJson(MakeReport(options, KnownStats()));
  const Json expected_headers =
      Json::array({"Authorization: <redacted>", "x-api-key: <redacted>", " Cookie : <redacted>",
                   "Proxy-Authorization: <redacted>", "API-KEY: <redacted>", "Accept: text/plain"});
  EXPECT_EQ(result["config"]["headers"], expected_headers);
  EXPECT_EQ(result["config"]["body_bytes"], options.plan.request.body.size());
  const std::string dumped = result.dump();
  EXPECT_EQ(dumped.find("s3cr3t"), std::string::npos) << dumped;
  EXPECT_EQ(dumped.find("secret-body"), std::string::npos) << dumped;
}

TEST(BuildResultJsonTest, ConfigEchoesThePlan) {
  const RunOptions options = OpenLoopOptions();
  const Json config = BuildResultJson(MakeReport(options, KnownStats()))["config"];
  EXPECT_EQ(config["url"], "http://127.0.0.1:8080/path");
  EXPECT_EQ(config["method"], "POST");
  EXPECT_EQ(config["rate"], 100.0);
  EXPECT_EQ(config["arrival"], "poisson");
  EXPECT_EQ(config["burstiness"], 1.0);
  EXPECT_EQ(config["concurrency"], 16);
  EXPECT_EQ(config["duration_s"], 1.0);
  EXPECT_EQ(config["requests"], 0);
  EXPECT_EQ(config["warmup_s"], 2.0);
  EXPECT_EQ(config["timeout_s"], 30.0);
  EXPECT_EQ(config["seed"], 42);
  EXPECT_EQ(config["threads"], 2);
  EXPECT_EQ(config["argv"], Json(options.argv));
}

TEST(BuildResultJsonTest, CarriesFidelityAndRunFacts) {
  const RunOptions options = OpenLoopOptions();
  RunReport report = MakeReport(options, KnownStats());
  EXPECT_EQ(BuildResultJson(report)["interrupted"], false);
  EXPECT_EQ(BuildResultJson(report)["problems"], Json::array());
  report.fidelity = {.schedule_lag_p50_ms = 0.1,
                     .schedule_lag_p99_ms = 2.5,
                     .dropped_arrivals = 3,
                     .engine_limited_arrivals = 4,
                     .agent_cpu = 0.95,
                     .client_limited = true,
                     .reason = "schedule lag p99 2.50 ms > 1 ms"};
  report.interrupted = true;
  report.problems = {"agent local: 5 records merged, 6 counted"};
  const Json result = BuildResultJson(report);

  EXPECT_EQ(result["client_limited"], true);
  EXPECT_EQ(result["client_limited_reason"], "schedule lag p99 2.50 ms > 1 ms");
  EXPECT_EQ(result["schedule_lag_p50_ms"], 0.1);
  EXPECT_EQ(result["schedule_lag_p99_ms"], 2.5);
  EXPECT_EQ(result["dropped_arrivals"], 3);
  EXPECT_EQ(result["engine_limited_arrivals"], 4);
  EXPECT_EQ(result["agent_cpu"], 0.95);
  EXPECT_EQ(result["interrupted"], true);
  EXPECT_EQ(result["problems"], Json::array({"agent local: 5 records merged, 6 counted"}));
  EXPECT_EQ(result["version"], "1.2.3");
  EXPECT_EQ(result["percentiles"], Json::array({50, 99.9}));
}

TEST(BuildResultJsonTest, PerSecondSeriesFollowTheRecords) {
  const RunOptions options = OpenLoopOptions();
  RunStats stats;
  // Second 0: successes of 10 ms and 20 ms; second 1: a 500 ms timeout and a 200 ms 503.
  RequestRecord first = Success(0, 10 * kNanosPerMilli);
  RequestRecord second = Success(500 * kNanosPerMilli, 20 * kNanosPerMilli);
  RequestRecord timeout = Failure(kNanosPerSecond, ErrorClass::kTimeout, 0);
  timeout.end = timeout.start + 500 * kNanosPerMilli;
  RequestRecord server_error = Failure(kNanosPerSecond, ErrorClass::kHttp5xx, 503);
  server_error.end = server_error.start + 200 * kNanosPerMilli;
  for (const RequestRecord& record : {first, second, timeout, server_error}) {
    stats.Add(record);
  }
  const Json per_second = BuildResultJson(MakeReport(options, stats))["per_second"];
  EXPECT_EQ(per_second["completed"], Json::array({2, 0}));
  EXPECT_EQ(per_second["failed"], Json::array({0, 2}));
  ASSERT_EQ(per_second["in_flight"].size(), 2u);
  EXPECT_NEAR(per_second["in_flight"][0].get<double>(), 0.03, 1e-9);
  EXPECT_NEAR(per_second["in_flight"][1].get<double>(), 0.7, 1e-9);
}

TEST(BuildResultJsonTest, DateIsTheLocalMeasurementStartAsVllmWritesIt) {
  const RunOptions options = OpenLoopOptions();
  const RunReport report = MakeReport(options, KnownStats());
  const time_t seconds = static_cast<time_t>(report.wall_start / kNanosPerSecond);
  tm local{};
  localtime_r(&seconds, &local);
  char expected[32];
  std::strftime(expected, sizeof expected, "%Y%m%d-%H%M%S", &local);
  const std::string date = BuildResultJson(report)["date"];
  EXPECT_EQ(date, expected);
  EXPECT_EQ(date.size(), 15u);
  EXPECT_EQ(date[8], '-');
}

TEST(FormatSummaryTest, FollowsVllmLayout) {
  const RunOptions options = OpenLoopOptions();
  const std::vector<std::string> lines = Lines(FormatSummary(MakeReport(options, KnownStats())));
  ASSERT_GT(lines.size(), 10u);
  EXPECT_EQ(lines.front(), "============ Serving Benchmark Result ============");
  EXPECT_EQ(lines.back(), std::string(50, '='));
  EXPECT_EQ(lines[1], "Successful requests:                     100       ");  // vLLM's padding
  EXPECT_EQ(lines[1], Row("Successful requests:", "100"));
  EXPECT_EQ(lines[2], Row("Failed requests:", "2"));
  EXPECT_EQ(lines[3], Row("Maximum request concurrency:", "16"));
  EXPECT_EQ(lines[4], Row("Request rate configured (RPS):", "100.00"));
  EXPECT_EQ(lines[5], Row("Achieved request rate (RPS):", "102.00"));
  EXPECT_EQ(lines[6], Row("Benchmark duration (s):", "1.09"));
  EXPECT_EQ(lines[7], Row("Request throughput (req/s):", "91.66"));

  const std::string e2el_header = "----------------End-to-end Latency----------------";
  ASSERT_TRUE(HasLine(lines, e2el_header));
  const size_t e2el = LineIndex(lines, e2el_header);
  ASSERT_LT(e2el + 4, lines.size());
  EXPECT_EQ(lines[e2el + 1], Row("Mean E2EL (ms):", "50.50"));
  EXPECT_TRUE(lines[e2el + 2].starts_with(Row("Median E2EL (ms):", "").substr(0, 41)));
  EXPECT_TRUE(lines[e2el + 3].starts_with(Row("P50 E2EL (ms):", "").substr(0, 41)));
  // The value is a bucket midpoint, within the histogram's error of 100 ms.
  EXPECT_TRUE(lines[e2el + 4].starts_with(Row("P99.9 E2EL (ms):", "").substr(0, 41)));
  EXPECT_NEAR(std::stod(lines[e2el + 4].substr(41)), 100, 100 * kHistogramError + 0.005);
  EXPECT_EQ(lines[e2el + 4].size(), 51u);

  // Python's "{:-^50}": the extra fill character of an odd padding goes to the right.
  const std::string ttfb_header = "----------------Time to First Byte----------------";
  const std::string queue_header = "----------------Client Queue Time-----------------";
  const std::string corrected_header = "----------E2E Latency incl. Client Queue----------";
  for (const std::string& header : {e2el_header, ttfb_header, queue_header, corrected_header}) {
    EXPECT_EQ(header.size(), 50u) << header;
    ASSERT_TRUE(HasLine(lines, header)) << header;
  }
  EXPECT_LT(e2el, LineIndex(lines, ttfb_header));
  EXPECT_LT(LineIndex(lines, ttfb_header), LineIndex(lines, queue_header));
  EXPECT_LT(LineIndex(lines, queue_header), LineIndex(lines, corrected_header));
  EXPECT_EQ(lines[LineIndex(lines, ttfb_header) + 1], Row("Mean TTFB (ms):", "0.50"));
  EXPECT_EQ(lines[LineIndex(lines, queue_header) + 1], Row("Mean Client Queue (ms):", "1.00"));
  EXPECT_EQ(lines[LineIndex(lines, corrected_header) + 1], Row("Mean E2EL+Queue (ms):", "51.50"));

  EXPECT_TRUE(HasLine(lines, "-----------------Errors by Class------------------"));
  EXPECT_TRUE(HasLine(lines, Row("connect:", "1")));
  EXPECT_TRUE(HasLine(lines, Row("http_5xx:", "1")));
  EXPECT_TRUE(HasLine(lines, Row("Client fidelity:", "ok")));
  for (const std::string& line : lines) {
    EXPECT_EQ(line.find("Interrupted"), std::string::npos);
    EXPECT_EQ(line.find("problem"), std::string::npos);
  }
}

TEST(FormatSummaryTest, ClosedLoopShowsInfAndNoErrorSectionWithoutFailures) {
  RunOptions options = OpenLoopOptions();
  options.plan.load.rate.reset();
  options.plan.load.concurrency = 0;
  RunStats stats;
  stats.Add(Success(0, 10 * kNanosPerMilli));
  const std::vector<std::string> lines = Lines(FormatSummary(MakeReport(options, stats)));
  EXPECT_TRUE(HasLine(lines, Row("Request rate configured (RPS):", "inf")));
  for (const std::string& line : lines) {
    EXPECT_EQ(line.find("Maximum request concurrency"), std::string::npos);
    EXPECT_EQ(line.find("Errors"), std::string::npos);
  }
}

TEST(FormatSummaryTest, ShowsClientLimitsInterruptionAndProblems) {
  const RunOptions options = OpenLoopOptions();
  RunReport report = MakeReport(options, KnownStats());
  report.fidelity.client_limited = true;
  report.fidelity.reason = "agent CPU 97% > 90%";
  report.fidelity.schedule_lag_p99_ms = 3.25;
  report.interrupted = true;
  report.problems = {"agent local never finished"};
  const std::string summary = FormatSummary(report);
  const std::vector<std::string> lines = Lines(summary);
  EXPECT_TRUE(HasLine(lines, Row("Client fidelity:", "client_limited: agent CPU 97% > 90%")));
  EXPECT_TRUE(HasLine(lines, Row("Schedule lag P99 (ms):", "3.25")));
  EXPECT_NE(summary.find("Interrupted"), std::string::npos);
  EXPECT_TRUE(HasLine(lines, "problem: agent local never finished"));
  EXPECT_EQ(lines.back(), std::string(50, '='));
}

TEST(FormatSummaryTest, AnEmptyRunStillPrintsEverySection) {
  const RunOptions options = OpenLoopOptions();
  const std::vector<std::string> lines = Lines(FormatSummary(MakeReport(options, RunStats{})));
  EXPECT_EQ(lines[1], Row("Successful requests:", "0"));
  EXPECT_TRUE(HasLine(lines, Row("Mean E2EL (ms):", "0.00")));
  EXPECT_TRUE(HasLine(lines, Row("P99.9 E2EL+Queue (ms):", "0.00")));
  EXPECT_EQ(lines.back(), std::string(50, '='));
}

}  // namespace
}  // namespace barrage::coordinator
