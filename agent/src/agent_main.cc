// barrage-agent: serves the barrage.v1.Agent gRPC service, so a coordinator on another host can
// run its share of a test here.

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "barrage/agent/agent_service.h"
#include "barrage/common/share_codec.h"
#include "barrage/common/token_file.h"
#include "grpcpp/grpcpp.h"

#ifndef BARRAGE_VERSION
#define BARRAGE_VERSION "0.0.0"
#endif

namespace barrage::agent {
namespace {

constexpr const char* kUsage = R"(Usage: barrage-agent [options]

  --listen ADDR:PORT   where to serve (default 127.0.0.1:7070)
  --name NAME          this agent's name in results (default: the host name)
  --token-file FILE    every call must carry the secret in FILE (the coordinator reads it from
                       --agent-token-file or BARRAGE_AGENT_TOKEN)
  --insecure           allow listening beyond loopback without a token
)";

struct AgentFlags {
  std::string listen = "127.0.0.1:7070";
  std::string name;
  std::string token_file;
  bool insecure = false;
  uint32_t protocol_version = common::kProtocolVersion;
};

int UsageError(const std::string& message) {
  std::cerr << "barrage-agent: " << message << '\n';
  return 1;
}

bool IsLoopback(const std::string& listen) {
  const std::string host = listen.substr(0, listen.rfind(':'));
  return host.rfind("127.", 0) == 0 || host == "localhost" || host == "[::1]";
}

int Main(const std::vector<std::string>& args) {
  AgentFlags flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--help" || flag == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (flag == "--insecure") {
      flags.insecure = true;
      continue;
    }
    if (flag != "--listen" && flag != "--name" && flag != "--token-file" &&
        flag != "--advertise-protocol") {
      return UsageError(flag + ": unknown flag (see barrage-agent --help)");
    }
    if (i + 1 >= args.size()) {
      return UsageError(flag + ": needs a value");
    }
    const std::string& value = args[++i];
    if (flag == "--listen") {
      flags.listen = value;
    } else if (flag == "--name") {
      flags.name = value;
    } else if (flag == "--advertise-protocol") {
      // For tests only (not in --help): pretend to speak another protocol version.
      flags.protocol_version = static_cast<uint32_t>(std::strtoul(value.c_str(), nullptr, 10));
    } else {
      flags.token_file = value;
    }
  }
  const size_t colon = flags.listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == flags.listen.size()) {
    return UsageError("--listen: '" + flags.listen + "' is not ADDR:PORT");
  }
  AgentIdentity identity;
  identity.version = BARRAGE_VERSION;
  identity.protocol_version = flags.protocol_version;
  identity.name = flags.name;
  if (identity.name.empty()) {
    char host[256] = "agent";
    gethostname(host, sizeof host - 1);
    identity.name = host;
  }
  if (!flags.token_file.empty()) {
    absl::StatusOr<std::string> token = common::ReadTokenFile(flags.token_file);
    if (!token.ok()) {
      return UsageError("--token-file: " + std::string(token.status().message()));
    }
    identity.token = *token;
  }
  if (!IsLoopback(flags.listen) && identity.token.empty() && !flags.insecure) {
    return UsageError("--listen: " + flags.listen +
                      " is reachable beyond this host; an agent sends load for whoever calls "
                      "it, so give --token-file FILE (or --insecure, at your own risk)");
  }

  AgentService service(identity);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(flags.listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    return UsageError("--listen: cannot listen on " + flags.listen +
                      " (address in use, or not an address of this host)");
  }
  // On stdout, so that scripts and tests learn the port of --listen ADDR:0.
  std::cout << "barrage-agent " << identity.name << ": listening on "
            << flags.listen.substr(0, colon) << ":" << port << std::endl;
  server->Wait();
  return 0;
}

}  // namespace
}  // namespace barrage::agent

int main(int argc, char** argv) {
  return barrage::agent::Main(std::vector<std::string>(argv + 1, argv + argc));
}
