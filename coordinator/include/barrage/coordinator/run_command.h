#pragma once

#include <ostream>

#include "barrage/coordinator/run_options.h"

namespace barrage::coordinator {

// Runs a parsed `barrage run`: starts the agents (the in-process one for now), merges what they
// stream, shows progress, prints the summary, writes the outputs, checks thresholds.
// @return the process exit code: 0 ok, 2 the run failed, 99 a threshold was crossed.
int RunCommand(const RunOptions& options, std::ostream& out, std::ostream& err);

// Exit codes (DESIGN.md section 9).
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 1;
inline constexpr int kExitRunFailed = 2;
inline constexpr int kExitThresholdCrossed = 99;

}  // namespace barrage::coordinator
