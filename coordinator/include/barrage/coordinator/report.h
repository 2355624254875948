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

// One agent's part of a run, for the result's `agents` list.
struct AgentSummary {
  std::string name;
  std::string address;     // "in-process" for the local agent
  uint64_t completed = 0;  // its successful requests
  uint64_t failed = 0;
  bool lost = false;              // stopped answering mid-run; its share was not (fully) delivered
  std::string failure;            // what it said or what happened, when it did not finish
  double clock_offset_ms = 0;     // its monotonic clock minus the coordinator's
  double round_trip_ms = 0;       // of the ping the offset was measured with
  common::Nanos start_at_ns = 0;  // the start instant sent to it, in its clock
  double first_send_ms = 0;       // its first measured send, from the measurement start
};

// A finished (or interrupted) run, ready to be reported.
struct RunReport {
  const RunOptions* options = nullptr;
  RunStats stats;
  ClientFidelity fidelity;
  common::Nanos wall_start = 0;       // realtime at measurement start, for "date"
  bool interrupted = false;           // Ctrl-C
  std::vector<std::string> problems;  // reconciliation mismatches and other faults, never hidden
  std::vector<AgentSummary> agents;
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
