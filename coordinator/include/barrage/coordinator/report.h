#pragma once

#include <string>
#include <vector>

#include "barrage/coordinator/run_options.h"
#include "barrage/coordinator/run_stats.h"
#include "nlohmann/json.hpp"

namespace barrage::coordinator {

// Whether the client kept the schedule (DESIGN.md section 7, "client fidelity").
struct ClientFidelity {
  double schedule_lag_p50_ms = 0;  // timer lateness of arrivals dispatched on time
  double schedule_lag_p99_ms = 0;
  uint64_t dropped_arrivals = 0;         // scheduled inside the run, never sent
  uint64_t engine_limited_arrivals = 0;  // waited for the engine's own in-flight limit
  double agent_cpu = 0;                  // worker CPU time / (wall time x threads), 0..1
  bool client_limited = false;
  std::string reason;  // why, when client_limited
};

// A finished (or interrupted) run, ready to be reported.
struct RunReport {
  const RunOptions* options = nullptr;
  RunStats stats;
  ClientFidelity fidelity;
  common::Nanos wall_start = 0;       // realtime at measurement start, for "date"
  bool interrupted = false;           // Ctrl-C
  std::vector<std::string> problems;  // reconciliation mismatches and other faults, never hidden
  std::string version;
};

// A percentile as vLLM spells it in result keys: 50 -> "50", 99.9 -> "99.9".
std::string PercentileWord(double percentile);

// The --save-result document: vLLM's keys (completed, failed, duration, request_throughput,
// mean_/median_/std_/pNN_<metric>_ms ...) plus ours (errors_by_class, achieved_rate,
// target_rate, client_limited, per_second, version, config ...). docs/results.md lists them.
nlohmann::json BuildResultJson(const RunReport& report);

// The final summary in vLLM's "Serving Benchmark Result" layout, adapted to HTTP.
std::string FormatSummary(const RunReport& report);

}  // namespace barrage::coordinator
