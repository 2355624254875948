#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "barrage/common/test_plan.h"
#include "barrage/common/time.h"

namespace barrage::v1 {
class AgentMessage;
}

namespace barrage::common {

// Receives what an agent streams: record batches, heartbeats, and at the end Finished or Failure.
// Called from the session's own thread; implementations must be safe to call from several
// sessions' threads at once. Calls are per batch (about every 100 ms), never per request.
class AgentMessageSink {
 public:
  virtual ~AgentMessageSink() = default;
  virtual void OnMessage(const std::string& agent_name, const v1::AgentMessage& message) = 0;
};

// The coordinator's view of one agent running one test: the in-process agent implements it now,
// a gRPC client to a remote agent later. Life cycle: Start, then optionally Stop, then Wait.
class AgentSession {
 public:
  virtual ~AgentSession() = default;

  virtual const std::string& name() const = 0;

  // Starts the share. Measurement starts at `start_at` (monotonic, this process's clock) plus the
  // plan's warm-up; load starts at `start_at`.
  // @param sink receives every message until Wait returns; must outlive the session's run.
  // @return an error when the share cannot be started; then nothing was sent.
  virtual absl::Status Start(const AgentShare& share, Nanos start_at, AgentMessageSink* sink) = 0;

  // Stops issuing requests; requests in flight get `grace` to finish, then are cancelled.
  // Safe to call from any thread, more than once, and before or after the run ends by itself.
  virtual void Stop(Nanos grace) = 0;

  // Blocks until the agent has delivered Finished (or Failure) to the sink.
  // @return the failure, if any.
  virtual absl::Status Wait() = 0;
};
using AgentSessionPtr = std::unique_ptr<AgentSession>;

}  // namespace barrage::common
