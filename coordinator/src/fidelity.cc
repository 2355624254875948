#include "barrage/coordinator/fidelity.h"

#include <cstdio>

#include "barrage/common/histogram.h"

namespace barrage::coordinator {
namespace {

std::string Format(const char* format, double value) {
  char buffer[160];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

void AddReason(ClientFidelity& fidelity, const std::string& reason) {
  fidelity.client_limited = true;
  if (!fidelity.reason.empty()) fidelity.reason += "; ";
  fidelity.reason += reason;
}

}  // namespace

ClientFidelity AssessFidelity(const std::map<std::string, AgentProgress>& agents,
                              const common::LoadSpec& load) {
  ClientFidelity fidelity;
  common::LatencyHistogram schedule_lag;
  uint64_t cpu_ns = 0;
  uint64_t wall_ns = 0;
  for (const auto& [name, agent] : agents) {
    if (!agent.finished) continue;
    const v1::Finished& finished = agent.finished_message;
    // Same layout on both sides of the seam; a mismatch would be reported by the merger.
    (void)schedule_lag.MergeProto(finished.schedule_lag());
    fidelity.dropped_arrivals += finished.totals().dropped_arrivals();
    fidelity.engine_limited_arrivals += finished.totals().engine_limited_arrivals();
    cpu_ns += finished.totals().cpu_ns();
    wall_ns += finished.totals().wall_ns();
  }
  constexpr double kNanosPerMs = 1e6;
  fidelity.schedule_lag_p50_ms = schedule_lag.ValueAtPercentile(50) / kNanosPerMs;
  fidelity.schedule_lag_p99_ms = schedule_lag.ValueAtPercentile(99) / kNanosPerMs;
  fidelity.agent_cpu = wall_ns > 0 ? static_cast<double>(cpu_ns) / wall_ns : 0;

  if (load.open_loop() && fidelity.schedule_lag_p99_ms > kMaxScheduleLagP99Ms) {
    AddReason(fidelity, Format("schedule lag p99 %.2f ms: the client sent late",
                               fidelity.schedule_lag_p99_ms));
  }
  if (fidelity.engine_limited_arrivals > 0) {
    AddReason(fidelity,
              std::to_string(fidelity.engine_limited_arrivals) +
                  " arrivals waited for the engine's in-flight limit; add --threads or agents");
  }
  if (fidelity.agent_cpu > kMaxAgentCpu) {
    AddReason(fidelity, Format("agent worker threads were %.0f%% busy: the client may be the "
                               "bottleneck, not the target",
                               fidelity.agent_cpu * 100));
  }
  return fidelity;
}

}  // namespace barrage::coordinator
