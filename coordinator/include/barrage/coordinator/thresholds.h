#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace barrage::coordinator {

// A pass/fail condition on one numeric key of the result JSON, e.g. "p99_e2el_ms<250" or
// "error_rate<0.01". Operators: <, <=, >, >=, ==, !=.
struct Threshold {
  enum class Op { kLess, kLessEqual, kGreater, kGreaterEqual, kEqual, kNotEqual };
  std::string text;    // as given, for messages
  std::string metric;  // a key of the result JSON
  Op op = Op::kLess;
  double value = 0;
};

// Parses one --threshold expression. The metric must be a key the result will have for these
// percentiles (a pNN key whose NN is not among them is refused with the fix: add it to
// --percentiles).
// @return InvalidArgument naming --threshold and what is wrong.
absl::StatusOr<Threshold> ParseThreshold(std::string_view text,
                                         const std::vector<double>& percentiles);

struct ThresholdOutcome {
  const Threshold* threshold = nullptr;
  double actual = 0;
  bool passed = false;
};

// Evaluates every threshold against a finished result.
std::vector<ThresholdOutcome> EvaluateThresholds(const std::vector<Threshold>& thresholds,
                                                 const nlohmann::json& result);

}  // namespace barrage::coordinator
