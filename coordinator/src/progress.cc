#include "barrage/coordinator/progress.h"

#include <cstdio>

namespace barrage::coordinator {

ProgressPrinter::ProgressPrinter(std::ostream& err, bool terminal, common::Nanos planned)
    : err_(err), terminal_(terminal), planned_(planned) {}

void ProgressPrinter::Update(common::Nanos elapsed, const RunStats& stats, uint64_t in_flight) {
  const double seconds = static_cast<double>(elapsed) / common::kNanosPerSecond;
  const double interval = static_cast<double>(elapsed - last_elapsed_) / common::kNanosPerSecond;
  const double rate = interval > 0 ? (stats.total() - last_total_) / interval : 0;
  last_total_ = stats.total();
  last_elapsed_ = elapsed;
  char planned[32] = "";
  if (planned_ > 0) {
    std::snprintf(planned, sizeof planned, "/%.0fs",
                  static_cast<double>(planned_) / common::kNanosPerSecond);
  }
  const double p99_ms = stats.histogram(LatencyMetric::kE2el).ValueAtPercentile(99) / 1e6;
  char line[256];
  std::snprintf(line, sizeof line,
                "[%6.1fs%s] completed %llu  failed %llu  rate %.0f/s  in-flight %llu  p99 E2EL "
                "%.2f ms",
                seconds, planned, static_cast<unsigned long long>(stats.completed),
                static_cast<unsigned long long>(stats.failed), rate,
                static_cast<unsigned long long>(in_flight), p99_ms);
  if (terminal_) {
    err_ << "\r\033[K" << line << std::flush;
  } else {
    err_ << line << '\n' << std::flush;
  }
  printed_ = true;
}

void ProgressPrinter::Finish() {
  if (terminal_ && printed_) err_ << '\n' << std::flush;
}

}  // namespace barrage::coordinator
