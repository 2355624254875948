#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "barrage/common/arrival.h"
#include "barrage/common/histogram.h"

namespace barrage::common {
namespace {

// Lognormal latencies around 1 ms with a tail to seconds, as a server under load gives.
std::vector<uint64_t> LatencyValues(size_t count) {
  Rng rng(1);
  std::vector<uint64_t> values(count);
  for (uint64_t& value : values) {
    value = static_cast<uint64_t>(std::exp(std::log(1e6) + 1.2 * rng.NextStandardNormal()));
  }
  return values;
}

void BM_HistogramRecord(benchmark::State& state) {
  const std::vector<uint64_t> values = LatencyValues(1 << 16);
  LatencyHistogram histogram;
  size_t i = 0;
  for (auto _ : state) {
    histogram.Record(values[i]);
    i = (i + 1) & (values.size() - 1);
  }
  benchmark::DoNotOptimize(histogram.count());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HistogramRecord);

void BM_HistogramMerge(benchmark::State& state) {
  LatencyHistogram source;
  for (uint64_t value : LatencyValues(100'000)) {
    source.Record(value);
  }
  LatencyHistogram target;
  for (auto _ : state) {
    target.Merge(source);
  }
  benchmark::DoNotOptimize(target.count());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HistogramMerge);

void BM_HistogramValueAtPercentile(benchmark::State& state) {
  LatencyHistogram histogram;
  for (uint64_t value : LatencyValues(100'000)) {
    histogram.Record(value);
  }
  const double percentile = static_cast<double>(state.range(0)) / 10.0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(histogram.ValueAtPercentile(percentile));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HistogramValueAtPercentile)->Arg(500)->Arg(990)->Arg(999);

}  // namespace
}  // namespace barrage::common
