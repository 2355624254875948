// The `barrage` command: subcommands run, version, help.

#include <algorithm>
#include <exception>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "barrage/coordinator/cli.h"
#include "barrage/coordinator/run_command.h"

#ifndef BARRAGE_VERSION
#define BARRAGE_VERSION "0.0.0"
#endif

namespace barrage::coordinator {
namespace {

constexpr const char* kUsage = R"(barrage: a distributed HTTP and LLM load generator

Usage:
  barrage run --url URL [options]   drive load and report (barrage run --help for options)
  barrage version                   print the version
  barrage help                      this text
)";

int Main(const std::vector<std::string>& args) {
  if (args.empty()) {
    // Nothing asked: a usage error, so the text goes where errors go.
    std::cerr << kUsage;
    return kExitUsage;
  }
  if (args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    std::cout << kUsage;
    return kExitOk;
  }
  if (args[0] == "version" || args[0] == "--version") {
    std::cout << "barrage " << BARRAGE_VERSION << '\n';
    return kExitOk;
  }
  if (args[0] == "run") {
    const std::vector<std::string> run_args(args.begin() + 1, args.end());
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    ParsedRun parsed = ParseRunArgs(run_args, cores, std::cout, std::cerr);
    if (!parsed.proceed) {
      return parsed.exit_code;
    }
    return RunCommand(parsed.options, std::cout, std::cerr);
  }
  std::cerr << "barrage: '" << args[0] << "' is not a command; try barrage help\n";
  return kExitUsage;
}

}  // namespace
}  // namespace barrage::coordinator

int main(int argc, char** argv) {
  try {
    return barrage::coordinator::Main(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& error) {
    std::cerr << "barrage: internal error: " << error.what() << '\n';
  } catch (...) {
    std::cerr << "barrage: internal error\n";
  }
  return barrage::coordinator::kExitRunFailed;
}
