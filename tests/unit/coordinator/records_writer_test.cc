#include "barrage/coordinator/records_writer.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace barrage::coordinator {
namespace {

using common::ErrorClass;
using common::RequestRecord;

// A fresh directory under /tmp, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/barrage-records-test-XXXXXX";
    const char* made = mkdtemp(pattern);
    EXPECT_NE(made, nullptr);
    path_ = made != nullptr ? made : "/tmp";
  }
  ~TempDir() {
    std::error_code error;
    std::filesystem::remove_all(path_, error);
  }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::vector<RequestRecord> SampleRecords() {
  RequestRecord ok;
  ok.arrival_index = 7;
  ok.scheduled = 1'000'000;
  ok.start = 1'250'000;
  ok.ttfb = 3'000'000;
  ok.end = 9'876'543'210'123;  // large values keep every digit
  ok.status = 200;
  ok.bytes_in = 4096;
  ok.bytes_out = 123;
  ok.phases = {.dns = 11, .connect = 22, .tls = 33, .send = 44, .wait = 55, .receive = 66};

  RequestRecord timeout;
  timeout.scheduled = 2'000'000;
  timeout.start = 2'000'001;
  timeout.ttfb = 0;
  timeout.end = 30'002'000'001;
  timeout.status = 0;
  timeout.error = ErrorClass::kTimeout;
  timeout.bytes_out = 80;

  RequestRecord server_error;
  server_error.scheduled = 0;
  server_error.start = 0;
  server_error.ttfb = 5;
  server_error.end = 10;
  server_error.status = 503;
  server_error.error = ErrorClass::kHttp5xx;
  server_error.bytes_in = 17;
  return {ok, timeout, server_error};
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  std::string line;
  while (std::getline(stream, line)) {
    lines.push_back(line);
  }
  return lines;
}

std::string ErrorName(ErrorClass error) { return std::string(common::ErrorClassName(error)); }

void WriteAll(const std::string& path, const std::vector<RequestRecord>& records) {
  absl::StatusOr<std::unique_ptr<RecordsWriter>> writer = RecordsWriter::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  // Two calls: batches append.
  const std::span<const RequestRecord> all(records);
  const size_t half = all.size() / 2;
  (*writer)->Write(all.first(half));
  (*writer)->Write(all.subspan(half));
  EXPECT_TRUE((*writer)->Close().ok());
}

TEST(RecordsWriterTest, JsonlRoundTrip) {
  TempDir dir;
  const std::string path = dir.File("records.jsonl");
  const std::vector<RequestRecord> records = SampleRecords();
  WriteAll(path, records);

  const std::string text = ReadFile(path);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  const std::vector<std::string> lines = Lines(text);
  ASSERT_EQ(lines.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    SCOPED_TRACE(lines[i]);
    const RequestRecord& record = records[i];
    const nlohmann::json line = nlohmann::json::parse(lines[i]);
    EXPECT_EQ(line.size(), 15u);
    EXPECT_EQ(line["agent"], "local");
    EXPECT_EQ(line["scheduled_ns"], record.scheduled);
    EXPECT_EQ(line["start_ns"], record.start);
    if (record.ttfb == 0) {
      EXPECT_TRUE(line["ttfb_ns"].is_null());
    } else {
      EXPECT_EQ(line["ttfb_ns"], record.ttfb);
    }
    EXPECT_EQ(line["end_ns"], record.end);
    EXPECT_EQ(line["status"], record.status);
    if (record.ok()) {
      EXPECT_TRUE(line["error"].is_null());
    } else {
      EXPECT_EQ(line["error"], ErrorName(record.error));
    }
    EXPECT_EQ(line["bytes_in"], record.bytes_in);
    EXPECT_EQ(line["bytes_out"], record.bytes_out);
    EXPECT_EQ(line["dns_ns"], record.phases.dns);
    EXPECT_EQ(line["connect_ns"], record.phases.connect);
    EXPECT_EQ(line["tls_ns"], record.phases.tls);
    EXPECT_EQ(line["send_ns"], record.phases.send);
    EXPECT_EQ(line["wait_ns"], record.phases.wait);
    EXPECT_EQ(line["receive_ns"], record.phases.receive);
  }
  EXPECT_EQ(nlohmann::json::parse(lines[1])["error"], "timeout");
  EXPECT_EQ(nlohmann::json::parse(lines[2])["error"], "http_5xx");
}

TEST(RecordsWriterTest, CsvHeaderAndValues) {
  TempDir dir;
  const std::string path = dir.File("records.csv");
  WriteAll(path, SampleRecords());

  const std::vector<std::string> lines = Lines(ReadFile(path));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0],
            "scheduled_ns,start_ns,ttfb_ns,end_ns,status,error,bytes_in,bytes_out,dns_ns,"
            "connect_ns,tls_ns,send_ns,wait_ns,receive_ns,agent");
  EXPECT_EQ(lines[1],
            "1000000,1250000,3000000,9876543210123,200,,4096,123,11,22,33,44,55,66,local");
  EXPECT_EQ(lines[2], "2000000,2000001,,30002000001,0,timeout,0,80,0,0,0,0,0,0,local");
  EXPECT_EQ(lines[3], "0,0,5,10,503,http_5xx,17,0,0,0,0,0,0,0,local");
}

TEST(RecordsWriterTest, CsvWithNoRecordsHasOnlyTheHeader) {
  TempDir dir;
  const std::string path = dir.File("empty.csv");
  WriteAll(path, {});
  const std::vector<std::string> lines = Lines(ReadFile(path));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0].starts_with("scheduled_ns,"));
}

TEST(RecordsWriterTest, JsonlWithNoRecordsIsEmpty) {
  TempDir dir;
  const std::string path = dir.File("empty.jsonl");
  WriteAll(path, {});
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(ReadFile(path), "");
}

TEST(RecordsWriterTest, OpenTruncatesAnExistingFile) {
  TempDir dir;
  const std::string path = dir.File("records.jsonl");
  std::ofstream(path) << "old contents that must go\n";
  WriteAll(path, {SampleRecords()[0]});
  const std::vector<std::string> lines = Lines(ReadFile(path));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(lines[0])["status"], 200);
}

TEST(RecordsWriterTest, OpenRefusesABadExtension) {
  TempDir dir;
  for (const std::string name : {"x.txt", "x.json", "x", "x.csv.bak"}) {
    const std::string path = dir.File(name);
    absl::StatusOr<std::unique_ptr<RecordsWriter>> writer = RecordsWriter::Open(path);
    ASSERT_FALSE(writer.ok()) << name;
    EXPECT_EQ(writer.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(writer.status().message().find("--save-records"), std::string_view::npos)
        << writer.status();
    EXPECT_FALSE(std::filesystem::exists(path)) << name;
  }
}

TEST(RecordsWriterTest, OpenRefusesAPathInAMissingDirectory) {
  TempDir dir;
  absl::StatusOr<std::unique_ptr<RecordsWriter>> writer =
      RecordsWriter::Open(dir.File("absent/records.jsonl"));
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(writer.status().message().find("--save-records"), std::string_view::npos)
      << writer.status();
}

TEST(RecordsWriterTest, CloseTwiceIsOkAndWriteAfterCloseIsIgnored) {
  TempDir dir;
  const std::string path = dir.File("records.jsonl");
  absl::StatusOr<std::unique_ptr<RecordsWriter>> writer = RecordsWriter::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  const std::vector<RequestRecord> records = SampleRecords();
  (*writer)->Write(records);
  EXPECT_TRUE((*writer)->Close().ok());
  (*writer)->Write(records);
  EXPECT_TRUE((*writer)->Close().ok());
  EXPECT_EQ(Lines(ReadFile(path)).size(), records.size());
}

TEST(RecordsWriterTest, DestructorFlushesWithoutClose) {
  TempDir dir;
  const std::string path = dir.File("records.csv");
  {
    absl::StatusOr<std::unique_ptr<RecordsWriter>> writer = RecordsWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    (*writer)->Write(SampleRecords());
  }
  EXPECT_EQ(Lines(ReadFile(path)).size(), 4u);
}

TEST(RecordsWriterTest, CloseReportsAFailedWrite) {
  if (!std::filesystem::exists("/dev/full")) {
    GTEST_SKIP() << "/dev/full is not available";
  }
  // /dev/full has no extension of ours, so write through a symlink that has one.
  TempDir dir;
  const std::string link = dir.File("full.jsonl");
  std::filesystem::create_symlink("/dev/full", link);
  absl::StatusOr<std::unique_ptr<RecordsWriter>> writer = RecordsWriter::Open(link);
  ASSERT_TRUE(writer.ok()) << writer.status();
  (*writer)->Write(SampleRecords());
  const absl::Status closed = (*writer)->Close();
  EXPECT_FALSE(closed.ok());
  EXPECT_NE(closed.message().find("--save-records"), std::string_view::npos) << closed;
}

// The columns of both formats, in file order.
const std::vector<std::string> kColumns = {
    "scheduled_ns", "start_ns", "ttfb_ns",    "end_ns", "status",  "error",   "bytes_in",
    "bytes_out",    "dns_ns",   "connect_ns", "tls_ns", "send_ns", "wait_ns", "receive_ns", "agent"};

// The record as its line should read, keys in file order; null for "none".
nlohmann::ordered_json Expected(const RequestRecord& record) {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  json["scheduled_ns"] = record.scheduled;
  json["start_ns"] = record.start;
  json["ttfb_ns"] =
      record.ttfb != 0 ? nlohmann::ordered_json(record.ttfb) : nlohmann::ordered_json(nullptr);
  json["end_ns"] = record.end;
  json["status"] = record.status;
  json["error"] = record.ok() ? nlohmann::ordered_json(nullptr)
                              : nlohmann::ordered_json(ErrorName(record.error));
  json["bytes_in"] = record.bytes_in;
  json["bytes_out"] = record.bytes_out;
  json["dns_ns"] = record.phases.dns;
  json["connect_ns"] = record.phases.connect;
  json["tls_ns"] = record.phases.tls;
  json["send_ns"] = record.phases.send;
  json["wait_ns"] = record.phases.wait;
  json["receive_ns"] = record.phases.receive;
  json["agent"] = "local";
  return json;
}

// Request i of a run: every field distinct; every third one a timeout with no byte back.
RequestRecord Numbered(int64_t i) {
  RequestRecord record;
  record.scheduled = 1'000'000 * i;
  record.start = record.scheduled + 1'234 + i;
  record.ttfb = i % 3 == 2 ? 0 : record.start + 50'000 + i;
  record.end = record.start + 57'000 + i;
  record.status = i % 3 == 2 ? 0 : 200;
  record.error = i % 3 == 2 ? ErrorClass::kTimeout : ErrorClass::kNone;
  record.bytes_in = 300 + static_cast<uint64_t>(i);
  record.bytes_out = 80 + static_cast<uint64_t>(i);
  record.phases = {
      .dns = 1 + i, .connect = 2 + i, .tls = 3 + i, .send = 4 + i, .wait = 5 + i, .receive = 6 + i};
  return record;
}

TEST(RecordsWriterTest, JsonlKeysComeInColumnOrder) {
  TempDir dir;
  const std::string path = dir.File("ordered.jsonl");
  WriteAll(path, SampleRecords());
  const std::vector<std::string> lines = Lines(ReadFile(path));
  ASSERT_EQ(lines.size(), SampleRecords().size());
  for (size_t i = 0; i < lines.size(); ++i) {
    const nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(lines[i]);
    std::vector<std::string> keys;
    for (const auto& item : parsed.items()) {
      keys.push_back(item.key());
    }
    EXPECT_EQ(keys, kColumns) << lines[i];
    EXPECT_EQ(parsed, Expected(SampleRecords()[i])) << lines[i];
  }
}

TEST(RecordsWriterTest, EveryErrorClassIsWrittenByName) {
  TempDir dir;
  const std::string path = dir.File("classes.jsonl");
  std::vector<RequestRecord> records;
  for (int error = 0; error < common::kErrorClassCount; ++error) {
    RequestRecord record = Numbered(error);
    record.error = static_cast<ErrorClass>(error);
    records.push_back(record);
  }
  WriteAll(path, records);
  const std::vector<std::string> lines = Lines(ReadFile(path));
  ASSERT_EQ(lines.size(), records.size());
  const char* const names[] = {nullptr,    "connect",  "timeout",  "tls",
                               "http_4xx", "http_5xx", "protocol", "cancelled"};
  for (size_t i = 0; i < lines.size(); ++i) {
    const nlohmann::json error = nlohmann::json::parse(lines[i])["error"];
    if (names[i] == nullptr) {
      EXPECT_TRUE(error.is_null()) << lines[i];
    } else {
      EXPECT_EQ(error, names[i]) << lines[i];
    }
  }
}

TEST(RecordsWriterTest, ExtremeValuesKeepEveryDigitAndTheirSign) {
  TempDir dir;
  const std::string path = dir.File("extreme.jsonl");
  RequestRecord record = Numbered(0);
  record.scheduled = -5;  // an offset before the measurement start keeps its sign
  record.start = INT64_MAX - 3;
  record.ttfb = INT64_MAX - 2;
  record.end = INT64_MAX;
  record.status = UINT16_MAX;
  record.bytes_in = static_cast<uint64_t>(INT64_MAX);
  record.error = ErrorClass::kCancelled;
  WriteAll(path, {record, record});
  const std::vector<std::string> lines = Lines(ReadFile(path));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(nlohmann::ordered_json::parse(lines[0]), Expected(record));
}

TEST(RecordsWriterTest, ManyBatchesRoundTripThroughBothFormats) {
  std::vector<RequestRecord> records;
  for (int64_t i = 0; i < 20'000; ++i) {
    records.push_back(Numbered(i));
  }
  TempDir dir;
  for (const std::string name : {"many.jsonl", "many.csv"}) {
    const std::string path = dir.File(name);
    absl::StatusOr<std::unique_ptr<RecordsWriter>> writer = RecordsWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    for (size_t i = 0; i < records.size(); i += 1000) {
      (*writer)->Write(std::span<const RequestRecord>(records).subspan(i, 1000));
    }
    ASSERT_TRUE((*writer)->Close().ok());
    std::vector<std::string> lines = Lines(ReadFile(path));
    const bool csv = name.ends_with(".csv");
    if (csv) {
      ASSERT_FALSE(lines.empty());
      lines.erase(lines.begin());
    }
    ASSERT_EQ(lines.size(), records.size()) << name;
    for (size_t i = 0; i < records.size(); i += 997) {
      const nlohmann::ordered_json expected = Expected(records[i]);
      if (!csv) {
        EXPECT_EQ(nlohmann::ordered_json::parse(lines[i]), expected) << lines[i];
        continue;
      }
      // The CSV row is the JSON line's values, with empty fields for null.
      std::string wanted;
      for (const auto& item : expected.items()) {
        wanted += wanted.empty() && item.key() == kColumns.front() ? "" : ",";
        if (item.value().is_string()) {
          wanted += item.value().get<std::string>();
        } else if (!item.value().is_null()) {
          wanted += item.value().dump();
        }
      }
      EXPECT_EQ(lines[i], wanted);
    }
  }
}

TEST(RecordsWriterTest, EveryLineNamesItsAgentAndOddNamesAreMadeSafe) {
  TempDir dir;
  const std::string path = dir.File("agents.jsonl");
  auto writer = RecordsWriter::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  const std::vector<RequestRecord> records = SampleRecords();
  (*writer)->Write(std::span<const RequestRecord>(records).first(1), "agent-1.example:7070");
  (*writer)->Write(std::span<const RequestRecord>(records).subspan(1), "we\"ird\nname");
  ASSERT_TRUE((*writer)->Close().ok());
  const std::vector<std::string> lines = Lines(ReadFile(path));
  ASSERT_EQ(lines.size(), records.size());
  EXPECT_EQ(nlohmann::json::parse(lines[0])["agent"], "agent-1.example:7070");
  for (size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(nlohmann::json::parse(lines[i])["agent"], "we_ird_name") << lines[i];
  }
}

TEST(RecordsWriterTest, OpenRefusesADirectoryAndNamesThePath) {
  TempDir dir;
  const std::string directory = dir.File("a-directory.jsonl");
  ASSERT_EQ(mkdir(directory.c_str(), 0700), 0);
  absl::StatusOr<std::unique_ptr<RecordsWriter>> writer = RecordsWriter::Open(directory);
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(writer.status().message(), "--save-records: ")) << writer.status();
  EXPECT_NE(writer.status().message().find(directory), std::string_view::npos) << writer.status();
}

}  // namespace
}  // namespace barrage::coordinator
