// Bad input: every invalid flag value ends the real `barrage` binary with exit code 1 and exactly
// one line on stderr naming the flag, before any request is sent. The target is a private nginx
// that logs every request; after all cases it must have seen none.

#include <filesystem>
#include <fstream>

#include "integration_util.h"

namespace barrage::integration {
namespace {

struct BadInput {
  std::string name;               // for the test's name
  std::vector<std::string> args;  // after `barrage run`; "URL" is replaced with nginx's URL
  std::string flag;               // the flag the message must name
};

// Names the case in test output instead of dumping its bytes.
void PrintTo(const BadInput& input, std::ostream* out) { *out << input.name; }

class BadInputTest : public ::testing::TestWithParam<BadInput> {
 protected:
  static void SetUpTestSuite() {
    nginx_ = new NginxServer(NginxServer::Options{.access_log = true});
    absl::Status started = nginx_->Start();
    ASSERT_TRUE(started.ok()) << started;
  }

  static void TearDownTestSuite() {
    // The whole point: nothing reached the target, whatever the input.
    EXPECT_EQ(nginx_->RequestCount(), 0u);
    delete nginx_;
    nginx_ = nullptr;
  }

  static NginxServer* nginx_;
};

NginxServer* BadInputTest::nginx_ = nullptr;

TEST_P(BadInputTest, ExitsOneWithOneLineNamingTheFlag) {
  ASSERT_NE(nginx_, nullptr);
  TempDir dir;
  std::vector<std::string> args;
  for (const std::string& arg : GetParam().args) {
    if (arg == "URL") {
      args.push_back(nginx_->url());
    } else if (arg.starts_with("TMP/")) {
      args.push_back(dir.path() + arg.substr(3));
    } else {
      args.push_back(arg);
    }
  }
  // Every case would be a valid 1 s run without its bad part.
  ProcessResult run = RunBarrage(args, std::chrono::seconds(20));
  ASSERT_FALSE(run.timed_out) << Describe(run);
  EXPECT_FALSE(LooksLikeCrash(run)) << Describe(run);
  EXPECT_EQ(run.exit_code, 1) << Describe(run);
  EXPECT_EQ(run.out, "") << "nothing but the error may be printed";
  ASSERT_FALSE(run.err.empty());
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_EQ(run.err.back(), '\n');
  const std::string prefix = "barrage run: " + GetParam().flag + ": ";
  EXPECT_TRUE(run.err.starts_with(prefix)) << "expected \"" << prefix << "...\", got " << run.err;
  // No output file was created by a refused run.
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "a refused run left files behind";
}

std::vector<BadInput> Cases() {
  const std::vector<std::string> ok = {"--url", "URL", "--rate", "10", "--duration", "1s"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = ok;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  return {
      {"UnknownFlag", with({"--frobnicate", "3"}), "--frobnicate"},
      {"MissingUrl", {"--rate", "10", "--duration", "1s"}, "--url"},
      {"UrlWithoutScheme", {"--url", "127.0.0.1:8080/", "--duration", "1s"}, "--url"},
      {"UrlWithOtherScheme", {"--url", "ftp://127.0.0.1/", "--duration", "1s"}, "--url"},
      {"UrlWithBadPort", {"--url", "http://127.0.0.1:99999/", "--duration", "1s"}, "--url"},
      {"UrlWithEmptyHost", {"--url", "http:///path", "--duration", "1s"}, "--url"},
      {"NegativeRate", {"--url", "URL", "--rate", "-5", "--duration", "1s"}, "--rate"},
      {"ZeroRate", {"--url", "URL", "--rate", "0", "--duration", "1s"}, "--rate"},
      {"RateNotANumber", {"--url", "URL", "--rate", "fast", "--duration", "1s"}, "--rate"},
      {"VllmRateAlias",
       {"--url", "URL", "--request-rate", "0", "--duration", "1s"},
       "--request-rate"},
      {"VllmConcurrencyAlias", with({"--max-concurrency", "0"}), "--max-concurrency"},
      {"UnknownFlagWithValue", with({"--nope=3"}), "--nope"},
      {"UnparsableDuration",
       {"--url", "URL", "--rate", "10", "--duration", "10 parsecs"},
       "--duration"},
      {"ZeroDuration", {"--url", "URL", "--rate", "10", "--duration", "0s"}, "--duration"},
      {"UnparsableTimeout", with({"--timeout", "soon"}), "--timeout"},
      {"UnparsableWarmup", with({"--warmup", "-1s"}), "--warmup"},
      {"MissingBodyFile", with({"--body-file", "TMP/no-such-body.json"}), "--body-file"},
      {"UnwritableResultDirectory", with({"--save-result", "/nonexistent-dir/result.json"}),
       "--save-result"},
      {"ResultPathIsADirectory", with({"--save-result", "TMP/"}), "--save-result"},
      // /proc takes no new file even from root, whom a permission check would let through.
      {"ResultPathWhereNothingCanBeCreated", with({"--save-result", "/proc/barrage.json"}),
       "--save-result"},
      {"RecordsPathWhereNothingCanBeCreated", with({"--save-records", "/proc/barrage.jsonl"}),
       "--save-records"},
      // vLLM's switch form: the refused run must not leave the result directory behind.
      {"ResultDirOfARefusedRun",
       with({"--save-result", "--result-dir", "TMP/results", "--save-records",
             "TMP/absent/r.jsonl"}),
       "--save-records"},
      {"BodyAndBodyFile", with({"--body", "x", "--body-file", "TMP/no-such-body.json"}),
       "--body-file"},
      {"BurstinessWithConstantArrival", with({"--arrival", "constant", "--burstiness", "0.5"}),
       "--burstiness"},
      {"HeaderWithLineBreak", with({"--header", "X-A: 1\r\nX-B: 2"}), "--header"},
      {"UnwritableRecordsDirectory", with({"--save-records", "/nonexistent-dir/r.jsonl"}),
       "--save-records"},
      {"RecordsWithUnknownFormat", with({"--save-records", "TMP/records.txt"}), "--save-records"},
      {"PercentileZero", with({"--percentiles", "0,50"}), "--percentiles"},
      {"PercentileHundred", with({"--percentiles", "50,100"}), "--percentiles"},
      {"PercentileAboveHundred", with({"--percentiles", "150"}), "--percentiles"},
      {"PercentileNotANumber", with({"--metric-percentiles", "50,high"}), "--metric-percentiles"},
      {"ThresholdWithoutOperator", with({"--threshold", "p99_e2el_ms"}), "--threshold"},
      {"ThresholdOnUnknownMetric", with({"--threshold", "p99_speed_ms<3"}), "--threshold"},
      {"ThresholdOnMissingPercentile", with({"--threshold", "p99.9_e2el_ms<3"}), "--threshold"},
      {"UnknownArrival", with({"--arrival", "weibull"}), "--arrival"},
      {"ZeroConcurrency", with({"--concurrency", "0"}), "--concurrency"},
      {"NegativeRequests", with({"--requests", "-3"}), "--requests"},
      {"ZeroThreads", with({"--threads", "0"}), "--threads"},
      {"FlagWithoutValue", with({"--seed"}), "--seed"},
      {"BadHeader", with({"--header", "no colon here"}), "--header"},
  };
}

INSTANTIATE_TEST_SUITE_P(AllBadInputs, BadInputTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<BadInput>& case_info) {
                           return case_info.param.name;
                         });

}  // namespace
}  // namespace barrage::integration
