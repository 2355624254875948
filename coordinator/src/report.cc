#include "barrage/coordinator/report.h"

#include <time.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string_view>

namespace barrage::coordinator {
namespace {

using Json = nlohmann::json;

constexpr int kSummaryWidth = 50;
constexpr LatencyMetric kSummaryMetrics[] = {LatencyMetric::kE2el, LatencyMetric::kTtfb,
                                             LatencyMetric::kClientQueueTime,
                                             LatencyMetric::kE2elIncludingClientQueue};

// Headers whose values are secrets: never echoed into results.
constexpr std::string_view kSecretHeaders[] = {"authorization", "proxy-authorization", "x-api-key",
                                               "api-key", "cookie"};

double NanosToMs(double nanos) { return nanos / 1e6; }
double NanosToSeconds(common::Nanos nanos) {
  return static_cast<double>(nanos) / common::kNanosPerSecond;
}

std::string Lowercase(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

// "Name: value" with the value replaced when the header carries a secret.
std::string RedactHeader(const std::string& header) {
  const size_t colon = header.find(':');
  const std::string name = header.substr(0, colon);
  std::string trimmed = Lowercase(name);
  trimmed.erase(trimmed.find_last_not_of(" \t") + 1);
  trimmed.erase(0, trimmed.find_first_not_of(" \t"));
  for (std::string_view secret : kSecretHeaders) {
    if (trimmed == secret) {
      return name + ": <redacted>";
    }
  }
  return header;
}

std::string DateString(common::Nanos wall_ns) {
  const time_t seconds = static_cast<time_t>(wall_ns / common::kNanosPerSecond);
  tm local{};
  localtime_r(&seconds, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &local);
  return text;
}

// Requests sent per second over the measured window: first scheduled instant to last completion,
// but no longer than the planned duration, so that requests still draining after the schedule
// ended (a stalled target, timeouts) do not make the client look slower than it sent.
double AchievedRate(const RunStats& stats, const common::LoadSpec& load) {
  common::Nanos window = stats.duration();
  if (load.duration > 0) {
    window = std::min(window, load.duration);
  }
  return window > 0 ? static_cast<double>(stats.total()) / NanosToSeconds(window) : 0;
}

double RequestThroughput(const RunStats& stats) {
  const common::Nanos duration = stats.duration();
  return duration > 0 ? static_cast<double>(stats.completed) / NanosToSeconds(duration) : 0;
}

double ErrorRate(const RunStats& stats) {
  return stats.total() > 0 ? static_cast<double>(stats.failed) / static_cast<double>(stats.total())
                           : 0;
}

std::string Centered(std::string_view text, char fill) {
  const int padding = std::max(0, kSummaryWidth - static_cast<int>(text.size()));
  const int left = padding / 2;
  return std::string(left, fill) + std::string(text) + std::string(padding - left, fill);
}

// One summary row as vLLM prints it with "{:<40} {:<10}": both fields left-aligned and padded,
// never cut, so the value starts in column 42 and trailing spaces are kept as vLLM leaves them.
void Row(std::string& out, std::string_view label, std::string_view value) {
  out.append(label);
  out.append(label.size() < 40 ? 40 - label.size() : 0, ' ');
  out.append(" ");
  out.append(value);
  out.append(value.size() < 10 ? 10 - value.size() : 0, ' ');
  out.append("\n");
}

std::string Fixed2(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

Json ConfigEcho(const RunOptions& options) {
  const common::TestPlan& plan = options.plan;
  const common::LoadSpec& load = plan.load;
  Json headers = Json::array();
  for (const std::string& header : plan.request.headers) {
    headers.push_back(RedactHeader(header));
  }
  Json config = {
      {"url", plan.request.url},
      {"method", plan.request.method},
      {"headers", headers},
      {"body_bytes", plan.request.body.size()},
      {"rate", load.rate ? Json(*load.rate) : Json("inf")},
      {"arrival", std::string(common::ArrivalKindName(load.arrival))},
      {"burstiness", load.burstiness},
      {"concurrency", load.concurrency},
      {"duration_s", NanosToSeconds(load.duration)},
      {"requests", load.requests},
      {"warmup_s", NanosToSeconds(load.warmup)},
      {"timeout_s", NanosToSeconds(load.timeout)},
      {"grace_s", NanosToSeconds(load.grace)},
      {"seed", load.seed},
      {"threads", load.threads},
      {"percentiles", options.percentiles},
      {"argv", options.argv},
  };
  return config;
}

}  // namespace

std::string PercentileWord(double percentile) {
  // Python's str(float): the shortest digits that round-trip, in fixed notation for exponents
  // from -4 to 15 and scientific outside; "50.0" loses its ".0" as vLLM's str(int(p)) does.
  const double magnitude = std::fabs(percentile);
  const bool fixed = magnitude == 0 || (magnitude >= 1e-4 && magnitude < 1e16);
  char text[64];
  const auto result =
      std::to_chars(text, text + sizeof text, percentile,
                    fixed ? std::chars_format::fixed : std::chars_format::scientific);
  return std::string(text, result.ptr);
}

Json BuildResultJson(const RunReport& report) {
  const RunOptions& options = *report.options;
  const common::LoadSpec& load = options.plan.load;
  const RunStats& stats = report.stats;
  const ClientFidelity& fidelity = report.fidelity;

  Json result;
  result["date"] = DateString(report.wall_start);
  result["version"] = report.version;
  result["backend"] = "http";
  result["url"] = options.plan.request.url;
  result["duration"] = NanosToSeconds(stats.duration());
  result["completed"] = stats.completed;
  result["failed"] = stats.failed;
  result["total_requests"] = stats.total();
  result["num_prompts"] = stats.total();
  result["request_throughput"] = RequestThroughput(stats);
  result["request_rate"] = load.rate ? Json(*load.rate) : Json("inf");
  result["burstiness"] = load.burstiness;
  result["max_concurrency"] = load.concurrency > 0 ? Json(load.concurrency) : Json(nullptr);
  result["total_bytes_in"] = stats.bytes_in;
  result["total_bytes_out"] = stats.bytes_out;

  for (int i = 0; i < kLatencyMetricCount; ++i) {
    const auto metric = static_cast<LatencyMetric>(i);
    const std::string key(LatencyMetricKey(metric));
    const common::LatencyHistogram& histogram = stats.histogram(metric);
    result["mean_" + key + "_ms"] = NanosToMs(histogram.Mean());
    result["median_" + key + "_ms"] = NanosToMs(histogram.ValueAtPercentile(50));
    result["std_" + key + "_ms"] = NanosToMs(histogram.Stddev());
    for (double percentile : options.percentiles) {
      result["p" + PercentileWord(percentile) + "_" + key + "_ms"] =
          NanosToMs(histogram.ValueAtPercentile(percentile));
    }
  }

  result["error_rate"] = ErrorRate(stats);
  Json errors = Json::object();
  for (int i = 1; i < common::kErrorClassCount; ++i) {
    const auto error = static_cast<common::ErrorClass>(i);
    errors[std::string(common::ErrorClassName(error))] = stats.errors_by_class[i];
  }
  result["errors_by_class"] = errors;
  Json statuses = Json::object();
  for (const auto& [status, count] : stats.status_counts) {
    statuses[std::to_string(status)] = count;
  }
  result["status_counts"] = statuses;
  result["achieved_rate"] = AchievedRate(stats, load);
  result["target_rate"] = load.rate ? Json(*load.rate) : Json(nullptr);
  result["arrival"] = std::string(common::ArrivalKindName(load.arrival));
  result["client_limited"] = fidelity.client_limited;
  result["client_limited_reason"] = fidelity.reason;
  result["schedule_lag_p50_ms"] = fidelity.schedule_lag_p50_ms;
  result["schedule_lag_p99_ms"] = fidelity.schedule_lag_p99_ms;
  result["dropped_arrivals"] = fidelity.dropped_arrivals;
  result["engine_limited_arrivals"] = fidelity.engine_limited_arrivals;
  result["agent_cpu"] = fidelity.agent_cpu;

  Json completed = Json::array();
  Json failed = Json::array();
  Json in_flight = Json::array();
  for (const SecondSample& second : stats.per_second) {
    completed.push_back(second.completed);
    failed.push_back(second.failed);
    in_flight.push_back(second.in_flight);
  }
  result["per_second"] = {{"completed", completed}, {"failed", failed}, {"in_flight", in_flight}};
  result["percentiles"] = options.percentiles;
  result["interrupted"] = report.interrupted;
  result["problems"] = report.problems;
  Json agents = Json::array();
  for (const AgentSummary& agent : report.agents) {
    agents.push_back({{"name", agent.name},
                      {"address", agent.address},
                      {"completed", agent.completed},
                      {"failed", agent.failed},
                      {"lost", agent.lost},
                      {"failure", agent.failure},
                      {"clock_offset_ms", agent.clock_offset_ms},
                      {"round_trip_ms", agent.round_trip_ms},
                      {"start_at_ns", agent.start_at_ns},
                      {"first_send_ms", agent.first_send_ms}});
  }
  result["agents"] = agents;
  result["config"] = ConfigEcho(options);
  return result;
}

std::string FormatSummary(const RunReport& report) {
  const RunOptions& options = *report.options;
  const common::LoadSpec& load = options.plan.load;
  const RunStats& stats = report.stats;
  std::string out;
  out.append(Centered(" Serving Benchmark Result ", '=')).append("\n");
  Row(out, "Successful requests:", std::to_string(stats.completed));
  Row(out, "Failed requests:", std::to_string(stats.failed));
  if (load.concurrency > 0) {
    Row(out, "Maximum request concurrency:", std::to_string(load.concurrency));
  }
  Row(out, "Request rate configured (RPS):", load.rate ? Fixed2(*load.rate) : "inf");
  Row(out, "Achieved request rate (RPS):", Fixed2(AchievedRate(stats, load)));
  Row(out, "Benchmark duration (s):", Fixed2(NanosToSeconds(stats.duration())));
  Row(out, "Request throughput (req/s):", Fixed2(RequestThroughput(stats)));
  for (LatencyMetric metric : kSummaryMetrics) {
    const common::LatencyHistogram& histogram = stats.histogram(metric);
    const std::string label(LatencyMetricLabel(metric));
    out.append(Centered(LatencyMetricTitle(metric), '-')).append("\n");
    Row(out, "Mean " + label + " (ms):", Fixed2(NanosToMs(histogram.Mean())));
    Row(out, "Median " + label + " (ms):", Fixed2(NanosToMs(histogram.ValueAtPercentile(50))));
    for (double percentile : options.percentiles) {
      Row(out, "P" + PercentileWord(percentile) + " " + label + " (ms):",
          Fixed2(NanosToMs(histogram.ValueAtPercentile(percentile))));
    }
  }
  if (stats.failed > 0) {
    out.append(Centered("Errors by Class", '-')).append("\n");
    for (int i = 1; i < common::kErrorClassCount; ++i) {
      if (stats.errors_by_class[i] > 0) {
        Row(out, std::string(common::ErrorClassName(static_cast<common::ErrorClass>(i))) + ":",
            std::to_string(stats.errors_by_class[i]));
      }
    }
  }
  const ClientFidelity& fidelity = report.fidelity;
  out.append(Centered("Client Fidelity", '-')).append("\n");
  Row(out, "Client fidelity:",
      fidelity.client_limited ? "client_limited: " + fidelity.reason : std::string("ok"));
  Row(out, "Schedule lag P50 (ms):", Fixed2(fidelity.schedule_lag_p50_ms));
  Row(out, "Schedule lag P99 (ms):", Fixed2(fidelity.schedule_lag_p99_ms));
  Row(out, "Dropped arrivals:", std::to_string(fidelity.dropped_arrivals));
  Row(out, "Engine-limited arrivals:", std::to_string(fidelity.engine_limited_arrivals));
  Row(out, "Agent CPU (% of worker threads):", Fixed2(fidelity.agent_cpu * 100));
  if (report.interrupted) {
    out.append("Interrupted: the run was stopped early (Ctrl-C); these are partial results.\n");
  }
  if (report.agents.size() > 1 || (report.agents.size() == 1 && report.agents[0].lost)) {
    out.append(Centered("Agents", '-')).append("\n");
    for (const AgentSummary& agent : report.agents) {
      Row(out, agent.name + " (" + agent.address + "):",
          agent.lost ? "LOST after " + std::to_string(agent.completed + agent.failed) +
                           " requests: " + agent.failure
                     : std::to_string(agent.completed) + " ok, " + std::to_string(agent.failed) +
                           " failed");
    }
  }
  for (const std::string& problem : report.problems) {
    out.append("problem: ").append(problem).append("\n");
  }
  out.append(std::string(kSummaryWidth, '=')).append("\n");
  return out;
}

}  // namespace barrage::coordinator
