#include "barrage/common/token_file.h"

#include <fstream>
#include <iterator>

namespace barrage::common {

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream file(path);
  if (!file) {
    return absl::InvalidArgumentError("cannot read '" + path + "'");
  }
  std::string token((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) {
    token.pop_back();
  }
  if (token.empty()) {
    return absl::InvalidArgumentError("'" + path + "' is empty");
  }
  return token;
}

}  // namespace barrage::common
