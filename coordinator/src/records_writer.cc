#include "barrage/coordinator/records_writer.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>

namespace barrage::coordinator {
namespace {

constexpr size_t kFileBufferBytes = size_t{1} << 20;
// The longest line: 13 numbers of at most 20 digits, a class name, keys and punctuation.
constexpr size_t kMaxLineBytes = 1024;

constexpr const char* kCsvHeader =
    "scheduled_ns,start_ns,ttfb_ns,end_ns,status,error,bytes_in,bytes_out,dns_ns,connect_ns,"
    "tls_ns,send_ns,wait_ns,receive_ns\n";

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Appends to a fixed line buffer; the buffer is large enough for any record, so no checks.
class LineBuilder {
 public:
  void Text(std::string_view text) {
    std::memcpy(end_, text.data(), text.size());
    end_ += text.size();
  }
  template <typename Integer>
  void Number(Integer value) {
    end_ = std::to_chars(end_, buffer_ + sizeof buffer_, value).ptr;
  }
  std::string_view view() const { return {buffer_, static_cast<size_t>(end_ - buffer_)}; }
  void Clear() { end_ = buffer_; }

 private:
  char buffer_[kMaxLineBytes];
  char* end_ = buffer_;
};

void FormatJsonLine(const common::RequestRecord& r, LineBuilder& line) {
  line.Text("{\"scheduled_ns\":");
  line.Number(r.scheduled);
  line.Text(",\"start_ns\":");
  line.Number(r.start);
  line.Text(",\"ttfb_ns\":");
  if (r.ttfb > 0) {
    line.Number(r.ttfb);
  } else {
    line.Text("null");
  }
  line.Text(",\"end_ns\":");
  line.Number(r.end);
  line.Text(",\"status\":");
  line.Number(r.status);
  line.Text(",\"error\":");
  if (r.ok()) {
    line.Text("null");
  } else {
    line.Text("\"");
    line.Text(common::ErrorClassName(r.error));
    line.Text("\"");
  }
  line.Text(",\"bytes_in\":");
  line.Number(r.bytes_in);
  line.Text(",\"bytes_out\":");
  line.Number(r.bytes_out);
  line.Text(",\"dns_ns\":");
  line.Number(r.phases.dns);
  line.Text(",\"connect_ns\":");
  line.Number(r.phases.connect);
  line.Text(",\"tls_ns\":");
  line.Number(r.phases.tls);
  line.Text(",\"send_ns\":");
  line.Number(r.phases.send);
  line.Text(",\"wait_ns\":");
  line.Number(r.phases.wait);
  line.Text(",\"receive_ns\":");
  line.Number(r.phases.receive);
  line.Text("}\n");
}

void FormatCsvLine(const common::RequestRecord& r, LineBuilder& line) {
  line.Number(r.scheduled);
  line.Text(",");
  line.Number(r.start);
  line.Text(",");
  if (r.ttfb > 0) {
    line.Number(r.ttfb);
  }
  line.Text(",");
  line.Number(r.end);
  line.Text(",");
  line.Number(r.status);
  line.Text(",");
  line.Text(common::ErrorClassName(r.error));
  for (const auto value : {static_cast<int64_t>(r.bytes_in), static_cast<int64_t>(r.bytes_out),
                           r.phases.dns, r.phases.connect, r.phases.tls, r.phases.send,
                           r.phases.wait, r.phases.receive}) {
    line.Text(",");
    line.Number(value);
  }
  line.Text("\n");
}

}  // namespace

absl::StatusOr<std::unique_ptr<RecordsWriter>> RecordsWriter::Open(const std::string& path) {
  const bool csv = EndsWith(path, ".csv");
  if (!csv && !EndsWith(path, ".jsonl")) {
    return absl::InvalidArgumentError("--save-records: '" + path +
                                      "' must end in .jsonl or .csv (that picks the format)");
  }
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    return absl::InvalidArgumentError("--save-records: cannot write '" + path +
                                      "': " + std::strerror(errno));
  }
  std::setvbuf(file, nullptr, _IOFBF, kFileBufferBytes);
  auto writer = std::unique_ptr<RecordsWriter>(new RecordsWriter(file, csv));
  if (csv && std::fputs(kCsvHeader, file) < 0) {
    writer->failed_ = true;
  }
  return writer;
}

RecordsWriter::RecordsWriter(std::FILE* file, bool csv) : file_(file), csv_(csv) {}

RecordsWriter::~RecordsWriter() {
  if (file_ != nullptr) {
    std::fclose(file_);
  }
}

void RecordsWriter::Write(std::span<const common::RequestRecord> records) {
  if (file_ == nullptr) {
    return;
  }
  LineBuilder line;
  for (const common::RequestRecord& record : records) {
    line.Clear();
    if (csv_) {
      FormatCsvLine(record, line);
    } else {
      FormatJsonLine(record, line);
    }
    const std::string_view bytes = line.view();
    if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
      failed_ = true;
    }
  }
}

absl::Status RecordsWriter::Close() {
  if (file_ == nullptr) {
    return failed_ ? absl::DataLossError("--save-records: writing the records failed")
                   : absl::OkStatus();
  }
  const bool flushed = std::fflush(file_) == 0;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (failed_ || !flushed || !closed) {
    failed_ = true;
    return absl::DataLossError("--save-records: writing the records failed (disk full?)");
  }
  return absl::OkStatus();
}

}  // namespace barrage::coordinator
