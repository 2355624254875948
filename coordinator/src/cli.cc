#include "barrage/coordinator/cli.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>

#include "barrage/common/token_file.h"
#include "barrage/common/url.h"
#include "barrage/coordinator/agent_addresses.h"
#include "barrage/coordinator/report.h"

namespace barrage::coordinator {
namespace {

// Thrown inside the parser only, caught in ParseRunArgs: one message per bad input.
struct UsageError {
  std::string flag;
  std::string message;
};

[[noreturn]] void Fail(const std::string& flag, const std::string& message) {
  throw UsageError{flag, message};
}

constexpr const char* kUsage = R"(Usage: barrage run --url URL [options]

Load:
  --url URL                 target (http:// or https://), required
  --method M                HTTP method (default GET)
  --header 'K: V'           request header, repeatable
  --body TEXT               request body
  --body-file FILE          request body read from FILE
  --rate R|inf              arrivals per second (open loop); inf (default) = closed loop
  --arrival KIND            constant (default), poisson or gamma
  --burstiness G            gamma shape (1 = Poisson, < 1 burstier); implies --arrival gamma
  --concurrency C           closed loop: requests in flight (default 10);
                            with --rate: cap on requests in flight
  --duration D              measured time, e.g. 30s, 5m (default 10s unless --requests)
  --requests N              measured requests to send
  --warmup D                load before measurement starts, excluded from results
  --timeout D               per-request timeout (default 30s)
  --grace D                 after Ctrl-C, time in-flight requests get to finish (default 5s)
  --seed S                  arrival process seed (default 0)
  --threads N               worker threads per agent (default: number of cores)

Agents:
  --agents LIST             remote barrage-agents: host:port,host:port, @FILE (one per line)
                            or dns:///NAME:PORT (every address of NAME); default: an agent
                            inside this process
  --agent-weights W,W,...   shares of the load per agent, in --agents order (default equal)
  --agent-token-file FILE   the agents' shared secret (or the BARRAGE_AGENT_TOKEN variable)
  --lease-timeout D         an agent that hears nothing from us for D stops (default 5s)
  --allow-partial           go on without agents that cannot be reached or are lost (exit 0)

Results:
  --percentiles LIST        e.g. 50,90,95,99 (default), each in (0,100)
  --save-result FILE.json   write the result JSON
  --save-records FILE       write every request: FILE.jsonl or FILE.csv
  --threshold EXPR          fail with exit 99 unless EXPR holds, e.g. 'p99_e2el_ms<250',
                            'error_rate<0.01'; repeatable
  --quiet                   no progress lines (the summary is still printed)

vllm bench serve spellings:
  --request-rate = --rate, --max-concurrency = --concurrency, --num-prompts = --requests,
  --metric-percentiles = --percentiles, --save-result (as a switch) with --result-dir DIR and
  --result-filename NAME

Exit codes: 0 ok, 1 bad usage, 2 run failed, 99 threshold crossed.
)";

// vLLM's spellings mapped to ours; messages name the canonical flag, which --help relates.
const std::map<std::string, std::string>& Aliases() {
  static const auto* aliases = new std::map<std::string, std::string>{
      {"--request-rate", "--rate"},
      {"--max-concurrency", "--concurrency"},
      {"--num-prompts", "--requests"},
      {"--metric-percentiles", "--percentiles"},
  };
  return *aliases;
}

// Flags that take no value.
bool IsSwitch(const std::string& flag) {
  return flag == "--quiet" || flag == "--help" || flag == "--allow-partial";
}

const std::vector<std::string>& KnownFlags() {
  static const auto* flags = new std::vector<std::string>{"--url",           "--method",
                                                          "--header",        "--body",
                                                          "--body-file",     "--rate",
                                                          "--arrival",       "--burstiness",
                                                          "--concurrency",   "--duration",
                                                          "--requests",      "--warmup",
                                                          "--timeout",       "--grace",
                                                          "--seed",          "--threads",
                                                          "--percentiles",   "--save-result",
                                                          "--save-records",  "--threshold",
                                                          "--quiet",         "--help",
                                                          "--result-dir",    "--result-filename",
                                                          "--agents",        "--agent-token-file",
                                                          "--lease-timeout", "--allow-partial",
                                                          "--agent-weights"};
  return *flags;
}

double ParsePositiveNumber(const std::string& flag, const std::string& text) {
  double value = 0;
  const auto parsed = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || parsed.ec != std::errc() || parsed.ptr != text.data() + text.size() ||
      !std::isfinite(value)) {
    Fail(flag, "'" + text + "' is not a number");
  }
  if (value <= 0) Fail(flag, "must be greater than 0, got " + text);
  return value;
}

uint64_t ParseCount(const std::string& flag, const std::string& text, bool allow_zero) {
  uint64_t value = 0;
  const auto parsed = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || parsed.ec != std::errc() || parsed.ptr != text.data() + text.size()) {
    Fail(flag, "'" + text + "' is not a whole number" +
                   (text.starts_with("-") ? " (it must not be negative)" : ""));
  }
  if (!allow_zero && value == 0) Fail(flag, "must be at least 1");
  return value;
}

common::Nanos ParseDurationFlag(const std::string& flag, const std::string& text, bool allow_zero) {
  absl::StatusOr<common::Nanos> duration = common::ParseDuration(text);
  if (!duration.ok()) Fail(flag, std::string(duration.status().message()));
  if (!allow_zero && *duration <= 0) Fail(flag, "must be longer than 0");
  return *duration;
}

std::vector<double> ParsePercentiles(const std::string& flag, const std::string& text) {
  std::vector<double> percentiles;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    double value = 0;
    const auto parsed = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || parsed.ec != std::errc() || parsed.ptr != item.data() + item.size()) {
      Fail(flag, "'" + item + "' is not a number (write e.g. 50,90,99,99.9)");
    }
    if (!(value > 0 && value < 100)) {
      Fail(flag, "percentile " + item + " is outside (0, 100)");
    }
    percentiles.push_back(value);
  }
  if (percentiles.empty()) Fail(flag, "give at least one percentile, e.g. 50,90,99");
  std::sort(percentiles.begin(), percentiles.end());
  percentiles.erase(std::unique(percentiles.begin(), percentiles.end()), percentiles.end());
  return percentiles;
}

// Fails unless `path` can be written. Opens it as the writer will, but never truncates an
// existing file and removes a file it had to create, so a refused or checked path is left as it
// was. access(2) is not enough: root passes it for read-only places such as /proc.
void CheckWritable(const std::string& flag, const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) Fail(flag, "needs a file name");
  std::error_code error;
  const fs::path file(path);
  if (fs::is_directory(file, error)) Fail(flag, "'" + path + "' is a directory");
  fs::path directory = file.parent_path();
  if (directory.empty()) directory = ".";
  if (!fs::is_directory(directory, error)) {
    Fail(flag,
         "cannot write '" + path + "': directory '" + directory.string() + "' does not exist");
  }
  // O_NONBLOCK: a FIFO with no reader must not hang the check.
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) {
    close(fd);
    return;
  }
  if (errno == ENOENT) {
    fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      close(fd);
      unlink(path.c_str());
      return;
    }
  }
  Fail(flag, "cannot write '" + path + "': " + std::strerror(errno));
}

std::string ReadBodyFile(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    Fail("--body-file", "'" + path + "' is a directory");
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) Fail("--body-file", "cannot read '" + path + "' (missing or not readable)");
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

std::string NowForFileName() {
  const time_t now = time(nullptr);
  tm local{};
  localtime_r(&now, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &local);
  return text;
}

// Headers whose values must not reach the result's argv echo: credentials by any usual name.
bool IsSecretHeader(const std::string& header) {
  std::string name = header.substr(0, header.find(':'));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (std::string_view word :
       {"auth", "key", "token", "secret", "cookie", "password", "credential", "session"}) {
    if (name.find(word) != std::string::npos) return true;
  }
  return false;
}

// One flag as given.
struct FlagValue {
  std::string flag;     // canonical spelling, e.g. --rate for --request-rate
  std::string spelled;  // as typed, for messages
  std::string value;
};

// The flags as given, in order.
struct RawFlags {
  std::vector<FlagValue> values;
  bool help = false;
  bool quiet = false;
  bool allow_partial = false;
  bool save_result_switch = false;  // --save-result with no value (vLLM's form)
};

RawFlags Tokenize(const std::vector<std::string>& args) {
  RawFlags raw;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string spelled = args[i];
    std::optional<std::string> value;
    if (spelled == "-h") spelled = "--help";
    if (!spelled.starts_with("--")) Fail(spelled, "unexpected argument (flags start with --)");
    if (const size_t equals = spelled.find('='); equals != std::string::npos) {
      value = spelled.substr(equals + 1);
      spelled = spelled.substr(0, equals);
    }
    std::string flag = spelled;
    if (auto alias = Aliases().find(flag); alias != Aliases().end()) flag = alias->second;
    if (std::find(KnownFlags().begin(), KnownFlags().end(), flag) == KnownFlags().end()) {
      Fail(spelled, "unknown flag (see barrage run --help)");
    }
    if (IsSwitch(flag)) {
      if (value) Fail(spelled, "takes no value");
      if (flag == "--help") {
        raw.help = true;
      } else if (flag == "--quiet") {
        raw.quiet = true;
      } else {
        raw.allow_partial = true;
      }
      continue;
    }
    if (!value) {
      // vLLM's --save-result is a switch; ours takes a path. The switch form is --save-result
      // followed by another flag or by nothing.
      const bool next_is_value = i + 1 < args.size() && !args[i + 1].starts_with("--");
      if (flag == "--save-result" && !next_is_value) {
        raw.save_result_switch = true;
        continue;
      }
      if (i + 1 >= args.size()) Fail(spelled, "needs a value");
      value = args[++i];
    }
    raw.values.push_back(FlagValue{flag, spelled, *value});
  }
  return raw;
}

// vLLM's default result name, with "barrage" for its backend and model:
// barrage-<rate>qps[-concurrency<C>]-<YYYYMMDD-HHMMSS>.json.
std::string DefaultResultName(const common::LoadSpec& load) {
  char rate[32] = "inf";
  if (load.rate) std::snprintf(rate, sizeof rate, "%g", *load.rate);
  return "barrage-" + std::string(rate) + "qps" +
         (load.concurrency > 0 ? "-concurrency" + std::to_string(load.concurrency) : "") + "-" +
         NowForFileName() + ".json";
}

// The first directory of `directory` that does not exist yet ("" if all do): what creating it
// adds, so a refused run can take it away again.
std::filesystem::path FirstMissing(const std::filesystem::path& directory) {
  std::error_code error;
  std::filesystem::path first_missing;
  for (std::filesystem::path at = directory; !at.empty() && !std::filesystem::exists(at, error);
       at = at.parent_path()) {
    first_missing = at;
    if (at == at.parent_path()) break;
  }
  return first_missing;
}

RunOptions Build(const RawFlags& raw, unsigned default_threads) {
  RunOptions options;
  common::TestPlan& plan = options.plan;
  common::LoadSpec& load = plan.load;
  load.threads = std::max(1u, default_threads);
  std::optional<std::string> body;
  std::optional<std::string> body_file;
  std::optional<common::ArrivalKind> arrival;
  std::optional<double> burstiness;
  std::string result_dir;
  std::string result_filename;
  std::string agent_weights;
  std::vector<std::string> thresholds;
  std::map<std::string, std::string> seen;  // canonical flag -> spelling first used

  for (const auto& [flag, spelled, value] : raw.values) {
    const bool repeatable = flag == "--header" || flag == "--threshold";
    if (!repeatable) {
      const auto [first, inserted] = seen.emplace(flag, spelled);
      if (!inserted) {
        Fail(spelled, first->second == spelled
                          ? "given more than once"
                          : "given more than once (" + first->second + " is the same flag)");
      }
    }
    if (flag == "--url") {
      absl::StatusOr<common::Url> url = common::ParseUrl(value);
      if (!url.ok()) Fail(spelled, std::string(url.status().message()));
      plan.request.url = value;
    } else if (flag == "--method") {
      if (value.empty() || !std::all_of(value.begin(), value.end(), [](unsigned char c) {
            return std::isupper(c) || c == '-' || c == '_';
          })) {
        Fail(spelled, "'" + value + "' is not an HTTP method (e.g. GET, POST, PUT)");
      }
      plan.request.method = value;
    } else if (flag == "--header") {
      const size_t colon = value.find(':');
      if (colon == std::string::npos || colon == 0 || value.find_first_of(" \t") < colon) {
        Fail(spelled, "'" + value + "' is not 'Name: value'");
      }
      if (value.find_first_of("\r\n") != std::string::npos) {
        Fail(spelled, "'" + value + "' contains a line break");
      }
      plan.request.headers.push_back(value);
    } else if (flag == "--body") {
      body = value;
    } else if (flag == "--body-file") {
      body_file = value;
    } else if (flag == "--rate") {
      if (value != "inf") load.rate = ParsePositiveNumber(spelled, value);
    } else if (flag == "--arrival") {
      absl::StatusOr<common::ArrivalKind> kind = common::ParseArrivalKind(value);
      if (!kind.ok()) Fail(spelled, std::string(kind.status().message()));
      arrival = *kind;
    } else if (flag == "--burstiness") {
      burstiness = ParsePositiveNumber(spelled, value);
    } else if (flag == "--concurrency") {
      const uint64_t concurrency = ParseCount(spelled, value, /*allow_zero=*/false);
      if (concurrency > 1'000'000) Fail(spelled, "must be at most 1000000");
      load.concurrency = static_cast<uint32_t>(concurrency);
    } else if (flag == "--duration") {
      load.duration = ParseDurationFlag(spelled, value, /*allow_zero=*/false);
    } else if (flag == "--requests") {
      load.requests = ParseCount(spelled, value, /*allow_zero=*/false);
    } else if (flag == "--warmup") {
      load.warmup = ParseDurationFlag(spelled, value, /*allow_zero=*/true);
    } else if (flag == "--timeout") {
      load.timeout = ParseDurationFlag(spelled, value, /*allow_zero=*/false);
    } else if (flag == "--grace") {
      load.grace = ParseDurationFlag(spelled, value, /*allow_zero=*/true);
    } else if (flag == "--agents") {
      absl::StatusOr<std::vector<AgentAddress>> agents = ParseAgents(value);
      if (!agents.ok()) Fail("", std::string(agents.status().message()));
      options.agents.clear();
      for (const AgentAddress& agent : *agents) {
        options.agents.push_back(agent.text);
      }
    } else if (flag == "--agent-weights") {
      agent_weights = value;
    } else if (flag == "--agent-token-file") {
      absl::StatusOr<std::string> token = common::ReadTokenFile(value);
      if (!token.ok()) Fail(spelled, std::string(token.status().message()));
      options.agent_token = *token;
    } else if (flag == "--lease-timeout") {
      options.lease_timeout = ParseDurationFlag(spelled, value, /*allow_zero=*/false);
    } else if (flag == "--seed") {
      load.seed = ParseCount(spelled, value, /*allow_zero=*/true);
    } else if (flag == "--threads") {
      const uint64_t threads = ParseCount(spelled, value, /*allow_zero=*/false);
      if (threads > 1024) Fail(spelled, "must be at most 1024");
      load.threads = static_cast<uint32_t>(threads);
    } else if (flag == "--percentiles") {
      options.percentiles = ParsePercentiles(spelled, value);
    } else if (flag == "--save-result") {
      if (value.empty()) Fail(spelled, "needs a file name");
      options.save_result = value;
    } else if (flag == "--save-records") {
      if (value.empty()) Fail(spelled, "needs a file name");
      options.save_records = value;
    } else if (flag == "--threshold") {
      thresholds.push_back(value);
    } else if (flag == "--result-dir") {
      if (value.empty()) Fail(spelled, "needs a directory");
      result_dir = value;
    } else if (flag == "--result-filename") {
      if (value.empty()) Fail(spelled, "needs a file name");
      result_filename = value;
    }
  }

  if (plan.request.url.empty()) {
    Fail("--url", "missing; give the target, e.g. http://127.0.0.1:8080/");
  }
  if (body && body_file) Fail("--body-file", "give either --body or --body-file, not both");
  if (body) plan.request.body = *body;
  if (body_file) plan.request.body = ReadBodyFile(*body_file);
  if ((body || body_file) && plan.request.method == "GET" && seen.count("--method") == 0) {
    plan.request.method = "POST";  // a body with no method means POST, as curl -d does
  }

  const bool arrival_given = arrival.has_value();
  if (burstiness) {
    if (arrival && *arrival != common::ArrivalKind::kGamma) {
      Fail("--burstiness", "applies to --arrival gamma only (it is the gamma shape)");
    }
    arrival = common::ArrivalKind::kGamma;
    load.burstiness = *burstiness;
  }
  if (arrival) {
    if (!load.rate) {
      Fail(arrival_given ? "--arrival" : "--burstiness",
           "needs --rate: arrivals are the instants of an open-loop schedule");
    }
    load.arrival = *arrival;
  }
  if (!load.rate && load.concurrency == 0) load.concurrency = 10;
  if (load.duration == 0 && load.requests == 0) load.duration = 10 * common::kNanosPerSecond;

  for (const std::string& text : thresholds) {
    absl::StatusOr<Threshold> threshold = ParseThreshold(text, options.percentiles);
    if (!threshold.ok()) {
      // The message already starts with "--threshold: ".
      Fail("", std::string(threshold.status().message()));
    }
    options.thresholds.push_back(*threshold);
  }
  options.quiet = raw.quiet;
  options.allow_partial = raw.allow_partial;
  if (!agent_weights.empty()) {
    if (options.agents.empty()) Fail("--agent-weights", "needs --agents");
    absl::StatusOr<std::vector<uint32_t>> weights =
        ParseAgentWeights(agent_weights, options.agents.size());
    if (!weights.ok()) Fail("", std::string(weights.status().message()));
    options.agent_weights = *weights;
  }
  if (options.agent_token.empty()) {
    if (const char* token = std::getenv("BARRAGE_AGENT_TOKEN"); token != nullptr) {
      options.agent_token = token;
    }
  }
  if (absl::Status valid = common::ValidatePlan(plan); !valid.ok()) {
    Fail("", std::string(valid.message()));
  }

  // Output paths last: everything else is known good, so a directory made here for --result-dir
  // is only taken away again when the output path itself is refused.
  std::filesystem::path created;
  try {
    if (raw.save_result_switch || !result_dir.empty() || !result_filename.empty()) {
      if (!raw.save_result_switch && options.save_result.empty()) {
        Fail(seen.count("--result-dir") != 0 ? seen["--result-dir"] : seen["--result-filename"],
             "needs --save-result (as in vllm bench serve)");
      }
      std::string name = !result_filename.empty() ? result_filename : options.save_result;
      if (name.empty()) name = DefaultResultName(load);
      if (!result_dir.empty()) {
        std::error_code error;
        if (std::filesystem::exists(result_dir, error) &&
            !std::filesystem::is_directory(result_dir, error)) {
          Fail("--result-dir", "'" + result_dir + "' is not a directory");
        }
        created = FirstMissing(result_dir);
        std::filesystem::create_directories(result_dir, error);
        if (error) Fail("--result-dir", "cannot create '" + result_dir + "': " + error.message());
        name = (std::filesystem::path(result_dir) / name).string();
      }
      options.save_result = name;
    }
    if (!options.save_result.empty()) CheckWritable("--save-result", options.save_result);
    if (!options.save_records.empty()) {
      const std::string& path = options.save_records;
      if (!path.ends_with(".jsonl") && !path.ends_with(".csv")) {
        Fail("--save-records", "'" + path + "' must end in .jsonl or .csv (that picks the format)");
      }
      if (std::filesystem::path(path).lexically_normal() ==
          std::filesystem::path(options.save_result).lexically_normal()) {
        Fail("--save-records", "'" + path + "' is also the --save-result file");
      }
      CheckWritable("--save-records", path);
    }
  } catch (const UsageError&) {
    std::error_code error;
    if (!created.empty()) std::filesystem::remove_all(created, error);
    throw;
  }
  return options;
}

std::vector<std::string> RedactedArgv(const std::vector<std::string>& args) {
  std::vector<std::string> argv = args;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == "--header" && i + 1 < argv.size() && IsSecretHeader(argv[i + 1])) {
      argv[i + 1] = argv[i + 1].substr(0, argv[i + 1].find(':')) + ": <redacted>";
    } else if (argv[i].starts_with("--header=") && IsSecretHeader(argv[i].substr(9))) {
      argv[i] = argv[i].substr(0, argv[i].find(':')) + ": <redacted>";
    }
  }
  return argv;
}

// One line, whatever the user typed: control characters in echoed values become \xNN.
std::string OneLine(const std::string& text) {
  std::string line;
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      line += escaped;
    } else {
      line += static_cast<char>(c);
    }
  }
  return line;
}

}  // namespace

ParsedRun ParseRunArgs(const std::vector<std::string>& args, unsigned default_threads,
                       std::ostream& out, std::ostream& err) {
  ParsedRun parsed;
  try {
    const RawFlags raw = Tokenize(args);
    if (raw.help) {
      out << kUsage;
      parsed.exit_code = 0;
      return parsed;
    }
    parsed.options = Build(raw, default_threads);
    parsed.options.argv = RedactedArgv(args);
    parsed.proceed = true;
  } catch (const UsageError& error) {
    std::string line = "barrage run: ";
    if (!error.flag.empty()) line += error.flag + ": ";
    line += error.message;
    err << OneLine(line) << '\n';
    parsed.exit_code = 1;
  }
  return parsed;
}

}  // namespace barrage::coordinator
