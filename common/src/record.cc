#include "barrage/common/record.h"

namespace barrage::common {

std::string_view ErrorClassName(ErrorClass error) {
  switch (error) {
    case ErrorClass::kNone:
      return "";
    case ErrorClass::kConnect:
      return "connect";
    case ErrorClass::kTimeout:
      return "timeout";
    case ErrorClass::kTls:
      return "tls";
    case ErrorClass::kHttp4xx:
      return "http_4xx";
    case ErrorClass::kHttp5xx:
      return "http_5xx";
    case ErrorClass::kProtocol:
      return "protocol";
    case ErrorClass::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

}  // namespace barrage::common
