#pragma once

#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "barrage/common/record.h"

namespace barrage::coordinator {

// Writes every request to a file, one line each: JSONL (keys scheduled_ns, start_ns, ttfb_ns,
// end_ns, status, error, bytes_in, bytes_out, and the phase timings) or CSV with the same columns,
// chosen by the file's extension (.jsonl / .csv). Buffered; formats without allocating per record.
class RecordsWriter {
 public:
  // Opens (creates or truncates) the file, so an unwritable path fails before any load is sent.
  // @return InvalidArgument naming --save-records for a bad extension or an unwritable path.
  static absl::StatusOr<std::unique_ptr<RecordsWriter>> Open(const std::string& path);
  ~RecordsWriter();

  // @param agent the name of the agent that ran these requests (the records' `agent` field).
  void Write(std::span<const common::RequestRecord> records, std::string_view agent = "local");
  // Flushes and closes. @return an error if any write failed.
  absl::Status Close();

 private:
  RecordsWriter(std::FILE* file, bool csv);
  std::unique_ptr<char[]> buffer_;  // the FILE's buffer: declared first, so it outlives file_
  std::FILE* file_;
  bool csv_;
  bool failed_ = false;
};

}  // namespace barrage::coordinator
