#pragma once

#include "absl/status/statusor.h"
#include "barrage/common/test_plan.h"

namespace barrage::v1 {
class Share;
}

namespace barrage::common {

// The protocol version this build speaks (barrage.v1.ProtocolVersion). A coordinator and an agent
// of different versions refuse each other.
inline constexpr uint32_t kProtocolVersion = 1;

// An agent's share in wire form (v1::Share) and back. Decoding validates the plan, so an agent
// never runs what a coordinator could not have sent.
void EncodeShare(const AgentShare& share, v1::Share* out);
absl::StatusOr<AgentShare> DecodeShare(const v1::Share& in);

}  // namespace barrage::common
