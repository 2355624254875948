#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace barrage::common {

// Reads the shared secret of coordinator and agents from a file: its whole content without the
// trailing line break(s). @return InvalidArgument ("cannot read 'F'", "'F' is empty"); the
// caller prefixes its flag.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

}  // namespace barrage::common
