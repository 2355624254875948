#pragma once

#include <deque>
#include <utility>

namespace barrage::common {

// Messages waiting for a gRPC stream that allows one write in flight: the front is the one being
// written. Both ends of the Run stream use it. Not thread-safe: the owner guards it with its own
// mutex and calls StartWrite outside that mutex with what Push or Pop returned (references to
// queued messages stay valid until they are popped).
template <typename Message>
class WriteQueue {
 public:
  // Queues a message. @return the message to start writing now, or nullptr when a write is
  // already in flight (this one will follow).
  const Message* Push(Message message) {
    queue_.push_back(std::move(message));
    if (writing_) {
      return nullptr;
    }
    writing_ = true;
    return &queue_.front();
  }

  // The write in flight has completed. @return the next message to write, or nullptr when the
  // queue is now idle.
  const Message* Pop() {
    queue_.pop_front();
    if (queue_.empty()) {
      writing_ = false;
      return nullptr;
    }
    return &queue_.front();
  }

  // Drops every message not yet being written (the stream broke). A write in flight still gets
  // its Pop.
  void DropWaiting() {
    while (queue_.size() > 1) {
      queue_.pop_back();
    }
  }

  const Message& front() const { return queue_.front(); }
  bool writing() const { return writing_; }

 private:
  std::deque<Message> queue_;
  bool writing_ = false;
};

}  // namespace barrage::common
