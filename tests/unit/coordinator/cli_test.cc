#include "barrage/coordinator/cli.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace barrage::coordinator {
namespace {

using common::ArrivalKind;
using common::kNanosPerMilli;
using common::kNanosPerSecond;

constexpr const char* kUrl = "http://127.0.0.1:8080/";

// A fresh directory under /tmp, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/barrage-cli-test-XXXXXX";
    const char* made = mkdtemp(pattern);
    EXPECT_NE(made, nullptr);
    path_ = made != nullptr ? made : "/tmp";
  }
  ~TempDir() {
    std::error_code error;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, error);
    std::filesystem::remove_all(path_, error);
  }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Parses and keeps what was printed.
struct Outcome {
  ParsedRun parsed;
  std::string out;
  std::string err;
};

Outcome Parse(const std::vector<std::string>& args, unsigned default_threads = 4) {
  std::ostringstream out;
  std::ostringstream err;
  Outcome outcome;
  outcome.parsed = ParseRunArgs(args, default_threads, out, err);
  outcome.out = out.str();
  outcome.err = err.str();
  return outcome;
}

// Parses `args` after "--url kUrl" and expects success.
RunOptions ParseOk(std::vector<std::string> args, unsigned default_threads = 4) {
  args.insert(args.begin(), {"--url", kUrl});
  const Outcome outcome = Parse(args, default_threads);
  EXPECT_TRUE(outcome.parsed.proceed) << outcome.err;
  EXPECT_EQ(outcome.parsed.exit_code, 0);
  EXPECT_EQ(outcome.err, "");
  return outcome.parsed.options;
}

// Expects a usage error: exit 1, one line on err, starting "barrage run: <flag>:".
void ExpectUsageError(const std::vector<std::string>& args, const std::string& flag) {
  SCOPED_TRACE(::testing::PrintToString(args));
  const Outcome outcome = Parse(args);
  EXPECT_FALSE(outcome.parsed.proceed);
  EXPECT_EQ(outcome.parsed.exit_code, 1);
  EXPECT_EQ(outcome.out, "");
  const std::string prefix = "barrage run: " + flag + ":";
  EXPECT_EQ(outcome.err.rfind(prefix, 0), 0u) << outcome.err;
  ASSERT_FALSE(outcome.err.empty());
  EXPECT_EQ(outcome.err.back(), '\n');
  EXPECT_EQ(outcome.err.find('\n'), outcome.err.size() - 1) << outcome.err;
}

// Same, with "--url kUrl" in front.
void ExpectUsageErrorWithUrl(std::vector<std::string> args, const std::string& flag) {
  args.insert(args.begin(), {"--url", kUrl});
  ExpectUsageError(args, flag);
}

TEST(CliTest, DefaultsAreClosedLoopConcurrencyTenForTenSeconds) {
  const RunOptions options = ParseOk({}, /*default_threads=*/6);
  const common::LoadSpec& load = options.plan.load;
  EXPECT_EQ(options.plan.request.url, kUrl);
  EXPECT_EQ(options.plan.request.method, "GET");
  EXPECT_TRUE(options.plan.request.headers.empty());
  EXPECT_EQ(options.plan.request.body, "");
  EXPECT_FALSE(load.open_loop());
  EXPECT_EQ(load.concurrency, 10u);
  EXPECT_EQ(load.duration, 10 * kNanosPerSecond);
  EXPECT_EQ(load.requests, 0u);
  EXPECT_EQ(load.threads, 6u);
  EXPECT_EQ(load.arrival, ArrivalKind::kConstant);
  EXPECT_EQ(load.warmup, 0);
  EXPECT_EQ(load.timeout, 30 * kNanosPerSecond);
  EXPECT_EQ(load.grace, 5 * kNanosPerSecond);
  EXPECT_EQ(load.seed, 0u);
  EXPECT_EQ(options.percentiles, (std::vector<double>{50, 90, 95, 99}));
  EXPECT_EQ(options.save_result, "");
  EXPECT_EQ(options.save_records, "");
  EXPECT_TRUE(options.thresholds.empty());
  EXPECT_FALSE(options.quiet);
}

TEST(CliTest, EveryFlagLandsInItsField) {
  TempDir dir;
  const RunOptions options = ParseOk({"--method",       "PUT",
                                      "--header",       "X-One: 1",
                                      "--header",       "X-Two: 2",
                                      "--body",         "hello",
                                      "--rate",         "250.5",
                                      "--arrival",      "poisson",
                                      "--concurrency",  "7",
                                      "--duration",     "30s",
                                      "--requests",     "1000",
                                      "--warmup",       "2s",
                                      "--timeout",      "500ms",
                                      "--grace",        "1m",
                                      "--seed",         "42",
                                      "--threads",      "3",
                                      "--percentiles",  "99,50,99.9,50",
                                      "--save-result",  dir.File("result.json"),
                                      "--save-records", dir.File("records.csv"),
                                      "--threshold",    "p99.9_e2el_ms<250",
                                      "--threshold",    "error_rate<0.01",
                                      "--quiet"});
  const common::LoadSpec& load = options.plan.load;
  EXPECT_EQ(options.plan.request.method, "PUT");
  EXPECT_EQ(options.plan.request.headers, (std::vector<std::string>{"X-One: 1", "X-Two: 2"}));
  EXPECT_EQ(options.plan.request.body, "hello");
  ASSERT_TRUE(load.rate.has_value());
  EXPECT_DOUBLE_EQ(*load.rate, 250.5);
  EXPECT_EQ(load.arrival, ArrivalKind::kPoisson);
  EXPECT_EQ(load.concurrency, 7u);
  EXPECT_EQ(load.duration, 30 * kNanosPerSecond);
  EXPECT_EQ(load.requests, 1000u);
  EXPECT_EQ(load.warmup, 2 * kNanosPerSecond);
  EXPECT_EQ(load.timeout, 500 * kNanosPerMilli);
  EXPECT_EQ(load.grace, 60 * kNanosPerSecond);
  EXPECT_EQ(load.seed, 42u);
  EXPECT_EQ(load.threads, 3u);
  EXPECT_EQ(options.percentiles, (std::vector<double>{50, 99, 99.9}));
  EXPECT_EQ(options.save_result, dir.File("result.json"));
  EXPECT_EQ(options.save_records, dir.File("records.csv"));
  ASSERT_EQ(options.thresholds.size(), 2u);
  EXPECT_EQ(options.thresholds[0].metric, "p99.9_e2el_ms");
  EXPECT_EQ(options.thresholds[0].op, Threshold::Op::kLess);
  EXPECT_DOUBLE_EQ(options.thresholds[0].value, 250);
  EXPECT_EQ(options.thresholds[1].metric, "error_rate");
  EXPECT_DOUBLE_EQ(options.thresholds[1].value, 0.01);
  EXPECT_TRUE(options.quiet);
}

TEST(CliTest, BodyFileIsReadAndABodyMeansPost) {
  TempDir dir;
  const std::string path = dir.File("body.json");
  const std::string body = std::string("{\"a\":1}\n\0binary", 15);
  {
    std::ofstream file(path, std::ios::binary);
    file << body;
  }
  const RunOptions options = ParseOk({"--body-file", path});
  EXPECT_EQ(options.plan.request.body, body);
  EXPECT_EQ(options.plan.request.method, "POST");
}

TEST(CliTest, RateInfIsClosedLoop) {
  const RunOptions options = ParseOk({"--rate", "inf", "--concurrency", "3"});
  EXPECT_FALSE(options.plan.load.open_loop());
  EXPECT_EQ(options.plan.load.concurrency, 3u);
}

TEST(CliTest, OpenLoopHasNoConcurrencyCapByDefault) {
  const RunOptions options = ParseOk({"--rate", "100"});
  ASSERT_TRUE(options.plan.load.rate.has_value());
  EXPECT_DOUBLE_EQ(*options.plan.load.rate, 100);
  EXPECT_EQ(options.plan.load.concurrency, 0u);
  EXPECT_EQ(options.plan.load.arrival, ArrivalKind::kConstant);
}

TEST(CliTest, BurstinessImpliesGamma) {
  const RunOptions options = ParseOk({"--rate", "10", "--burstiness", "0.5"});
  EXPECT_EQ(options.plan.load.arrival, ArrivalKind::kGamma);
  EXPECT_DOUBLE_EQ(options.plan.load.burstiness, 0.5);
  const RunOptions explicit_gamma =
      ParseOk({"--rate", "10", "--arrival", "gamma", "--burstiness", "2"});
  EXPECT_EQ(explicit_gamma.plan.load.arrival, ArrivalKind::kGamma);
  EXPECT_DOUBLE_EQ(explicit_gamma.plan.load.burstiness, 2);
}

TEST(CliTest, RequestsAloneSetsNoDuration) {
  const RunOptions options = ParseOk({"--requests", "500"});
  EXPECT_EQ(options.plan.load.requests, 500u);
  EXPECT_EQ(options.plan.load.duration, 0);
}

TEST(CliTest, EqualsFormWorks) {
  const Outcome outcome =
      Parse({std::string("--url=") + kUrl, "--rate=20", "--header=X-A: b=c", "--duration=5s"});
  ASSERT_TRUE(outcome.parsed.proceed) << outcome.err;
  const RunOptions& options = outcome.parsed.options;
  EXPECT_EQ(options.plan.request.url, kUrl);
  ASSERT_TRUE(options.plan.load.rate.has_value());
  EXPECT_DOUBLE_EQ(*options.plan.load.rate, 20);
  EXPECT_EQ(options.plan.request.headers, (std::vector<std::string>{"X-A: b=c"}));
  EXPECT_EQ(options.plan.load.duration, 5 * kNanosPerSecond);
}

TEST(CliTest, VllmAliases) {
  const RunOptions options = ParseOk({"--request-rate", "12", "--max-concurrency", "4",
                                      "--num-prompts", "200", "--metric-percentiles", "90,50"});
  ASSERT_TRUE(options.plan.load.rate.has_value());
  EXPECT_DOUBLE_EQ(*options.plan.load.rate, 12);
  EXPECT_EQ(options.plan.load.concurrency, 4u);
  EXPECT_EQ(options.plan.load.requests, 200u);
  EXPECT_EQ(options.plan.load.duration, 0);
  EXPECT_EQ(options.percentiles, (std::vector<double>{50, 90}));
}

// Errors name the flag as typed; a repeat through an alias also names the first spelling.
TEST(CliTest, AliasAndCanonicalFlagTogetherAreAFlagGivenTwice) {
  ExpectUsageErrorWithUrl({"--rate", "5", "--request-rate", "6"}, "--request-rate");
  const Outcome outcome = Parse({"--url", kUrl, "--rate", "5", "--request-rate", "6"});
  EXPECT_NE(outcome.err.find("--rate"), std::string::npos) << outcome.err;
}

TEST(CliTest, SaveResultSwitchWithResultDirAndFilename) {
  TempDir dir;
  const std::string results = dir.File("results");
  const RunOptions options =
      ParseOk({"--save-result", "--result-dir", results, "--result-filename", "run.json"});
  EXPECT_EQ(options.save_result, results + "/run.json");
  EXPECT_FALSE(std::filesystem::exists(results + "/run.json"));
}

TEST(CliTest, SaveResultSwitchAloneGivesADefaultJsonName) {
  TempDir dir;
  const RunOptions options = ParseOk({"--save-result", "--result-dir", dir.path()});
  EXPECT_EQ(options.save_result.rfind(dir.path() + "/", 0), 0u) << options.save_result;
  EXPECT_TRUE(options.save_result.ends_with(".json")) << options.save_result;
  EXPECT_GT(options.save_result.size(), dir.path().size() + 1 + 5);
}

TEST(CliTest, SaveResultSwitchAtTheEndInTheWorkingDirectory) {
  TempDir dir;
  const std::filesystem::path previous = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  const RunOptions options = ParseOk({"--save-result"});
  std::filesystem::current_path(previous);
  EXPECT_TRUE(options.save_result.ends_with(".json")) << options.save_result;
  EXPECT_NE(options.save_result.find("inf"), std::string::npos) << options.save_result;
}

TEST(CliTest, ParsingLeavesNoFileAtTheOutputPaths) {
  TempDir dir;
  const RunOptions options =
      ParseOk({"--save-result", dir.File("r.json"), "--save-records", dir.File("records.jsonl")});
  EXPECT_EQ(options.save_result, dir.File("r.json"));
  EXPECT_FALSE(std::filesystem::exists(dir.File("r.json")));
  EXPECT_FALSE(std::filesystem::exists(dir.File("records.jsonl")));
}

TEST(CliTest, HelpPrintsUsageAndStops) {
  for (const char* flag : {"--help", "-h"}) {
    const Outcome outcome = Parse({flag});
    EXPECT_FALSE(outcome.parsed.proceed);
    EXPECT_EQ(outcome.parsed.exit_code, 0);
    EXPECT_NE(outcome.out.find("Usage: barrage run"), std::string::npos) << outcome.out;
    EXPECT_NE(outcome.out.find("--rate"), std::string::npos);
    EXPECT_EQ(outcome.err, "");
  }
}

TEST(CliTest, HelpWinsOverOtherFlags) {
  const Outcome outcome = Parse({"--url", kUrl, "--help"});
  EXPECT_FALSE(outcome.parsed.proceed);
  EXPECT_EQ(outcome.parsed.exit_code, 0);
  EXPECT_NE(outcome.out.find("Usage:"), std::string::npos);
}

TEST(CliTest, SecretHeadersAreRedactedInArgv) {
  const std::vector<std::string> args = {"--url",
                                         kUrl,
                                         "--header",
                                         "Authorization: Bearer sekrit",
                                         "--header=X-Api-Key: key123",
                                         "--header",
                                         "X-Trace: visible"};
  const Outcome outcome = Parse(args);
  ASSERT_TRUE(outcome.parsed.proceed) << outcome.err;
  const std::vector<std::string>& argv = outcome.parsed.options.argv;
  ASSERT_EQ(argv.size(), args.size());
  EXPECT_EQ(argv[0], "--url");
  EXPECT_EQ(argv[1], kUrl);
  EXPECT_EQ(argv[3], "Authorization: <redacted>");
  EXPECT_EQ(argv[4], "--header=X-Api-Key: <redacted>");
  EXPECT_EQ(argv[6], "X-Trace: visible");
  for (const std::string& arg : argv) {
    EXPECT_EQ(arg.find("sekrit"), std::string::npos);
    EXPECT_EQ(arg.find("key123"), std::string::npos);
  }
  // The plan itself keeps the real values: they are sent.
  EXPECT_EQ(outcome.parsed.options.plan.request.headers[0], "Authorization: Bearer sekrit");
}

TEST(CliTest, UnknownFlag) { ExpectUsageErrorWithUrl({"--bogus", "1"}, "--bogus"); }

TEST(CliTest, MissingUrl) { ExpectUsageError({"--rate", "10"}, "--url"); }

TEST(CliTest, MalformedUrls) {
  for (const char* url : {"ftp://x", "http://", "http://h:0/", "not a url"}) {
    ExpectUsageError({"--url", url}, "--url");
  }
}

TEST(CliTest, BadRates) {
  for (const char* rate : {"0", "-5", "abc", "", "nan", "10x"}) {
    ExpectUsageErrorWithUrl({"--rate", rate}, "--rate");
  }
}

TEST(CliTest, BadDurations) {
  for (const char* duration : {"ten", "0", "0s", "5parsecs", "-1s"}) {
    ExpectUsageErrorWithUrl({"--duration", duration}, "--duration");
  }
  ExpectUsageErrorWithUrl({"--timeout", "0"}, "--timeout");
  ExpectUsageErrorWithUrl({"--warmup", "soon"}, "--warmup");
}

TEST(CliTest, MissingBodyFile) {
  TempDir dir;
  ExpectUsageErrorWithUrl({"--body-file", dir.File("absent.json")}, "--body-file");
}

TEST(CliTest, BodyAndBodyFileTogether) {
  TempDir dir;
  const std::string path = dir.File("body");
  std::ofstream(path) << "x";
  ExpectUsageErrorWithUrl({"--body", "y", "--body-file", path}, "--body-file");
}

TEST(CliTest, SaveResultInAMissingDirectory) {
  TempDir dir;
  ExpectUsageErrorWithUrl({"--save-result", dir.File("absent/result.json")}, "--save-result");
  EXPECT_FALSE(std::filesystem::exists(dir.File("absent")));
}

TEST(CliTest, SaveResultInAReadOnlyDirectory) {
  if (geteuid() == 0) {
    GTEST_SKIP() << "root may write into a read-only directory (access(W_OK) succeeds), so the "
                    "refusal cannot be observed; the missing-directory case covers the check";
  }
  TempDir dir;
  const std::string locked = dir.File("locked");
  ASSERT_EQ(mkdir(locked.c_str(), 0500), 0);
  ExpectUsageErrorWithUrl({"--save-result", locked + "/result.json"}, "--save-result");
  EXPECT_FALSE(std::filesystem::exists(locked + "/result.json"));
}

TEST(CliTest, SaveResultThatIsADirectory) {
  TempDir dir;
  ExpectUsageErrorWithUrl({"--save-result", dir.path()}, "--save-result");
}

TEST(CliTest, SaveRecordsBadExtensionOrPath) {
  TempDir dir;
  ExpectUsageErrorWithUrl({"--save-records", dir.File("records.txt")}, "--save-records");
  ExpectUsageErrorWithUrl({"--save-records", dir.File("records")}, "--save-records");
  ExpectUsageErrorWithUrl({"--save-records", dir.File("absent/records.jsonl")}, "--save-records");
  EXPECT_FALSE(std::filesystem::exists(dir.File("records.txt")));
}

TEST(CliTest, BadPercentiles) {
  for (const char* list : {"0", "100", "150", "abc", "50,abc", "50,,90", "-1"}) {
    ExpectUsageErrorWithUrl({"--percentiles", list}, "--percentiles");
  }
  ExpectUsageErrorWithUrl({"--metric-percentiles", "100"}, "--metric-percentiles");
}

TEST(CliTest, BadThresholds) {
  ExpectUsageErrorWithUrl({"--threshold", "p99_e2el_ms"}, "--threshold");
  ExpectUsageErrorWithUrl({"--threshold", "p99_bogus_ms<1"}, "--threshold");
  ExpectUsageErrorWithUrl({"--threshold", "latency<1"}, "--threshold");
  ExpectUsageErrorWithUrl({"--threshold", "p99_e2el_ms<fast"}, "--threshold");
  // 99.9 is not among the default percentiles.
  ExpectUsageErrorWithUrl({"--threshold", "p99.9_e2el_ms<250"}, "--threshold");
  const Outcome outcome = Parse({"--url", kUrl, "--threshold", "p99.9_e2el_ms<250"});
  EXPECT_NE(outcome.err.find("--percentiles"), std::string::npos) << outcome.err;
}

TEST(CliTest, ArrivalNeedsRate) {
  ExpectUsageErrorWithUrl({"--arrival", "poisson"}, "--arrival");
  ExpectUsageErrorWithUrl({"--burstiness", "0.5"}, "--burstiness");
  ExpectUsageErrorWithUrl({"--rate", "10", "--arrival", "zipf"}, "--arrival");
}

TEST(CliTest, BurstinessWithConstantArrival) {
  ExpectUsageErrorWithUrl({"--rate", "10", "--arrival", "constant", "--burstiness", "0.5"},
                          "--burstiness");
  ExpectUsageErrorWithUrl({"--rate", "10", "--burstiness", "0"}, "--burstiness");
}

TEST(CliTest, BadCounts) {
  ExpectUsageErrorWithUrl({"--concurrency", "0"}, "--concurrency");
  ExpectUsageErrorWithUrl({"--concurrency", "-3"}, "--concurrency");
  ExpectUsageErrorWithUrl({"--threads", "0"}, "--threads");
  ExpectUsageErrorWithUrl({"--threads", "two"}, "--threads");
  ExpectUsageErrorWithUrl({"--requests", "0"}, "--requests");
  ExpectUsageErrorWithUrl({"--seed", "1.5"}, "--seed");
}

TEST(CliTest, BadMethodAndHeader) {
  ExpectUsageErrorWithUrl({"--method", "get me"}, "--method");
  ExpectUsageErrorWithUrl({"--header", "NoColon"}, "--header");
  ExpectUsageErrorWithUrl({"--header", "Bad Name: v"}, "--header");
}

TEST(CliTest, FlagGivenTwice) {
  ExpectUsageErrorWithUrl({"--duration", "1s", "--duration", "2s"}, "--duration");
  ExpectUsageError({"--url", kUrl, "--url", kUrl}, "--url");
}

TEST(CliTest, RepeatableFlagsMayRepeat) {
  const RunOptions options = ParseOk({"--threshold", "error_rate<0.5", "--threshold",
                                      "error_rate<0.6", "--header", "A: 1", "--header", "A: 2"});
  EXPECT_EQ(options.thresholds.size(), 2u);
  EXPECT_EQ(options.plan.request.headers.size(), 2u);
}

TEST(CliTest, FlagMissingItsValueAtTheEnd) {
  ExpectUsageErrorWithUrl({"--rate"}, "--rate");
  ExpectUsageError({"--url"}, "--url");
  ExpectUsageErrorWithUrl({"--duration"}, "--duration");
}

TEST(CliTest, SwitchWithAValue) { ExpectUsageErrorWithUrl({"--quiet=yes"}, "--quiet"); }

TEST(CliTest, StrayArgument) { ExpectUsageErrorWithUrl({"extra"}, "extra"); }

TEST(CliTest, ResultDirWithoutSaveResult) {
  TempDir dir;
  ExpectUsageErrorWithUrl({"--result-dir", dir.path()}, "--result-dir");
  ExpectUsageErrorWithUrl({"--result-filename", "x.json"}, "--result-filename");
}

TEST(CliTest, ErrorsNameTheAliasAsTyped) {
  ExpectUsageErrorWithUrl({"--request-rate", "0"}, "--request-rate");
  ExpectUsageErrorWithUrl({"--max-concurrency", "0"}, "--max-concurrency");
  ExpectUsageErrorWithUrl({"--num-prompts", "0"}, "--num-prompts");
  ExpectUsageErrorWithUrl({"--request-rate=-1"}, "--request-rate");
}

TEST(CliTest, UnknownFlagMessageIsExact) {
  const Outcome outcome = Parse({"--url", kUrl, "--nope=3"});
  EXPECT_EQ(outcome.parsed.exit_code, 1);
  EXPECT_EQ(outcome.err.rfind("barrage run: --nope: unknown flag", 0), 0u) << outcome.err;
}

TEST(CliTest, DurationUnits) {
  const std::vector<std::pair<std::string, common::Nanos>> cases = {
      {"500ms", 500 * kNanosPerMilli},
      {"10s", 10 * kNanosPerSecond},
      {"5m", 300 * kNanosPerSecond},
      {"1h", 3600 * kNanosPerSecond},
      {"1.5s", 1500 * kNanosPerMilli}};
  for (const auto& [text, nanos] : cases) {
    EXPECT_EQ(ParseOk({"--duration", text}).plan.load.duration, nanos) << text;
  }
  EXPECT_EQ(ParseOk({"--warmup", "0"}).plan.load.warmup, 0);
  EXPECT_EQ(ParseOk({"--grace", "0s"}).plan.load.grace, 0);
}

TEST(CliTest, BurstinessWithPoissonOrWithoutARateIsRefused) {
  ExpectUsageErrorWithUrl({"--rate", "10", "--arrival", "poisson", "--burstiness", "2"},
                          "--burstiness");
  ExpectUsageErrorWithUrl({"--rate", "inf", "--arrival", "poisson"}, "--arrival");
  ExpectUsageErrorWithUrl({"--rate", "10", "--burstiness", "-1"}, "--burstiness");
}

TEST(CliTest, ThresholdMayComeBeforeThePercentilesItNeeds) {
  const RunOptions options =
      ParseOk({"--threshold", "p99.9_ttfb_ms<5", "--percentiles", "50,99.9"});
  ASSERT_EQ(options.thresholds.size(), 1u);
  EXPECT_EQ(options.thresholds[0].metric, "p99.9_ttfb_ms");
}

TEST(CliTest, SaveResultValueFormThenAnotherFlag) {
  TempDir dir;
  const RunOptions options = ParseOk({"--save-result", dir.File("x.json"), "--quiet"});
  EXPECT_EQ(options.save_result, dir.File("x.json"));
  EXPECT_TRUE(options.quiet);
}

TEST(CliTest, SaveResultSwitchThenAnotherFlag) {
  TempDir dir;
  const std::filesystem::path previous = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  const RunOptions options = ParseOk({"--save-result", "--quiet", "--rate", "20"});
  std::filesystem::current_path(previous);
  EXPECT_TRUE(options.quiet);
  EXPECT_TRUE(options.save_result.starts_with("barrage-20qps-")) << options.save_result;
  // barrage-20qps-YYYYMMDD-HHMMSS.json
  EXPECT_EQ(options.save_result.size(), std::string("barrage-20qps-").size() + 15 + 5)
      << options.save_result;
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(CliTest, DefaultResultNameNamesRateAndConcurrency) {
  TempDir dir;
  const RunOptions closed = ParseOk({"--save-result", "--result-dir", dir.path()});
  EXPECT_TRUE(closed.save_result.starts_with(dir.path() + "/barrage-infqps-concurrency10-"))
      << closed.save_result;
  const RunOptions capped = ParseOk({"--request-rate", "2.5", "--max-concurrency", "8",
                                     "--save-result", "--result-dir", dir.path()});
  EXPECT_TRUE(capped.save_result.starts_with(dir.path() + "/barrage-2.5qps-concurrency8-"))
      << capped.save_result;
}

TEST(CliTest, ResultFilenameAloneIsInTheWorkingDirectory) {
  TempDir dir;
  const std::filesystem::path previous = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  const RunOptions options = ParseOk({"--save-result", "--result-filename", "named.json"});
  std::filesystem::current_path(previous);
  EXPECT_EQ(options.save_result, "named.json");
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(CliTest, ResultDirIsCreatedWhenTheRunIsAccepted) {
  TempDir dir;
  const std::string nested = dir.File("a/b");
  const RunOptions options =
      ParseOk({"--save-result", "--result-dir", nested, "--result-filename", "r.json"});
  EXPECT_EQ(options.save_result, nested + "/r.json");
  EXPECT_TRUE(std::filesystem::is_directory(nested));
  EXPECT_FALSE(std::filesystem::exists(nested + "/r.json"));
}

TEST(CliTest, ResultDirIsNotLeftBehindByARefusedRun) {
  TempDir dir;
  // Refused by another flag: the directory is never made.
  ExpectUsageErrorWithUrl({"--save-result", "--result-dir", dir.File("a/b"), "--rate", "0"},
                          "--rate");
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  // Refused by the records path, checked after the directory was made: it is taken away again.
  ExpectUsageErrorWithUrl({"--save-result", "--result-dir", dir.File("a/b"), "--save-records",
                           dir.File("absent/r.jsonl")},
                          "--save-records");
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(CliTest, ResultDirThatIsAFile) {
  TempDir dir;
  std::ofstream(dir.File("file")) << "x";
  ExpectUsageErrorWithUrl({"--save-result", "--result-dir", dir.File("file")}, "--result-dir");
}

TEST(CliTest, OutputPathsWhereNothingCanBeCreated) {
  // /proc refuses new files even to root, whom access(2) would let through.
  ExpectUsageErrorWithUrl({"--save-result", "/proc/barrage-cli-test.json"}, "--save-result");
  ExpectUsageErrorWithUrl({"--save-records", "/proc/barrage-cli-test.jsonl"}, "--save-records");
  EXPECT_FALSE(std::filesystem::exists("/proc/barrage-cli-test.json"));
}

TEST(CliTest, ExistingOutputFileIsNeitherTruncatedNorRemoved) {
  TempDir dir;
  const std::string path = dir.File("old.json");
  std::ofstream(path) << "previous";
  ParseOk({"--save-result", path});
  std::ifstream file(path);
  std::string content;
  std::getline(file, content);
  EXPECT_EQ(content, "previous");
}

TEST(CliTest, EmptyOutputPaths) {
  ExpectUsageErrorWithUrl({"--save-result="}, "--save-result");
  ExpectUsageErrorWithUrl({"--save-records", ""}, "--save-records");
  ExpectUsageErrorWithUrl({"--save-result", "--result-dir="}, "--result-dir");
}

TEST(CliTest, ResultAndRecordsMayNotShareAFile) {
  TempDir dir;
  ExpectUsageErrorWithUrl(
      {"--save-result", dir.File("same.jsonl"), "--save-records", dir.File("./same.jsonl")},
      "--save-records");
}

TEST(CliTest, ControlCharactersStayOnOneLine) {
  // ExpectUsageError checks the single trailing newline.
  ExpectUsageErrorWithUrl({"--rate", "1\n2"}, "--rate");
  ExpectUsageError({"--url", "http://h/\nx"}, "--url");
  ExpectUsageErrorWithUrl({"--header", "A\nB"}, "--header");
  ExpectUsageErrorWithUrl({"--header", "X-A: 1\r\nX-Injected: 2"}, "--header");
  const Outcome outcome = Parse({"--url", kUrl, "--rate", "1\n2"});
  EXPECT_NE(outcome.err.find("\\x0a"), std::string::npos) << outcome.err;
}

TEST(CliTest, CredentialHeadersOfAnyUsualNameAreRedacted) {
  const std::vector<std::string> args = {"--url",    kUrl,
                                         "--header", "Cookie: id=1",
                                         "--header", "api-key: k1",
                                         "--header", "X-Auth-Token: t1",
                                         "--header", "Proxy-Authorization: p1",
                                         "--header", "Accept: text/plain"};
  const Outcome outcome = Parse(args);
  ASSERT_TRUE(outcome.parsed.proceed) << outcome.err;
  const std::vector<std::string>& argv = outcome.parsed.options.argv;
  ASSERT_EQ(argv.size(), args.size());
  EXPECT_EQ(argv[3], "Cookie: <redacted>");
  EXPECT_EQ(argv[5], "api-key: <redacted>");
  EXPECT_EQ(argv[7], "X-Auth-Token: <redacted>");
  EXPECT_EQ(argv[9], "Proxy-Authorization: <redacted>");
  EXPECT_EQ(argv[11], "Accept: text/plain");
}

TEST(CliTest, ArgvIsTheArgumentsGiven) {
  const std::vector<std::string> args = {"--url", kUrl, "--rate=5", "--quiet"};
  const Outcome outcome = Parse(args);
  ASSERT_TRUE(outcome.parsed.proceed) << outcome.err;
  EXPECT_EQ(outcome.parsed.options.argv, args);
}

TEST(CliTest, ThreadsDefaultIsAtLeastOne) {
  EXPECT_EQ(ParseOk({}, /*default_threads=*/0).plan.load.threads, 1u);
}

TEST(CliTest, EmptyCommandLineAsksForTheUrl) { ExpectUsageError({}, "--url"); }

TEST(CliTest, FifoWithoutAReaderIsRefusedWithoutHanging) {
  TempDir dir;
  const std::string fifo = dir.File("pipe.json");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ExpectUsageErrorWithUrl({"--save-result", fifo}, "--save-result");
}

}  // namespace
}  // namespace barrage::coordinator
