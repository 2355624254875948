// How many records per second the coordinator merges from a stream of record batches (issue 3:
// target 2 million per second on one core). Items per second are records per second.
//
//   BM_MergeOnMessage/*  RunMerger::OnMessage on parsed AgentMessages (decode, RunStats::Add and,
//                        with a writer, one JSONL line per record).
//   BM_MergeWire/*       ParseFromString of the serialized AgentMessage, then OnMessage: what one
//                        gRPC stream costs the coordinator beyond gRPC itself.
//   BM_MergePart*        One step alone, to show where the time goes.
//
// Writers: no_writer; *_dev_null (formatting and stdio, the bytes go to /dev/null through a
// records.jsonl or records.csv symlink); *_file (a real file in $TMPDIR, truncated every
// kReopenBatches batches, outside the timed region).
// bench/merge_rate.sh runs these pinned to one core.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "barrage/common/arrival.h"
#include "barrage/common/record_codec.h"
#include "barrage/coordinator/records_writer.h"
#include "barrage/coordinator/run_merger.h"
#include "barrage/coordinator/run_stats.h"
#include "barrage/v1/agent.pb.h"

namespace barrage::coordinator {
namespace {

using common::ErrorClass;
using common::Nanos;
using common::RequestRecord;

constexpr size_t kBatchRecords = 16'384;
constexpr size_t kBatchCount = 4;           // consecutive batches of one run, replayed in turn
constexpr Nanos kArrivalGap = 50'000;       // one agent sending 20,000 requests per second
constexpr Nanos kTimeout = 10'000'000'000;  // a timed-out request ends 10 s after its send
constexpr size_t kReopenBatches = 32;       // *_file: at most about 130 MB, then truncate
const std::string kAgent = "agent-1";

// A run against a service with log-normal latency (median 2 ms), about 1% errors (5xx, timeouts,
// refused connections), a new connection now and then, and a worker that is sometimes late.
// Returned in completion order, as agents stream them: arrival indices and scheduled instants
// rise, with the small disorder that different latencies cause.
std::vector<RequestRecord> RunRecords() {
  common::Rng rng(7);
  std::vector<RequestRecord> records(kBatchRecords * kBatchCount);
  for (size_t i = 0; i < records.size(); ++i) {
    RequestRecord& record = records[i];
    record.arrival_index = i;
    record.scheduled = static_cast<Nanos>(i) * kArrivalGap;
    const bool late = rng.NextU64() % 64 == 0;
    const uint64_t queue = late ? 20'000 + rng.NextU64() % 500'000 : rng.NextU64() % 8'000;
    record.start = record.scheduled + static_cast<Nanos>(queue);
    record.bytes_out = 120;
    const uint64_t roll = rng.NextU64() % 1000;
    if (roll < 2) {
      record.error = ErrorClass::kConnect;
      record.end = record.start + 50'000 + static_cast<Nanos>(rng.NextU64() % 200'000);
      record.bytes_out = 0;
      continue;
    }
    if (rng.NextU64() % 256 == 0) {
      record.phases.connect = 40'000 + static_cast<Nanos>(rng.NextU64() % 80'000);
    }
    record.phases.send = 5'000 + static_cast<Nanos>(rng.NextU64() % 20'000);
    if (roll < 5) {
      record.error = ErrorClass::kTimeout;
      record.end = record.start + kTimeout;
      continue;
    }
    const double wait = std::exp(std::log(2e6) + 0.6 * rng.NextStandardNormal());
    record.phases.wait = std::clamp<Nanos>(static_cast<Nanos>(wait), 100'000, 2'000'000'000);
    record.ttfb = record.start + record.phases.connect + record.phases.send + record.phases.wait;
    record.bytes_in = 250 + rng.NextU64() % 1'024;
    record.phases.receive = 2'000 + static_cast<Nanos>(record.bytes_in * 20);
    record.end = record.ttfb + record.phases.receive;
    if (roll < 12) {
      record.error = ErrorClass::kHttp5xx;
      record.status = 503;
    } else {
      record.status = 200;
    }
  }
  std::stable_sort(records.begin(), records.end(),
                   [](const RequestRecord& a, const RequestRecord& b) { return a.end < b.end; });
  return records;
}

// The same run three ways: decoded records, parsed messages and serialized messages.
struct Batches {
  std::vector<RequestRecord> records;
  std::vector<v1::AgentMessage> messages;
  std::vector<std::string> wire;

  std::span<const RequestRecord> Records(size_t batch) const {
    return std::span<const RequestRecord>(records).subspan(batch * kBatchRecords, kBatchRecords);
  }
  double WireBytesPerRecord() const {
    size_t bytes = 0;
    for (const std::string& message : wire) bytes += message.size();
    return static_cast<double>(bytes) / static_cast<double>(records.size());
  }
};

const Batches& RunBatches() {
  static const Batches* const batches = [] {
    auto* built = new Batches;
    built->records = RunRecords();
    for (size_t i = 0; i < kBatchCount; ++i) {
      v1::AgentMessage& message = built->messages.emplace_back();
      common::EncodeRecordBatch(built->Records(i), message.mutable_records());
      built->wire.push_back(message.SerializeAsString());
    }
    return built;
  }();
  return *batches;
}

enum class WriterKind { kNone, kJsonlDevNull, kJsonlFile, kCsvDevNull, kCsvFile };

bool IsCsv(WriterKind kind) {
  return kind == WriterKind::kCsvDevNull || kind == WriterKind::kCsvFile;
}
bool IsFile(WriterKind kind) {
  return kind == WriterKind::kJsonlFile || kind == WriterKind::kCsvFile;
}

// A RunMerger with the records writer of one case, in a private temporary directory.
class MergeTarget {
 public:
  explicit MergeTarget(WriterKind kind) : kind_(kind) {
    if (kind_ == WriterKind::kNone) {
      merger_ = std::make_unique<RunMerger>(nullptr);
      return;
    }
    std::string pattern = std::filesystem::temp_directory_path() / "barrage-merge-bench.XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      error_ = "cannot make a temporary directory";
      return;
    }
    directory_ = pattern;
    path_ = directory_ / (IsCsv(kind_) ? "records.csv" : "records.jsonl");
    if (!IsFile(kind_)) {
      std::error_code error;
      std::filesystem::create_symlink("/dev/null", path_, error);
      if (error) {
        error_ = "cannot link " + path_ + " to /dev/null: " + error.message();
        return;
      }
    }
    Reopen();
  }

  ~MergeTarget() {
    merger_ = nullptr;
    writer_ = nullptr;
    if (!directory_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(directory_, ignored);
    }
  }

  // Called before every batch; truncates a real file now and then so the disk does not fill.
  // @return false (and the reason in error()) when the writer failed.
  bool BeforeBatch(benchmark::State& state) {
    if (!IsFile(kind_) || ++batches_ < kReopenBatches) return error_.empty();
    state.PauseTiming();
    batches_ = 0;
    Reopen();
    state.ResumeTiming();
    return error_.empty();
  }

  // Closes the writer (and drops the merger that writes to it).
  // @return the bytes written to real files so far (0 for /dev/null).
  uint64_t Finish() {
    Close();
    return file_bytes_;
  }

  RunMerger& merger() { return *merger_; }
  RecordsWriter* writer() { return writer_.get(); }
  const std::string& error() const { return error_; }

 private:
  void Close() {
    if (writer_ == nullptr) return;
    if (!writer_->Close().ok()) error_ = "writing the records failed";
    merger_ = nullptr;
    writer_ = nullptr;
    std::error_code ignored;
    if (IsFile(kind_)) file_bytes_ += std::filesystem::file_size(path_, ignored);
  }

  void Reopen() {
    Close();
    if (!error_.empty()) return;
    absl::StatusOr<std::unique_ptr<RecordsWriter>> writer = RecordsWriter::Open(path_);
    if (!writer.ok()) {
      error_ = std::string(writer.status().message());
      return;
    }
    writer_ = *std::move(writer);
    merger_ = std::make_unique<RunMerger>(writer_.get());
  }

  WriterKind kind_;
  std::filesystem::path directory_;
  std::string path_;
  std::unique_ptr<RecordsWriter> writer_;
  std::unique_ptr<RunMerger> merger_;
  std::string error_;
  size_t batches_ = 0;
  uint64_t file_bytes_ = 0;
};

void SetRecordsProcessed(benchmark::State& state) {
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kBatchRecords));
}

// Closes the target's writer and, for a real file, says how long a line is.
void SetFileBytes(benchmark::State& state, MergeTarget& target, WriterKind kind) {
  const uint64_t bytes = target.Finish();
  if (IsFile(kind) && state.iterations() > 0) {
    state.counters["file_bytes_per_record"] =
        static_cast<double>(bytes) / static_cast<double>(state.iterations() * kBatchRecords);
  }
}

// The merge path on batches already parsed, with and without a records writer.
void BM_MergeOnMessage(benchmark::State& state, WriterKind kind) {
  const Batches& batches = RunBatches();
  MergeTarget target(kind);
  size_t next = 0;
  for (auto _ : state) {
    if (!target.BeforeBatch(state)) {
      state.SkipWithError(target.error().c_str());
      break;
    }
    target.merger().OnMessage(kAgent, batches.messages[next]);
    next = (next + 1) % kBatchCount;
  }
  SetRecordsProcessed(state);
  // No agent has Finished, so Reconcile says so once; any other line is a malformed batch.
  if (!state.error_occurred() && target.merger().Reconcile().size() != 1) {
    state.SkipWithError("the merge did not add up");
  }
  SetFileBytes(state, target, kind);
}
BENCHMARK_CAPTURE(BM_MergeOnMessage, no_writer, WriterKind::kNone);
BENCHMARK_CAPTURE(BM_MergeOnMessage, jsonl_dev_null, WriterKind::kJsonlDevNull);
BENCHMARK_CAPTURE(BM_MergeOnMessage, jsonl_file, WriterKind::kJsonlFile);

// The coordinator's side of the wire: parse each serialized message into a reused
// AgentMessage (as a callback reactor reuses its read buffer), then merge it.
void BM_MergeWire(benchmark::State& state, WriterKind kind) {
  const Batches& batches = RunBatches();
  MergeTarget target(kind);
  v1::AgentMessage message;
  size_t next = 0;
  for (auto _ : state) {
    if (!target.BeforeBatch(state)) {
      state.SkipWithError(target.error().c_str());
      break;
    }
    if (!message.ParseFromString(batches.wire[next])) {
      state.SkipWithError("parse failed");
      break;
    }
    target.merger().OnMessage(kAgent, message);
    next = (next + 1) % kBatchCount;
  }
  SetRecordsProcessed(state);
  state.counters["wire_bytes_per_record"] = batches.WireBytesPerRecord();
  if (!state.error_occurred() && target.merger().Reconcile().size() != 1) {
    state.SkipWithError("the merge did not add up");
  }
  SetFileBytes(state, target, kind);
}
BENCHMARK_CAPTURE(BM_MergeWire, no_writer, WriterKind::kNone);
BENCHMARK_CAPTURE(BM_MergeWire, jsonl_dev_null, WriterKind::kJsonlDevNull);
BENCHMARK_CAPTURE(BM_MergeWire, jsonl_file, WriterKind::kJsonlFile);

// Each step alone.
void BM_MergePartParse(benchmark::State& state) {
  const Batches& batches = RunBatches();
  v1::AgentMessage message;
  size_t next = 0;
  for (auto _ : state) {
    if (!message.ParseFromString(batches.wire[next])) {
      state.SkipWithError("parse failed");
      break;
    }
    benchmark::DoNotOptimize(message.records().status_size());
    next = (next + 1) % kBatchCount;
  }
  SetRecordsProcessed(state);
}
BENCHMARK(BM_MergePartParse);

void BM_MergePartDecode(benchmark::State& state) {
  const Batches& batches = RunBatches();
  std::vector<RequestRecord> decoded;
  decoded.reserve(kBatchRecords);
  size_t next = 0;
  for (auto _ : state) {
    decoded.clear();
    if (!common::DecodeRecordBatch(batches.messages[next].records(), &decoded).ok()) {
      state.SkipWithError("decode failed");
      break;
    }
    benchmark::DoNotOptimize(decoded.data());
    next = (next + 1) % kBatchCount;
  }
  SetRecordsProcessed(state);
}
BENCHMARK(BM_MergePartDecode);

void BM_MergePartRunStatsAdd(benchmark::State& state) {
  const Batches& batches = RunBatches();
  RunStats stats;
  size_t next = 0;
  for (auto _ : state) {
    for (const RequestRecord& record : batches.Records(next)) stats.Add(record);
    benchmark::DoNotOptimize(stats.completed);
    next = (next + 1) % kBatchCount;
  }
  SetRecordsProcessed(state);
}
BENCHMARK(BM_MergePartRunStatsAdd);

// The records writer alone, as OnMessage calls it with one decoded batch.
void BM_MergePartWrite(benchmark::State& state, WriterKind kind) {
  const Batches& batches = RunBatches();
  MergeTarget target(kind);
  size_t next = 0;
  for (auto _ : state) {
    if (!target.BeforeBatch(state)) {
      state.SkipWithError(target.error().c_str());
      break;
    }
    target.writer()->Write(batches.Records(next));
    next = (next + 1) % kBatchCount;
  }
  SetRecordsProcessed(state);
  SetFileBytes(state, target, kind);
}
BENCHMARK_CAPTURE(BM_MergePartWrite, jsonl_dev_null, WriterKind::kJsonlDevNull);
BENCHMARK_CAPTURE(BM_MergePartWrite, jsonl_file, WriterKind::kJsonlFile);
BENCHMARK_CAPTURE(BM_MergePartWrite, csv_dev_null, WriterKind::kCsvDevNull);
BENCHMARK_CAPTURE(BM_MergePartWrite, csv_file, WriterKind::kCsvFile);

}  // namespace
}  // namespace barrage::coordinator
