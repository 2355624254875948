#include "barrage/common/url.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>

namespace barrage::common {
namespace {

constexpr size_t kMaxHostName = 253;
constexpr size_t kMaxLabel = 63;

// The message echoes the URL; control characters in it are escaped so it stays one line.
absl::Status Malformed(std::string_view text, std::string_view why) {
  std::string echo;
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      echo += escaped;
    } else {
      echo += static_cast<char>(c);
    }
  }
  return absl::InvalidArgumentError("'" + echo + "' is not a valid URL: " + std::string(why));
}

bool IsLabelChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
}

// Checks a host name or IPv4 address (not bracketed). @return "" when fine, else what is wrong.
std::string HostProblem(const std::string& host) {
  if (host.empty()) return "empty host";
  if (host.find_first_not_of("0123456789.") == std::string::npos &&
      host.find_first_of("0123456789") != std::string::npos) {
    in_addr address{};
    if (inet_pton(AF_INET, host.c_str(), &address) != 1) {
      return "bad IPv4 address '" + host + "'";
    }
    return "";
  }
  for (char c : host) {
    if (!IsLabelChar(c) && c != '.') return "bad character in host '" + host + "'";
  }
  // One trailing dot is the DNS root and legal; any other empty label is not.
  std::string_view name = host;
  if (name.size() > 1 && name.back() == '.') name.remove_suffix(1);
  if (name.size() > kMaxHostName) return "host name longer than 253 characters";
  size_t begin = 0;
  while (begin <= name.size()) {
    const size_t end = std::min(name.find('.', begin), name.size());
    const std::string_view label = name.substr(begin, end - begin);
    if (label.empty()) return "empty label in host '" + host + "'";
    if (label.size() > kMaxLabel) return "label longer than 63 characters in host '" + host + "'";
    if (label.front() == '-' || label.back() == '-') {
      return "host label starts or ends with '-' in '" + host + "'";
    }
    begin = end + 1;
  }
  return "";
}

}  // namespace

absl::StatusOr<Url> ParseUrl(std::string_view text) {
  Url url;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)) ||
        std::iscntrl(static_cast<unsigned char>(c))) {
      return Malformed(text, "contains a space or control character");
    }
  }
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
  // The fragment never goes on the wire.
  rest = rest.substr(0, rest.find('#'));
  const size_t target_at = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, target_at);
  url.target = target_at == std::string_view::npos ? "/" : std::string(rest.substr(target_at));
  if (url.target.front() != '/') url.target.insert(0, "/");
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority.remove_prefix(at + 1);  // user:password@ is curl's business
  }
  std::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return Malformed(text, "unclosed '[' in IPv6 host");
    url.host = std::string(authority.substr(1, close - 1));
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Malformed(text, "unexpected text after the IPv6 host");
      port_text = after.substr(1);
      has_port = true;
    }
    if (url.host.empty()) return Malformed(text, "empty host");
    in6_addr address{};
    if (inet_pton(AF_INET6, url.host.c_str(), &address) != 1) {
      return Malformed(text, "bad IPv6 address '" + url.host + "'");
    }
  } else {
    const size_t colon = authority.find(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      has_port = true;
    }
    if (const std::string problem = HostProblem(url.host); !problem.empty()) {
      return Malformed(text, problem);
    }
  }
  if (!has_port) {
    url.port = url.scheme == "https" ? 443 : 80;
    return url;
  }
  unsigned port = 0;
  const auto parsed = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || parsed.ec != std::errc() ||
      parsed.ptr != port_text.data() + port_text.size() || port == 0 || port > 65535) {
    return Malformed(text, "bad port '" + std::string(port_text) + "' (write a number 1-65535)");
  }
  url.port = static_cast<uint16_t>(port);
  return url;
}

}  // namespace barrage::common
