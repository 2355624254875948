#include "barrage/common/url.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace barrage::common {
namespace {

absl::Status Malformed(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError("'" + std::string(text) +
                                    "' is not a valid URL: " + std::string(why));
}

bool IsHostChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

}  // namespace

absl::StatusOr<Url> ParseUrl(std::string_view text) {
  Url url;
  const size_t separator = text.find("://");
  if (separator == std::string_view::npos || separator == 0) {
    return Malformed(text, "missing scheme (write http://host:port/path)");
  }
  url.scheme = std::string(text.substr(0, separator));
  std::transform(url.scheme.begin(), url.scheme.end(), url.scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (url.scheme != "http" && url.scheme != "https") {
    return Malformed(text, "unsupported scheme '" + url.scheme + "' (use http or https)");
  }
  std::string_view rest = text.substr(separator + 3);
  const size_t target_at = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, target_at);
  url.target = target_at == std::string_view::npos ? "/" : std::string(rest.substr(target_at));
  if (url.target.front() != '/') url.target.insert(0, "/");
  for (char c : rest) {
    if (std::isspace(static_cast<unsigned char>(c)) ||
        std::iscntrl(static_cast<unsigned char>(c))) {
      return Malformed(text, "contains a space or control character");
    }
  }
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority.remove_prefix(at + 1);  // user:password@ is curl's business
  }
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return Malformed(text, "unclosed '[' in IPv6 host");
    url.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Malformed(text, "unexpected text after the IPv6 host");
      port_text = after.substr(1);
      if (port_text.empty()) return Malformed(text, "empty port");
    }
    if (url.host.empty() ||
        url.host.find_first_not_of("0123456789abcdefABCDEF:.") != std::string::npos) {
      return Malformed(text, "bad IPv6 address");
    }
  } else {
    const size_t colon = authority.find(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) return Malformed(text, "empty port");
    }
    if (url.host.empty()) return Malformed(text, "empty host");
    if (!std::all_of(url.host.begin(), url.host.end(), IsHostChar)) {
      return Malformed(text, "bad character in host '" + url.host + "'");
    }
  }
  if (url.host.empty()) return Malformed(text, "empty host");
  if (port_text.empty()) {
    url.port = url.scheme == "https" ? 443 : 80;
  } else {
    unsigned port = 0;
    const auto parsed =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (parsed.ec != std::errc() || parsed.ptr != port_text.data() + port_text.size() ||
        port == 0 || port > 65535) {
      return Malformed(text, "bad port '" + std::string(port_text) + "' (1-65535)");
    }
    url.port = static_cast<uint16_t>(port);
  }
  return url;
}

}  // namespace barrage::common
