#include "barrage/coordinator/agent_addresses.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <utility>

#include "barrage/common/weighted_slices.h"

namespace barrage::coordinator {
namespace {

constexpr std::string_view kDnsPrefix = "dns:///";
constexpr std::string_view kForms = "host:port[,host:port...], @FILE or dns:///NAME:PORT";

absl::Status AgentsError(std::string_view where, const std::string& message) {
  return absl::InvalidArgumentError("--agents: " + std::string(where) + message);
}

std::string_view Trim(std::string_view text) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && is_space(text.front())) {
    text.remove_prefix(1);
  }
  while (!text.empty() && is_space(text.back())) {
    text.remove_suffix(1);
  }
  return text;
}

std::vector<std::string_view> SplitCommas(std::string_view text) {
  std::vector<std::string_view> parts;
  while (true) {
    const size_t comma = text.find(',');
    parts.push_back(Trim(text.substr(0, comma)));
    if (comma == std::string_view::npos) {
      return parts;
    }
    text.remove_prefix(comma + 1);
  }
}

// Host names are case-insensitive, so duplicates are found on the lower-case form.
std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return lower;
}

std::string DialText(const std::string& host, uint16_t port) {
  const bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

bool IsHostNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
}

// Splits "host:port" or "[v6]:port", validating both parts; `where` prefixes errors.
absl::StatusOr<AgentAddress> ParseHostPort(std::string_view item, std::string_view where) {
  const std::string quoted = "'" + std::string(item) + "'";
  std::string host;
  std::string_view port_text;
  if (!item.empty() && item.front() == '[') {
    const size_t close = item.find(']');
    if (close == std::string_view::npos) {
      return AgentsError(where, quoted + " has no closing ']'; write IPv6 agents as [::1]:7070");
    }
    const std::string literal(item.substr(1, close - 1));
    in6_addr address{};
    if (inet_pton(AF_INET6, literal.c_str(), &address) != 1) {
      return AgentsError(where, "'" + literal + "' in " + quoted +
                                    " is not an IPv6 address; write IPv6 agents as [::1]:7070");
    }
    std::array<char, INET6_ADDRSTRLEN> canonical{};
    inet_ntop(AF_INET6, &address, canonical.data(), canonical.size());
    host = canonical.data();
    const std::string_view rest = item.substr(close + 1);
    if (rest.empty()) {
      return AgentsError(where, quoted + " has no port; write it as " + std::string(item) +
                                    ":7070");
    }
    if (rest.front() != ':') {
      return AgentsError(where, quoted + " has '" + std::string(rest) +
                                    "' after ']'; write IPv6 agents as [::1]:7070");
    }
    port_text = rest.substr(1);
  } else {
    const size_t colon = item.rfind(':');
    if (colon == std::string_view::npos) {
      return AgentsError(where, quoted + " has no port; write it as " + std::string(item) +
                                    ":7070");
    }
    const std::string_view host_text = item.substr(0, colon);
    if (host_text.find(':') != std::string_view::npos) {
      return AgentsError(where, quoted + " looks like an IPv6 address without brackets; write it"
                                         " as [" + std::string(host_text) + "]:" +
                                    std::string(item.substr(colon + 1)));
    }
    if (host_text.empty()) {
      return AgentsError(where, quoted + " has no host; write it as host:port, e.g. 10.0.0.2:7070");
    }
    if (!std::all_of(host_text.begin(), host_text.end(), IsHostNameChar)) {
      return AgentsError(where, quoted + " has an invalid host '" + std::string(host_text) +
                                    "'; use a host name or an IP address (" +
                                    std::string(kForms) + ")");
    }
    host = Lower(host_text);
    port_text = item.substr(colon + 1);
  }
  uint32_t port = 0;
  const auto [end, error] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty()) {
    return AgentsError(where, quoted + " has an empty port; write it as host:7070");
  }
  if (error != std::errc() || end != port_text.data() + port_text.size() || port == 0 ||
      port > 65535) {
    return AgentsError(where, "port '" + std::string(port_text) + "' in " + quoted +
                                  " is not in 1..65535; use the port barrage-agent listens on"
                                  " (--listen, default 7070)");
  }
  AgentAddress address;
  address.host = std::move(host);
  address.port = static_cast<uint16_t>(port);
  address.text = DialText(address.host, address.port);
  return address;
}

// Every A and AAAA record of "dns:///NAME:PORT", IPv4 first, each family in address order.
absl::StatusOr<std::vector<AgentAddress>> Resolve(std::string_view item, std::string_view where) {
  const std::string quoted = "'" + std::string(item) + "'";
  const std::string_view target = item.substr(kDnsPrefix.size());
  absl::StatusOr<AgentAddress> name_port = ParseHostPort(target, where);
  if (!name_port.ok()) {
    return name_port.status();
  }
  const std::string& name = name_port->host;
  const std::string no_records = quoted + " has no A or AAAA records";
  const std::string fix = "; check the name, or list the agents as host:port";
  // RFC 6761: ".invalid" never resolves; answering here also keeps tests off the network.
  const std::string_view kInvalid = ".invalid";
  if (name == "invalid" || (name.size() > kInvalid.size() &&
                            name.compare(name.size() - kInvalid.size(), kInvalid.size(),
                                         kInvalid) == 0)) {
    return AgentsError(where, no_records + " (.invalid names never resolve)" + fix);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* results = nullptr;
  const int status = getaddrinfo(name.c_str(), nullptr, &hints, &results);
  if (status != 0) {
    const std::string reason = status == EAI_SYSTEM ? std::strerror(errno) : gai_strerror(status);
    return AgentsError(where, no_records + " (" + reason + ")" + fix);
  }
  // (family, address bytes): sorts IPv4 before IPv6 and each family numerically.
  std::set<std::pair<int, std::string>> addresses;
  for (const addrinfo* entry = results; entry != nullptr; entry = entry->ai_next) {
    if (entry->ai_family == AF_INET) {
      const auto* v4 = reinterpret_cast<const sockaddr_in*>(entry->ai_addr);
      addresses.emplace(4, std::string(reinterpret_cast<const char*>(&v4->sin_addr),
                                       sizeof(v4->sin_addr)));
    } else if (entry->ai_family == AF_INET6) {
      const auto* v6 = reinterpret_cast<const sockaddr_in6*>(entry->ai_addr);
      addresses.emplace(6, std::string(reinterpret_cast<const char*>(&v6->sin6_addr),
                                       sizeof(v6->sin6_addr)));
    }
  }
  freeaddrinfo(results);
  if (addresses.empty()) {
    return AgentsError(where, no_records + fix);
  }
  std::vector<AgentAddress> agents;
  for (const auto& [family, bytes] : addresses) {
    std::array<char, INET6_ADDRSTRLEN> text{};
    inet_ntop(family == 4 ? AF_INET : AF_INET6, bytes.data(), text.data(), text.size());
    AgentAddress agent;
    agent.host = text.data();
    agent.port = name_port->port;
    agent.text = DialText(agent.host, agent.port);
    agents.push_back(std::move(agent));
  }
  return agents;
}

// One list item or file line: "host:port" or "dns:///NAME:PORT".
absl::StatusOr<std::vector<AgentAddress>> ParseItem(std::string_view item,
                                                    std::string_view where) {
  if (item.substr(0, kDnsPrefix.size()) == kDnsPrefix) {
    return Resolve(item, where);
  }
  const std::string quoted = "'" + std::string(item) + "'";
  if (item.substr(0, 6) == "dns://") {
    return AgentsError(where, quoted + " names a DNS server, which is not supported; write"
                                       " dns:///NAME:PORT (three slashes)");
  }
  if (item.find("://") != std::string_view::npos) {
    return AgentsError(where, quoted + " has a scheme barrage does not dial; use " +
                                  std::string(kForms));
  }
  if (!item.empty() && item.front() == '@') {
    return AgentsError(where, quoted + " cannot be combined with other agents; give --agents @FILE"
                                       " alone");
  }
  absl::StatusOr<AgentAddress> address = ParseHostPort(item, where);
  if (!address.ok()) {
    return address.status();
  }
  return std::vector<AgentAddress>{*std::move(address)};
}

absl::Status ReadAgentFile(const std::string& path, std::vector<AgentAddress>& agents) {
  const std::string quoted = "'" + path + "'";
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return AgentsError("", "cannot read agent file " + quoted +
                               ": it is a directory; give @FILE with one host:port per line");
  }
  std::ifstream in(path);
  if (!in.is_open()) {
    return AgentsError("", "cannot read agent file " + quoted + ": " + std::strerror(errno) +
                               "; give @FILE with one host:port per line");
  }
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string_view content = line;
    content = Trim(content.substr(0, content.find('#')));
    if (content.empty()) {
      continue;
    }
    const std::string where = path + " line " + std::to_string(number) + ": ";
    if (content.find(',') != std::string_view::npos) {
      return AgentsError(where, "'" + std::string(content) +
                                    "' holds several agents; put one agent per line");
    }
    absl::StatusOr<std::vector<AgentAddress>> parsed = ParseItem(content, where);
    if (!parsed.ok()) {
      return parsed.status();
    }
    agents.insert(agents.end(), parsed->begin(), parsed->end());
  }
  if (in.bad()) {
    return AgentsError("", "cannot read agent file " + quoted + ": " + std::strerror(errno) +
                               "; give @FILE with one host:port per line");
  }
  if (agents.empty()) {
    return AgentsError("", "agent file " + quoted +
                               " lists no agents; put one host:port per line");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<AgentAddress>> ParseAgents(std::string_view flag_value) {
  const std::string_view value = Trim(flag_value);
  if (value.empty()) {
    return AgentsError("", "no agents given; use " + std::string(kForms));
  }
  std::vector<AgentAddress> agents;
  if (value.front() == '@') {
    const std::string path(Trim(value.substr(1)));
    if (path.empty()) {
      return AgentsError("", "'@' needs a file name; write @agents.txt (one host:port per line)");
    }
    if (absl::Status status = ReadAgentFile(path, agents); !status.ok()) {
      return status;
    }
  } else {
    const std::vector<std::string_view> items = SplitCommas(value);
    for (size_t i = 0; i < items.size(); ++i) {
      if (items[i].empty()) {
        return AgentsError("", "entry " + std::to_string(i + 1) + " of '" + std::string(value) +
                                   "' is empty; remove the extra comma");
      }
      absl::StatusOr<std::vector<AgentAddress>> parsed = ParseItem(items[i], "");
      if (!parsed.ok()) {
        return parsed.status();
      }
      agents.insert(agents.end(), parsed->begin(), parsed->end());
    }
  }
  std::set<std::string> seen;
  for (const AgentAddress& agent : agents) {
    if (!seen.insert(agent.text).second) {
      return AgentsError("", agent.text + " is listed more than once; list each agent once");
    }
  }
  return agents;
}

absl::StatusOr<std::vector<uint32_t>> ParseAgentWeights(std::string_view value,
                                                        size_t agent_count) {
  const std::string_view trimmed = Trim(value);
  const std::string example = "; give one whole number >= 1 per agent, e.g. 1,2,1";
  if (trimmed.empty()) {
    return std::vector<uint32_t>(agent_count, 1);
  }
  const std::vector<std::string_view> items = SplitCommas(trimmed);
  std::vector<uint32_t> weights;
  uint64_t total = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string_view item = items[i];
    if (item.empty()) {
      return absl::InvalidArgumentError("--agent-weights: entry " + std::to_string(i + 1) +
                                        " of '" + std::string(trimmed) +
                                        "' is empty; remove the extra comma");
    }
    uint32_t weight = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), weight);
    if (error == std::errc::result_out_of_range) {
      return absl::InvalidArgumentError(
          "--agent-weights: '" + std::string(item) + "' is too large; the weights may add up to " +
          std::to_string(common::WeightedSlices::kMaxTotalWeight) +
          " at most, use smaller weights in the same proportions");
    }
    if (error != std::errc() || end != item.data() + item.size()) {
      return absl::InvalidArgumentError("--agent-weights: '" + std::string(item) +
                                        "' is not a whole number" + example);
    }
    if (weight == 0) {
      return absl::InvalidArgumentError(
          "--agent-weights: agent " + std::to_string(i + 1) +
          " has weight 0; every weight must be at least 1 (leave the agent out of --agents "
          "instead)");
    }
    total += weight;
    weights.push_back(weight);
  }
  if (weights.size() != agent_count) {
    return absl::InvalidArgumentError(
        "--agent-weights: " + std::to_string(weights.size()) + " weights for " +
        std::to_string(agent_count) +
        " agents; give one weight per agent, in the order --agents lists them");
  }
  if (total > common::WeightedSlices::kMaxTotalWeight) {
    return absl::InvalidArgumentError(
        "--agent-weights: the weights add up to " + std::to_string(total) + ", more than " +
        std::to_string(common::WeightedSlices::kMaxTotalWeight) +
        "; use smaller weights in the same proportions");
  }
  return weights;
}

}  // namespace barrage::coordinator
