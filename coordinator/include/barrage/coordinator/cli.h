#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "barrage/coordinator/run_options.h"

namespace barrage::coordinator {

// What parsing `barrage run ...` decided.
struct ParsedRun {
  bool proceed = false;  // true: run with `options`; false: exit with `exit_code`
  int exit_code = 0;     // 0 after --help, 1 after a usage error (message already on `err`)
  RunOptions options;
};

// Parses the arguments after "run" (args[0] is the first flag). Validates everything that can be
// checked before load is sent: flag values, the URL, the body file, that output paths are
// writable, thresholds. Every error is one line on `err`: "barrage run: --flag: what is wrong".
// @param default_threads the --threads default (the machine's cores).
ParsedRun ParseRunArgs(const std::vector<std::string>& args, unsigned default_threads,
                       std::ostream& out, std::ostream& err);

}  // namespace barrage::coordinator
