#pragma once

#include <atomic>
#include <string>

#include "barrage/v1/agent.grpc.pb.h"

namespace barrage::agent {

// What an agent process is: its name, and the shared secret every call must carry ("" when the
// agent was started without one, on loopback or with --insecure).
struct AgentIdentity {
  std::string name;
  std::string version;
  std::string token;
  uint32_t protocol_version = 1;  // common::kProtocolVersion; other values only in tests
};

// The metadata key that carries the shared secret on every call.
inline constexpr char kTokenMetadataKey[] = "x-barrage-token";

// The barrage.v1.Agent gRPC service on the callback API. Runs one test at a time: a Run that
// sends Start while another test runs is refused as busy. Each Run stream is the lease for its
// test: when the stream breaks, or no coordinator message arrives within the lease timeout, the
// test stops sending at once and its in-flight requests are cancelled.
class AgentService final : public v1::Agent::CallbackService {
 public:
  explicit AgentService(AgentIdentity identity);

  grpc::ServerUnaryReactor* Hello(grpc::CallbackServerContext* context,
                                  const v1::HelloRequest* request, v1::AgentInfo* info) override;
  grpc::ServerBidiReactor<v1::CoordinatorMessage, v1::AgentMessage>* Run(
      grpc::CallbackServerContext* context) override;

  // For the run reactors: claim and release the one test slot.
  bool TryClaim() { return !busy_.exchange(true); }
  void Release() { busy_.store(false); }
  const AgentIdentity& identity() const { return identity_; }

 private:
  // Whether the call carries the token (compared in constant time).
  bool Authorized(const grpc::CallbackServerContext& context) const;

  const AgentIdentity identity_;
  std::atomic<bool> busy_{false};
};

}  // namespace barrage::agent
