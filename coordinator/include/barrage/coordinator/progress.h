#pragma once

#include <cstdint>
#include <ostream>

#include "barrage/common/time.h"
#include "barrage/coordinator/run_stats.h"

namespace barrage::coordinator {

// The live progress line on stderr: rewritten in place on a terminal, a plain line per update
// otherwise (CI logs). Shows elapsed time, completed and failed requests, the last interval's
// rate, requests in flight and the running p99 E2EL.
class ProgressPrinter {
 public:
  // @param planned the planned measured duration (0 when the run is bounded by count only).
  ProgressPrinter(std::ostream& err, bool terminal, common::Nanos planned);

  // @param elapsed time since measurement start; @param in_flight from the agents' heartbeats.
  void Update(common::Nanos elapsed, const RunStats& stats, uint64_t in_flight);
  // Ends the in-place line on a terminal.
  void Finish();

 private:
  std::ostream& err_;
  const bool terminal_;
  const common::Nanos planned_;
  uint64_t last_total_ = 0;
  common::Nanos last_elapsed_ = 0;
  bool printed_ = false;
};

}  // namespace barrage::coordinator
