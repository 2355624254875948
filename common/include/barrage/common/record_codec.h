#pragma once

#include <span>
#include <vector>

#include "absl/status/status.h"
#include "barrage/common/record.h"

namespace barrage::v1 {
class RecordBatch;
}

namespace barrage::common {

// Encodes records into the columnar wire form (proto/barrage/v1/agent.proto, RecordBatch).
// Clears `out` first; reuses its capacity, so a batch reused across calls allocates nothing once
// warmed up.
void EncodeRecordBatch(std::span<const RequestRecord> records, v1::RecordBatch* out);

// Decodes a batch, appending to `out`.
// @return InvalidArgument when the columns have different lengths or values are out of range.
absl::Status DecodeRecordBatch(const v1::RecordBatch& batch, std::vector<RequestRecord>* out);

}  // namespace barrage::common
