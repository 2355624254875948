#include "barrage/agent/record_ring.h"

#include <thread>

#include "gtest/gtest.h"

namespace barrage::agent {
namespace {

common::RequestRecord RecordWithIndex(uint64_t index) {
  common::RequestRecord record;
  record.arrival_index = index;
  record.end = static_cast<common::Nanos>(index) * 3;
  return record;
}

TEST(RecordRingTest, DrainsWhatWasPushedInOrder) {
  RecordRing ring(8);
  for (uint64_t i = 0; i < 5; ++i) ASSERT_TRUE(ring.Push(RecordWithIndex(i)));
  std::vector<common::RequestRecord> out;
  EXPECT_EQ(ring.Drain(&out), 5u);
  ASSERT_EQ(out.size(), 5u);
  for (uint64_t i = 0; i < 5; ++i) EXPECT_EQ(out[i].arrival_index, i);
  EXPECT_EQ(ring.Drain(&out), 0u);
}

TEST(RecordRingTest, RefusesWhenFullAndAcceptsAgainAfterDrain) {
  RecordRing ring(4);
  for (uint64_t i = 0; i < 4; ++i) ASSERT_TRUE(ring.Push(RecordWithIndex(i)));
  EXPECT_FALSE(ring.Push(RecordWithIndex(99)));
  std::vector<common::RequestRecord> out;
  EXPECT_EQ(ring.Drain(&out), 4u);
  // Wraps around the end of the storage.
  for (uint64_t i = 4; i < 8; ++i) ASSERT_TRUE(ring.Push(RecordWithIndex(i)));
  out.clear();
  ring.Drain(&out);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out.front().arrival_index, 4u);
  EXPECT_EQ(out.back().arrival_index, 7u);
}

TEST(RecordRingTest, CapacityRoundsUpToAPowerOfTwo) {
  RecordRing ring(5);
  int accepted = 0;
  while (ring.Push(RecordWithIndex(0))) ++accepted;
  EXPECT_EQ(accepted, 8);
}

TEST(RecordRingTest, OneProducerOneConsumerLoseNothing) {
  constexpr uint64_t kRecords = 1'000'000;
  RecordRing ring(1024);
  uint64_t refused = 0;
  std::thread producer([&] {
    for (uint64_t i = 0; i < kRecords;) {
      if (ring.Push(RecordWithIndex(i))) {
        ++i;
      } else {
        ++refused;
        std::this_thread::yield();
      }
    }
  });
  std::vector<common::RequestRecord> out;
  out.reserve(kRecords);
  while (out.size() < kRecords) {
    if (ring.Drain(&out) == 0) std::this_thread::yield();
  }
  producer.join();
  for (uint64_t i = 0; i < kRecords; ++i) {
    ASSERT_EQ(out[i].arrival_index, i);
    ASSERT_EQ(out[i].end, static_cast<common::Nanos>(i) * 3);
  }
}

}  // namespace
}  // namespace barrage::agent
