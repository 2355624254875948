#pragma once

#include <map>
#include <string>

#include "barrage/common/test_plan.h"
#include "barrage/coordinator/report.h"
#include "barrage/coordinator/run_merger.h"

namespace barrage::coordinator {

// Above this schedule-lag p99 an open-loop run is marked client-limited.
inline constexpr double kMaxScheduleLagP99Ms = 1.0;
// Above this share of a worker thread's wall time spent on CPU the client is the bottleneck.
inline constexpr double kMaxAgentCpu = 0.9;

// Judges from the agents' Finished messages whether the client kept the schedule: schedule lag,
// arrivals dropped or held back by the engine's own limit, worker CPU. Sets client_limited with
// every reason that applies.
ClientFidelity AssessFidelity(const std::map<std::string, AgentProgress>& agents,
                              const common::LoadSpec& load);

}  // namespace barrage::coordinator
