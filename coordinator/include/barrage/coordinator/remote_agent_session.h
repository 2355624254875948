#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "barrage/common/agent_session.h"

namespace barrage::coordinator {

// How the coordinator reaches and watches a remote agent.
struct RemoteAgentOptions {
  std::string address;  // "host:port" as gRPC dials it
  std::string token;    // shared secret, "" for none
  common::Nanos connect_timeout = 5 * common::kNanosPerSecond;
  // The agent stops on its own when it hears nothing from us for this long.
  common::Nanos lease_timeout = 5 * common::kNanosPerSecond;
  // We mark the agent lost when we hear nothing from it for this long during a run.
  common::Nanos heartbeat_timeout = 3 * common::kNanosPerSecond;
};

// A test share run by a barrage-agent over gRPC: the coordinator's end of the Agent service.
// Life cycle: Connect (Hello, version check, Run stream, clock offset from pings), then the
// AgentSession calls Start, Stop, Wait. Everything the agent streams goes to the sink as it
// arrives, on gRPC's threads.
class RemoteAgentSession : public common::AgentSession {
 public:
  explicit RemoteAgentSession(RemoteAgentOptions options);
  ~RemoteAgentSession() override;

  // Says hello, checks the protocol version and that the agent is free, opens the Run stream and
  // measures the clock offset (several pings; the one with the smallest round trip wins).
  // @return Unavailable (unreachable), FailedPrecondition (version, busy), Unauthenticated.
  absl::Status Connect();

  // The agent's monotonic clock minus ours, and the round trip it was measured with.
  common::Nanos clock_offset() const;
  common::Nanos round_trip() const;
  const std::string& address() const;
  // True when the agent was lost during the run (no word for the heartbeat timeout, or the
  // stream broke before Finished).
  bool lost() const;

  const std::string& name() const override;
  // @param start_at in this process's monotonic clock; sent translated into the agent's.
  absl::Status Start(const common::AgentShare& share, common::Nanos start_at,
                     common::AgentMessageSink* sink) override;
  void Stop(common::Nanos grace) override;
  absl::Status Wait() override;

 private:
  class Stream;
  struct Connection;
  RemoteAgentOptions options_;
  std::string name_;
  std::unique_ptr<Connection> connection_;  // channel and stub: outlive the stream
  std::unique_ptr<Stream> stream_;
};

}  // namespace barrage::coordinator
