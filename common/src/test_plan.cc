#include "barrage/common/test_plan.h"

#include <cmath>

namespace barrage::common {

absl::Status ValidatePlan(const TestPlan& plan) {
  const LoadSpec& load = plan.load;
  if (plan.request.url.empty()) {
    return absl::InvalidArgumentError(
        "--url: missing; give the target, e.g. http://127.0.0.1:8080/");
  }
  if (load.rate.has_value() && (!std::isfinite(*load.rate) || *load.rate <= 0)) {
    return absl::InvalidArgumentError(
        "--rate: must be a positive number of requests per second, or inf");
  }
  if (!load.rate.has_value() && load.concurrency == 0) {
    return absl::InvalidArgumentError(
        "--concurrency: a closed-loop run (no --rate) needs a concurrency of at least 1");
  }
  if (load.duration <= 0 && load.requests == 0) {
    return absl::InvalidArgumentError("--duration: give a duration or --requests N, or both");
  }
  if (load.arrival == ArrivalKind::kGamma &&
      !(load.burstiness > 0 && std::isfinite(load.burstiness))) {
    return absl::InvalidArgumentError("--burstiness: must be a positive number (1.0 is Poisson)");
  }
  if (load.warmup < 0) {
    return absl::InvalidArgumentError("--warmup: must be 0 or a positive duration");
  }
  if (load.grace < 0) {
    return absl::InvalidArgumentError("--grace: must be 0 or a positive duration");
  }
  if (load.timeout <= 0) {
    return absl::InvalidArgumentError("--timeout: must be a positive duration, e.g. 30s");
  }
  if (load.threads == 0) {
    return absl::InvalidArgumentError("--threads: must be at least 1");
  }
  return absl::OkStatus();
}

uint64_t IntegerShare(uint64_t total, uint32_t parts, uint32_t index) {
  if (parts == 0) return 0;
  return total / parts + (index < total % parts ? 1 : 0);
}

}  // namespace barrage::common
