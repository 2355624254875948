#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "barrage/common/record.h"

namespace barrage::agent {

// A fixed-capacity single-producer single-consumer ring of records: a worker thread pushes each
// finished request, the agent's collector drains them about every 100 ms. Push is a slot write
// and one release store: no lock, no read-modify-write, no allocation. When the collector falls
// behind and the ring is full, Push refuses the record and the worker counts it as not streamed
// (its own histograms stay exact).
class RecordRing {
 public:
  explicit RecordRing(size_t capacity_pow2);

  // Producer side. @return false when full.
  bool Push(const common::RequestRecord& record);

  // Consumer side: appends everything available to `out`. @return how many were taken.
  size_t Drain(std::vector<common::RequestRecord>* out);

 private:
  std::vector<common::RequestRecord> slots_;
  const uint64_t mask_;
  alignas(64) std::atomic<uint64_t> head_{0};  // next to read, written by the consumer
  alignas(64) std::atomic<uint64_t> tail_{0};  // next to write, written by the producer
  uint64_t cached_head_ = 0;                   // producer's view of head_
};

}  // namespace barrage::agent
