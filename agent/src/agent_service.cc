#include "barrage/agent/agent_service.h"

#include <condition_variable>
#include <iostream>
#include <mutex>
#include <thread>

#include "barrage/agent/local_agent_session.h"
#include "barrage/common/share_codec.h"
#include "barrage/common/time.h"
#include "barrage/common/write_queue.h"

namespace barrage::agent {
namespace {

using common::Nanos;

// Queued record batches beyond this are dropped (and counted as not streamed) rather than
// buffered: a slow coordinator must not make the agent's memory grow without bound. 64 batches
// are several seconds of records even at high rates.
constexpr size_t kMaxQueuedBatches = 64;
constexpr auto kWatchInterval = std::chrono::milliseconds(50);

bool ConstantTimeEquals(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) {
    return false;
  }
  unsigned char difference = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return difference == 0;
}

// A Run call refused before anything happens (bad token).
class RefusedRun final : public grpc::ServerBidiReactor<v1::CoordinatorMessage, v1::AgentMessage> {
 public:
  explicit RefusedRun(grpc::Status status) { Finish(std::move(status)); }
  void OnDone() override { delete this; }
};

// One Run stream: pings, then at most one test, streamed back to the coordinator. Deletes itself
// in OnDone, after its test has ended.
class RunReactor final : public grpc::ServerBidiReactor<v1::CoordinatorMessage, v1::AgentMessage>,
                         public common::AgentMessageSink {
 public:
  RunReactor(AgentService* service, std::string peer) : service_(service), peer_(std::move(peer)) {
    last_heard_.store(common::MonotonicNowNs());
    StartRead(&incoming_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      // The coordinator closed its side or the stream broke: the lease is over.
      StopTest(0);
      std::lock_guard<std::mutex> lock(mutex_);
      reads_done_ = true;
      if (!test_started_ && !final_queued_) {
        FinishLocked(grpc::Status::OK);
      }
      return;
    }
    last_heard_.store(common::MonotonicNowNs());
    switch (incoming_.kind_case()) {
      case v1::CoordinatorMessage::kPing: {
        v1::AgentMessage pong;
        pong.mutable_pong()->set_id(incoming_.ping().id());
        pong.mutable_pong()->set_agent_ns(common::MonotonicNowNs());
        Send(std::move(pong));
        break;
      }
      case v1::CoordinatorMessage::kStart:
        HandleStart(incoming_.start());
        break;
      case v1::CoordinatorMessage::kStop:
        StopTest(incoming_.stop().grace_ns());
        break;
      default:
        break;
    }
    StartRead(&incoming_);
  }

  void OnWriteDone(bool ok) override {
    const v1::AgentMessage* next = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queued_batches_ -= outgoing_.front().has_records() ? 1 : 0;
      if (!ok) {
        // The coordinator is gone: nobody will read what we have.
        broken_ = true;
        outgoing_.DropWaiting();
        queued_batches_ = 0;
      }
      next = outgoing_.Pop();
      if (next == nullptr) {
        if (final_queued_ || broken_) {
          FinishLocked(broken_ ? grpc::Status(grpc::StatusCode::CANCELLED, "stream broken")
                               : grpc::Status::OK);
        }
      }
    }
    if (!ok) {
      StopTest(0);
    }
    if (next != nullptr) {
      StartWrite(next);
    }
  }

  void OnCancel() override { StopTest(0); }

  void OnDone() override {
    StopTest(0);
    if (watcher_.joinable()) {
      watcher_.join();
    }
    delete this;
  }

  // From the test's collector thread: batches, heartbeats, and finally Finished.
  void OnMessage(const std::string&, const v1::AgentMessage& message) override {
    if (message.has_records()) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (queued_batches_ >= kMaxQueuedBatches) {
        not_streamed_ += static_cast<uint64_t>(message.records().scheduled_delta_ns_size());
        return;
      }
    }
    v1::AgentMessage copy = message;
    const bool final = message.has_finished() || message.has_failure();
    if (message.has_finished()) {
      std::lock_guard<std::mutex> lock(mutex_);
      v1::Totals* totals = copy.mutable_finished()->mutable_totals();
      totals->set_records_not_streamed(totals->records_not_streamed() + not_streamed_);
      completed_ = totals->completed();
      failed_ = totals->failed();
    }
    Send(std::move(copy), final);
    if (final) {
      std::lock_guard<std::mutex> lock(mutex_);
      test_done_ = true;
      wake_.notify_all();
    }
  }

 private:
  void HandleStart(const v1::Start& start) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (test_started_) {
        return;  // one test per stream; a second Start is ignored
      }
    }
    if (start.protocol_version() != service_->identity().protocol_version) {
      SendFailure("protocol version " + std::to_string(start.protocol_version()) +
                  " is not this agent's " + std::to_string(service_->identity().protocol_version) +
                  "; run the same barrage version on coordinator and agents");
      return;
    }
    absl::StatusOr<common::AgentShare> share = common::DecodeShare(start.share());
    if (!share.ok()) {
      SendFailure("invalid share: " + std::string(share.status().message()));
      return;
    }
    if (!service_->TryClaim()) {
      SendFailure("busy: agent " + service_->identity().name +
                  " is running a test for another coordinator; wait for it to end or use "
                  "another agent");
      return;
    }
    lease_timeout_ =
        start.lease_timeout_ns() > 0 ? start.lease_timeout_ns() : 5 * common::kNanosPerSecond;
    session_ = MakeLocalAgentSession(service_->identity().name);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      test_started_ = true;
    }
    if (absl::Status started = session_->Start(*share, start.start_at_ns(), this); !started.ok()) {
      service_->Release();
      SendFailure("could not start: " + std::string(started.message()));
      return;
    }
    std::cerr << "barrage-agent " << service_->identity().name << ": test started for " << peer_
              << " (slice " << share->slice_index << " of " << share->slice_count << ")"
              << std::endl;
    v1::AgentMessage ready;
    ready.mutable_ready();
    Send(std::move(ready));
    watcher_ = std::thread([this] { Watch(); });
  }

  // Enforces the lease while the test runs; releases the agent when the test has ended.
  void Watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!test_done_) {
      wake_.wait_for(lock, kWatchInterval);
      const Nanos silent = common::MonotonicNowNs() - last_heard_.load();
      if (!test_done_ && silent > lease_timeout_ && !lease_expired_) {
        lease_expired_ = true;
        lock.unlock();
        std::cerr << "barrage-agent " << service_->identity().name
                  << ": no word from the coordinator for " << common::FormatDuration(silent)
                  << ": stopping" << std::endl;
        StopTest(0);
        lock.lock();
      }
    }
    lock.unlock();
    (void)session_->Wait();
    std::cerr << "barrage-agent " << service_->identity().name << ": test ended: completed "
              << completed_ << ", failed " << failed_ << std::endl;
    service_->Release();
  }

  void StopTest(Nanos grace) {
    std::lock_guard<std::mutex> lock(session_mutex_);
    if (session_ != nullptr) {
      session_->Stop(grace);
    }
  }

  void SendFailure(std::string reason) {
    v1::AgentMessage failure;
    failure.mutable_failure()->set_reason(std::move(reason));
    Send(std::move(failure), /*final=*/true);
  }

  void Send(v1::AgentMessage message, bool final = false) {
    const v1::AgentMessage* next = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (final_queued_ || broken_ || finished_) {
        return;
      }
      final_queued_ = final;
      queued_batches_ += message.has_records() ? 1 : 0;
      next = outgoing_.Push(std::move(message));
    }
    if (next != nullptr) {
      StartWrite(next);
    }
  }

  void FinishLocked(grpc::Status status) {
    if (!finished_) {
      finished_ = true;
      Finish(std::move(status));
    }
  }

  AgentService* const service_;
  const std::string peer_;
  v1::CoordinatorMessage incoming_;  // read side: one read at a time
  std::atomic<Nanos> last_heard_{0};
  Nanos lease_timeout_ = 5 * common::kNanosPerSecond;

  std::mutex session_mutex_;
  common::AgentSessionPtr session_;  // set once, by HandleStart, before the watcher starts
  std::thread watcher_;

  std::mutex mutex_;
  std::condition_variable wake_;
  common::WriteQueue<v1::AgentMessage> outgoing_;
  size_t queued_batches_ = 0;
  uint64_t not_streamed_ = 0;
  bool final_queued_ = false;
  bool broken_ = false;
  bool finished_ = false;
  bool reads_done_ = false;
  bool test_started_ = false;
  bool test_done_ = false;
  bool lease_expired_ = false;
  uint64_t completed_ = 0;
  uint64_t failed_ = 0;
};

}  // namespace

AgentService::AgentService(AgentIdentity identity) : identity_(std::move(identity)) {}

bool AgentService::Authorized(const grpc::CallbackServerContext& context) const {
  if (identity_.token.empty()) {
    return true;
  }
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find(kTokenMetadataKey);
  if (found == metadata.end()) {
    return false;
  }
  return ConstantTimeEquals(std::string(found->second.data(), found->second.size()),
                            identity_.token);
}

grpc::ServerUnaryReactor* AgentService::Hello(grpc::CallbackServerContext* context,
                                              const v1::HelloRequest*, v1::AgentInfo* info) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!Authorized(*context)) {
    reactor->Finish(
        grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "wrong or missing agent token"));
    return reactor;
  }
  info->set_name(identity_.name);
  info->set_version(identity_.version);
  info->set_protocol_version(identity_.protocol_version);
  info->set_cores(std::max(1u, std::thread::hardware_concurrency()));
  info->set_busy(busy_.load());
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerBidiReactor<v1::CoordinatorMessage, v1::AgentMessage>* AgentService::Run(
    grpc::CallbackServerContext* context) {
  if (!Authorized(*context)) {
    return new RefusedRun(
        grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "wrong or missing agent token"));
  }
  return new RunReactor(this, context->peer());
}

}  // namespace barrage::agent
