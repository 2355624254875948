#pragma once

#include <string>
#include <vector>

#include "barrage/common/test_plan.h"
#include "barrage/coordinator/thresholds.h"

namespace barrage::coordinator {

// Everything `barrage run` was asked to do: the plan for the agents plus what the coordinator
// reports and writes.
struct RunOptions {
  common::TestPlan plan;
  std::vector<double> percentiles = {50, 90, 95, 99};  // sorted, unique, each in (0, 100)
  std::string save_result;                             // result JSON path, "" for none
  std::string save_records;                            // records path (.jsonl or .csv), "" for none
  std::vector<Threshold> thresholds;
  bool quiet = false;  // no progress lines, summary still printed
  // Remote agents ("host:port" each); empty: the in-process agent.
  std::vector<std::string> agents;
  std::vector<uint32_t> agent_weights;  // one per agent; empty: equal
  std::string agent_token;  // shared secret for the agents, "" for none
  common::Nanos lease_timeout = 5 * common::kNanosPerSecond;
  bool allow_partial = false;  // a run that lost agents still exits 0
  // The command line as given (without secrets), for the result's config echo.
  std::vector<std::string> argv;
};

}  // namespace barrage::coordinator
