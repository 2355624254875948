#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace barrage::common {

// The parts of an http:// or https:// URL that barrage checks before sending anything.
struct Url {
  std::string scheme;  // "http" or "https", lowercase
  std::string host;    // a name, an IPv4 address, or an IPv6 address without brackets
  uint16_t port = 0;   // explicit, or the scheme's default
  std::string target;  // path and query, "/" when empty
};

// Parses and checks a target URL.
// @return InvalidArgument saying what is wrong ("missing scheme", "bad port", ...).
absl::StatusOr<Url> ParseUrl(std::string_view text);

}  // namespace barrage::common
