#include "barrage/agent/record_ring.h"

#include <bit>

namespace barrage::agent {

RecordRing::RecordRing(size_t capacity_pow2)
    : slots_(std::bit_ceil(capacity_pow2 < 2 ? size_t{2} : capacity_pow2)),
      mask_(slots_.size() - 1) {}

bool RecordRing::Push(const common::RequestRecord& record) {
  const uint64_t tail = tail_.load(std::memory_order_relaxed);
  if (tail - cached_head_ >= slots_.size()) {
    // Only re-read the consumer's position when our cached view says full.
    cached_head_ = head_.load(std::memory_order_acquire);
    if (tail - cached_head_ >= slots_.size()) return false;
  }
  slots_[tail & mask_] = record;
  tail_.store(tail + 1, std::memory_order_release);
  return true;
}

size_t RecordRing::Drain(std::vector<common::RequestRecord>* out) {
  const uint64_t head = head_.load(std::memory_order_relaxed);
  const uint64_t tail = tail_.load(std::memory_order_acquire);
  for (uint64_t i = head; i != tail; ++i) out->push_back(slots_[i & mask_]);
  head_.store(tail, std::memory_order_release);
  return static_cast<size_t>(tail - head);
}

}  // namespace barrage::agent
