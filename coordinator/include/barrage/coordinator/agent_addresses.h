#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace barrage::coordinator {

// One agent to dial: a host name or IP address and a port.
struct AgentAddress {
  std::string host;  // as given or resolved; an IPv6 address without brackets
  uint16_t port = 0;
  std::string text;  // "host:port" as gRPC dials it, an IPv6 address in brackets: "[::1]:7070"
};

// Parses the value of --agents. Accepted forms:
//  - a comma list: "h1:7070,10.0.0.2:7070,[::1]:7070" (the port is required, 1..65535);
//  - "@FILE": one address per line; blank lines and '#' comments are ignored;
//  - "dns:///NAME:PORT": every A and AAAA record of NAME is an agent (a Kubernetes headless
//    Service), sorted (IPv4 first, then by address) so that every run numbers the agents alike.
// List items and file lines may themselves be "dns:///NAME:PORT". The same agent twice is an
// error. Names under ".invalid" never resolve (RFC 6761) and are refused without a DNS query.
// @return the agents in order; InvalidArgument whose one-line message starts with "--agents: ",
//     says what is wrong and how to fix it.
absl::StatusOr<std::vector<AgentAddress>> ParseAgents(std::string_view flag_value);

// Parses --agent-weights: "1,2,1", one integer >= 1 per agent, in the order of --agents. An
// empty value means equal weights.
// @return the weights; InvalidArgument whose one-line message starts with "--agent-weights: ".
absl::StatusOr<std::vector<uint32_t>> ParseAgentWeights(std::string_view value, size_t agent_count);

}  // namespace barrage::coordinator
