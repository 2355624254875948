#pragma once

#include <memory>
#include <string>

#include "barrage/common/agent_session.h"

namespace barrage::agent {

// The in-process agent: runs the share on `plan.load.threads` HttpWorker threads and a collector
// thread that drains their records every ~100 ms, encodes them as RecordBatch (the wire form) and
// hands them, with heartbeats and the final Finished message, to the sink. The coordinator cannot
// tell it from a remote agent.
common::AgentSessionPtr MakeLocalAgentSession(std::string name);

}  // namespace barrage::agent
