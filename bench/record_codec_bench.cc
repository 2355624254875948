#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "barrage/common/arrival.h"
#include "barrage/common/record_codec.h"
#include "barrage/v1/agent.pb.h"

namespace barrage::common {
namespace {

constexpr size_t kBatchRecords = 16'384;

// A batch as a worker hands it over: mostly in schedule order, a few late completions.
std::vector<RequestRecord> BatchRecords() {
  Rng rng(1);
  std::vector<RequestRecord> records(kBatchRecords);
  for (size_t i = 0; i < records.size(); ++i) {
    RequestRecord& record = records[i];
    record.arrival_index = i + 16 - rng.NextU64() % 16;
    record.scheduled = static_cast<Nanos>(record.arrival_index) * 100'000;
    record.start = record.scheduled + static_cast<Nanos>(rng.NextU64() % 20'000);
    record.ttfb = record.start + 200'000 + static_cast<Nanos>(rng.NextU64() % 800'000);
    record.end = record.ttfb + static_cast<Nanos>(rng.NextU64() % 100'000);
    record.bytes_in = 250 + rng.NextU64() % 64;
    record.bytes_out = 80;
    record.phases.wait = record.ttfb - record.start;
    record.phases.receive = record.end - record.ttfb;
    record.status = 200;
  }
  return records;
}

void BM_EncodeRecordBatch(benchmark::State& state) {
  const std::vector<RequestRecord> records = BatchRecords();
  v1::RecordBatch batch;  // reused, as a worker reuses it
  for (auto _ : state) {
    EncodeRecordBatch(records, &batch);
    benchmark::DoNotOptimize(batch.scheduled_delta_ns_size());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kBatchRecords));
  state.counters["wire_bytes_per_record"] =
      static_cast<double>(batch.ByteSizeLong()) / static_cast<double>(kBatchRecords);
}
BENCHMARK(BM_EncodeRecordBatch);

void BM_DecodeRecordBatch(benchmark::State& state) {
  v1::RecordBatch batch;
  EncodeRecordBatch(BatchRecords(), &batch);
  std::vector<RequestRecord> decoded;
  decoded.reserve(kBatchRecords);
  for (auto _ : state) {
    decoded.clear();
    if (!DecodeRecordBatch(batch, &decoded).ok()) {
      state.SkipWithError("decode failed");
      break;
    }
    benchmark::DoNotOptimize(decoded.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kBatchRecords));
}
BENCHMARK(BM_DecodeRecordBatch);

void BM_SerializeAndParseRecordBatch(benchmark::State& state) {
  v1::RecordBatch batch;
  EncodeRecordBatch(BatchRecords(), &batch);
  std::string wire;
  v1::RecordBatch parsed;
  for (auto _ : state) {
    batch.SerializeToString(&wire);
    parsed.ParseFromString(wire);
    benchmark::DoNotOptimize(parsed.status_size());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kBatchRecords));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(wire.size()));
}
BENCHMARK(BM_SerializeAndParseRecordBatch);

}  // namespace
}  // namespace barrage::common
