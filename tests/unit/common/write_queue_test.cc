#include "barrage/common/write_queue.h"

#include <string>

#include "gtest/gtest.h"

namespace barrage::common {
namespace {

TEST(WriteQueueTest, OneWriteInFlightThenTheRestInOrder) {
  WriteQueue<std::string> queue;
  const std::string* first = queue.Push("a");
  ASSERT_NE(first, nullptr);  // idle: write it now
  EXPECT_EQ(*first, "a");
  EXPECT_TRUE(queue.writing());
  EXPECT_EQ(queue.Push("b"), nullptr);  // a write is in flight: b waits
  EXPECT_EQ(queue.Push("c"), nullptr);
  const std::string* next = queue.Pop();
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(*next, "b");
  next = queue.Pop();
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(*next, "c");
  EXPECT_EQ(queue.Pop(), nullptr);  // idle again
  EXPECT_FALSE(queue.writing());
  const std::string* again = queue.Push("d");
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(*again, "d");
}

TEST(WriteQueueTest, DropWaitingKeepsTheWriteInFlight) {
  WriteQueue<std::string> queue;
  ASSERT_NE(queue.Push("in flight"), nullptr);
  queue.Push("waiting 1");
  queue.Push("waiting 2");
  queue.DropWaiting();
  EXPECT_EQ(queue.front(), "in flight");  // still referenced by the write in flight
  EXPECT_EQ(queue.Pop(), nullptr);
  EXPECT_FALSE(queue.writing());
}

}  // namespace
}  // namespace barrage::common
