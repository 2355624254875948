#include "barrage/coordinator/records_writer.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>

namespace barrage::coordinator {
namespace {

constexpr size_t kFileBufferBytes = size_t{1} << 20;
// The longest line: 13 numbers of at most 20 digits, a class name, keys and punctuation.
constexpr size_t kMaxLineBytes = 1024;
// Agent names are cut to this in records, so a line always fits kMaxLineBytes.
constexpr size_t kMaxAgentNameBytes = 128;

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

using Record = common::RequestRecord;

// One column of a records file. JSONL and CSV are written from this one table, so the two
// formats cannot drift apart.
struct Column {
  enum class Kind {
    kNumber,
    kNumberOrNull,  // 0 means none: JSON null, empty CSV field
    kErrorClass,    // the class name; none on success
  };
  std::string_view name;
  Kind kind;
  int64_t (*value)(const Record&);
};

constexpr Column kColumns[] = {
    {"scheduled_ns", Column::Kind::kNumber, [](const Record& r) { return r.scheduled; }},
    {"start_ns", Column::Kind::kNumber, [](const Record& r) { return r.start; }},
    {"ttfb_ns", Column::Kind::kNumberOrNull, [](const Record& r) { return r.ttfb; }},
    {"end_ns", Column::Kind::kNumber, [](const Record& r) { return r.end; }},
    {"status", Column::Kind::kNumber,
     [](const Record& r) { return static_cast<int64_t>(r.status); }},
    {"error", Column::Kind::kErrorClass,
     [](const Record& r) { return static_cast<int64_t>(r.error); }},
    {"bytes_in", Column::Kind::kNumber,
     [](const Record& r) { return static_cast<int64_t>(r.bytes_in); }},
    {"bytes_out", Column::Kind::kNumber,
     [](const Record& r) { return static_cast<int64_t>(r.bytes_out); }},
    {"dns_ns", Column::Kind::kNumber, [](const Record& r) { return r.phases.dns; }},
    {"connect_ns", Column::Kind::kNumber, [](const Record& r) { return r.phases.connect; }},
    {"tls_ns", Column::Kind::kNumber, [](const Record& r) { return r.phases.tls; }},
    {"send_ns", Column::Kind::kNumber, [](const Record& r) { return r.phases.send; }},
    {"wait_ns", Column::Kind::kNumber, [](const Record& r) { return r.phases.wait; }},
    {"receive_ns", Column::Kind::kNumber, [](const Record& r) { return r.phases.receive; }},
};

std::string CsvHeader() {
  std::string header;
  for (const Column& column : kColumns) {
    header.append(header.empty() ? "" : ",").append(column.name);
  }
  header.append(",agent");
  return header + "\n";
}

// The agent column, formatted once per batch: `,"agent":"name"` (JSON) or `,name` (CSV).
std::string AgentField(std::string_view agent, bool csv) {
  // Names come from agents' --name flags; keep them short and free of quoting trouble.
  std::string name;
  for (char c : agent.substr(0, kMaxAgentNameBytes)) {
    const bool plain = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ||
                       c == '.' || c == ':' || c == '[' || c == ']';
    name.push_back(plain ? c : '_');
  }
  return csv ? "," + name : ",\"agent\":\"" + name + "\"";
}

void FormatLine(const common::RequestRecord& record, bool csv, std::string_view agent_field,
                LineBuilder& line) {
  bool first = true;
  for (const Column& column : kColumns) {
    if (csv) {
      line.Text(first ? "" : ",");
    } else {
      line.Text(first ? "{\"" : ",\"");
      line.Text(column.name);
      line.Text("\":");
    }
    first = false;
    const int64_t value = column.value(record);
    const std::string_view none = csv ? "" : "null";
    switch (column.kind) {
      case Column::Kind::kNumber:
        line.Number(value);
        break;
      case Column::Kind::kNumberOrNull:
        if (value != 0) {
          line.Number(value);
        } else {
          line.Text(none);
        }
        break;
      case Column::Kind::kErrorClass:
        if (value == 0) {
          line.Text(none);
        } else {
          line.Text(csv ? "" : "\"");
          line.Text(common::ErrorClassName(static_cast<common::ErrorClass>(value)));
          line.Text(csv ? "" : "\"");
        }
        break;
    }
  }
  line.Text(agent_field);
  line.Text(csv ? "\n" : "}\n");
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
  auto writer = std::unique_ptr<RecordsWriter>(new RecordsWriter(file, csv));
  // glibc ignores the size when it is not given the buffer, and writes 4 KiB at a time: one
  // system call per 16 records. Our own buffer (outliving the FILE) makes it 1 MiB.
  std::setvbuf(file, writer->buffer_.get(), _IOFBF, kFileBufferBytes);
  if (csv && std::fputs(CsvHeader().c_str(), file) < 0) {
    writer->failed_ = true;
  }
  return writer;
}

RecordsWriter::RecordsWriter(std::FILE* file, bool csv)
    : buffer_(std::make_unique<char[]>(kFileBufferBytes)), file_(file), csv_(csv) {}

RecordsWriter::~RecordsWriter() {
  if (file_ != nullptr) {
    std::fclose(file_);
  }
}

void RecordsWriter::Write(std::span<const common::RequestRecord> records, std::string_view agent) {
  if (file_ == nullptr) {
    return;
  }
  const std::string agent_field = AgentField(agent, csv_);
  LineBuilder line;
  for (const common::RequestRecord& record : records) {
    line.Clear();
    FormatLine(record, csv_, agent_field, line);
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
