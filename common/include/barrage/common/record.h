#pragma once

#include <cstdint>
#include <string_view>

#include "barrage/common/time.h"

namespace barrage::common {

// Why a request failed. kNone means success. Values match barrage.v1.ErrorClass.
enum class ErrorClass : uint8_t {
  kNone = 0,
  kConnect = 1,
  kTimeout = 2,
  kTls = 3,
  kHttp4xx = 4,
  kHttp5xx = 5,
  kProtocol = 6,
  kCancelled = 7,
};
inline constexpr int kErrorClassCount = 8;

// "connect", "timeout", "tls", "http_4xx", "http_5xx", "protocol", "cancelled"; "" for kNone.
std::string_view ErrorClassName(ErrorClass error);

// curl's phases of one request, as durations.
struct PhaseTimings {
  Nanos dns = 0;
  Nanos connect = 0;
  Nanos tls = 0;
  Nanos send = 0;
  Nanos wait = 0;
  Nanos receive = 0;
};

// One request, as the agent saw it. Instants are offsets from the run's measurement start (the
// end of warm-up) in the agent's monotonic clock; 0 for ttfb means no byte arrived.
struct RequestRecord {
  uint64_t arrival_index =
      0;                   // position in the global arrival timeline (or send order, closed loop)
  Nanos scheduled = 0;     // when the schedule wanted it sent
  Nanos start = 0;         // when it was handed to the network (after any concurrency wait)
  Nanos ttfb = 0;          // first response byte
  Nanos end = 0;           // completion (last byte, error or cancel)
  uint64_t bytes_in = 0;   // response bytes (headers and body)
  uint64_t bytes_out = 0;  // request bytes (headers and body)
  PhaseTimings phases;
  uint16_t status = 0;  // HTTP status, 0 when none was received
  ErrorClass error = ErrorClass::kNone;

  bool ok() const { return error == ErrorClass::kNone; }
  Nanos e2el() const { return end - start; }
  Nanos client_queue_time() const { return start - scheduled; }
  Nanos e2el_including_client_queue() const { return end - scheduled; }
};

}  // namespace barrage::common
