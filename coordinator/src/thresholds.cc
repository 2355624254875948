#include "barrage/coordinator/thresholds.h"

#include <charconv>
#include <cmath>
#include <string>

#include "barrage/coordinator/report.h"
#include "barrage/coordinator/run_stats.h"

namespace barrage::coordinator {
namespace {

// Result keys that are plain numbers, besides the per-metric latency keys.
constexpr std::string_view kScalarKeys[] = {
    "completed",           "failed",           "total_requests",          "duration",
    "request_throughput",  "error_rate",       "achieved_rate",           "schedule_lag_p50_ms",
    "schedule_lag_p99_ms", "dropped_arrivals", "engine_limited_arrivals", "agent_cpu",
    "total_bytes_in",      "total_bytes_out"};

absl::Status Invalid(std::string_view text, const std::string& why) {
  return absl::InvalidArgumentError("--threshold: '" + std::string(text) + "': " + why);
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

// Whether `metric` is a key the result will hold. On a pNN key whose NN was not requested, says
// so in `why`.
bool IsResultKey(std::string_view metric, const std::vector<double>& percentiles,
                 std::string* why) {
  for (std::string_view key : kScalarKeys) {
    if (metric == key) return true;
  }
  if (metric.size() < 4 || metric.substr(metric.size() - 3) != "_ms") return false;
  const size_t underscore = metric.find('_');
  if (underscore == std::string_view::npos) return false;
  const std::string_view statistic = metric.substr(0, underscore);
  const std::string_view name = metric.substr(underscore + 1, metric.size() - underscore - 4);
  bool known_metric = false;
  for (int i = 0; i < kLatencyMetricCount; ++i) {
    known_metric = known_metric || name == LatencyMetricKey(static_cast<LatencyMetric>(i));
  }
  if (!known_metric) return false;
  if (statistic == "mean" || statistic == "median" || statistic == "std") return true;
  if (statistic.size() < 2 || statistic[0] != 'p') return false;
  const std::string_view digits = statistic.substr(1);
  for (double percentile : percentiles) {
    if (digits == PercentileWord(percentile)) return true;
  }
  double asked = 0;
  const auto parsed = std::from_chars(digits.data(), digits.data() + digits.size(), asked);
  if (parsed.ec != std::errc() || parsed.ptr != digits.data() + digits.size()) return false;
  if (!(asked > 0 && asked < 100)) {
    *why = "percentile " + std::string(digits) + " is outside (0, 100)";
    return false;
  }
  for (double percentile : percentiles) {
    if (asked == percentile) {
      // Same number, other spelling (p50.0): the result key is spelled as vLLM does.
      *why = "the result spells this key p" + PercentileWord(percentile) + "_" + std::string(name) +
             "_ms";
      return false;
    }
  }
  *why = "the result has no " + std::string(statistic) +
         " key because that percentile was not requested; add " + std::string(statistic.substr(1)) +
         " to --percentiles";
  return false;
}

}  // namespace

absl::StatusOr<Threshold> ParseThreshold(std::string_view text,
                                         const std::vector<double>& percentiles) {
  struct Operator {
    std::string_view symbol;
    Threshold::Op op;
  };
  // Two-character operators first, so "<=" is not read as "<".
  constexpr Operator kOperators[] = {
      {"<=", Threshold::Op::kLessEqual}, {">=", Threshold::Op::kGreaterEqual},
      {"==", Threshold::Op::kEqual},     {"!=", Threshold::Op::kNotEqual},
      {"<", Threshold::Op::kLess},       {">", Threshold::Op::kGreater}};
  size_t at = std::string_view::npos;
  const Operator* found = nullptr;
  for (const Operator& candidate : kOperators) {
    const size_t position = text.find(candidate.symbol);
    if (position != std::string_view::npos && (at == std::string_view::npos || position < at)) {
      at = position;
      found = &candidate;
    }
  }
  if (found == nullptr) {
    return Invalid(text,
                   "no comparison; write it like p99_e2el_ms<250 (operators: < <= > >= == !=)");
  }
  Threshold threshold;
  threshold.text = std::string(text);
  threshold.op = found->op;
  threshold.metric = std::string(Trim(text.substr(0, at)));
  const std::string_view number = Trim(text.substr(at + found->symbol.size()));
  if (threshold.metric.empty()) {
    return Invalid(text, "no metric before the comparison");
  }
  const auto parsed =
      std::from_chars(number.data(), number.data() + number.size(), threshold.value);
  if (number.empty() || parsed.ec != std::errc() || parsed.ptr != number.data() + number.size() ||
      !std::isfinite(threshold.value)) {
    return Invalid(text, "'" + std::string(number) + "' is not a number");
  }
  std::string why;
  if (!IsResultKey(threshold.metric, percentiles, &why)) {
    if (why.empty()) {
      why = "unknown metric '" + threshold.metric +
            "'; use a result key such as p99_e2el_ms, mean_ttfb_ms, error_rate, "
            "request_throughput (docs/results.md lists them)";
    }
    return Invalid(text, why);
  }
  return threshold;
}

std::vector<ThresholdOutcome> EvaluateThresholds(const std::vector<Threshold>& thresholds,
                                                 const nlohmann::json& result) {
  std::vector<ThresholdOutcome> outcomes;
  for (const Threshold& threshold : thresholds) {
    ThresholdOutcome outcome;
    outcome.threshold = &threshold;
    const auto value = result.find(threshold.metric);
    if (value == result.end() || !value->is_number()) {
      outcome.actual = std::nan("");
      outcomes.push_back(outcome);
      continue;
    }
    const double actual = value->get<double>();
    outcome.actual = actual;
    switch (threshold.op) {
      case Threshold::Op::kLess:
        outcome.passed = actual < threshold.value;
        break;
      case Threshold::Op::kLessEqual:
        outcome.passed = actual <= threshold.value;
        break;
      case Threshold::Op::kGreater:
        outcome.passed = actual > threshold.value;
        break;
      case Threshold::Op::kGreaterEqual:
        outcome.passed = actual >= threshold.value;
        break;
      case Threshold::Op::kEqual:
        outcome.passed = actual == threshold.value;
        break;
      case Threshold::Op::kNotEqual:
        outcome.passed = actual != threshold.value;
        break;
    }
    outcomes.push_back(outcome);
  }
  return outcomes;
}

}  // namespace barrage::coordinator
