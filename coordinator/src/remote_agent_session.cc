#include "barrage/coordinator/remote_agent_session.h"

#include <condition_variable>
#include <mutex>
#include <thread>

#include "barrage/common/share_codec.h"
#include "barrage/common/write_queue.h"
#include "barrage/v1/agent.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace barrage::coordinator {
namespace {

using common::Nanos;

constexpr int kClockPings = 5;
constexpr Nanos kKeepAliveInterval = common::kNanosPerSecond;
constexpr char kTokenMetadataKey[] = "x-barrage-token";

std::chrono::system_clock::time_point DeadlineIn(Nanos from_now) {
  return std::chrono::system_clock::now() + std::chrono::nanoseconds(from_now);
}

absl::Status FromGrpc(const grpc::Status& status, const std::string& address) {
  switch (status.error_code()) {
    case grpc::StatusCode::UNAUTHENTICATED:
      return absl::UnauthenticatedError("agent " + address +
                                        " refused our token: check --agent-token-file or "
                                        "BARRAGE_AGENT_TOKEN against the agent's --token-file");
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return absl::UnavailableError("agent " + address +
                                    " is unreachable: check that barrage-agent runs there and "
                                    "listens on that address and port (" +
                                    status.error_message() + ")");
    default:
      return absl::UnknownError("agent " + address + ": " + status.error_message());
  }
}

}  // namespace

// The Run stream: one read and one write in flight at a time; what arrives goes to the sink.
class RemoteAgentSession::Stream final
    : public grpc::ClientBidiReactor<v1::CoordinatorMessage, v1::AgentMessage> {
 public:
  Stream(v1::Agent::Stub* stub, const RemoteAgentOptions& options) : options_(options) {
    if (!options.token.empty()) {
      context_.AddMetadata(kTokenMetadataKey, options.token);
    }
    stub->async()->Run(&context_, this);
    StartRead(&incoming_);
    AddHold();  // released when we stop writing, so OnDone waits for our last write
    StartCall();
  }

  // Blocks until a Pong for `id` arrives or the timeout passes. @return agent_ns, or nullopt.
  std::optional<Nanos> PingAndWait(uint64_t id, Nanos timeout) {
    v1::CoordinatorMessage ping;
    ping.mutable_ping()->set_id(id);
    Send(std::move(ping));
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait_for(lock, std::chrono::nanoseconds(timeout),
                   [&] { return done_ || last_pong_id_ == id; });
    if (last_pong_id_ != id) {
      return std::nullopt;
    }
    return last_pong_agent_ns_;
  }

  void SetSink(common::AgentMessageSink* sink, std::string name) {
    std::lock_guard<std::mutex> lock(mutex_);
    sink_ = sink;
    name_ = std::move(name);
    last_heard_ = common::MonotonicNowNs();
  }

  void Send(v1::CoordinatorMessage message) {
    const v1::CoordinatorMessage* next = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (writes_closed_ || done_) {
        return;
      }
      next = outgoing_.Push(std::move(message));
    }
    if (next != nullptr) {
      StartWrite(next);
    }
  }

  // No more messages from us: lets the agent finish the stream.
  void CloseWrites() {
    bool release = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (writes_closed_) {
        return;
      }
      writes_closed_ = true;
      release = !outgoing_.writing();
    }
    if (release) {
      StartWritesDone();
      RemoveHold();
    }
  }

  void OnWriteDone(bool ok) override {
    const v1::CoordinatorMessage* next = nullptr;
    bool release = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!ok) {
        outgoing_.DropWaiting();
        writes_closed_ = true;
      }
      next = outgoing_.Pop();
      if (next == nullptr) {
        release = writes_closed_ && !released_;
        released_ = released_ || release;
      }
    }
    if (next != nullptr) {
      StartWrite(next);
    } else if (release) {
      if (ok) {
        StartWritesDone();
      }
      RemoveHold();
    }
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      return;  // OnDone follows
    }
    common::AgentMessageSink* sink = nullptr;
    std::string name;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      last_heard_ = common::MonotonicNowNs();
      if (incoming_.has_pong()) {
        last_pong_id_ = incoming_.pong().id();
        last_pong_agent_ns_ = incoming_.pong().agent_ns();
        wake_.notify_all();
      } else if (incoming_.has_ready()) {
        ready_ = true;
      } else {
        if (incoming_.has_finished() || incoming_.has_failure()) {
          final_received_ = true;
          if (incoming_.has_failure()) {
            failure_ = incoming_.failure().reason();
          }
        }
        sink = sink_;
        name = name_;
      }
    }
    if (sink != nullptr) {
      sink->OnMessage(name, incoming_);
    }
    bool final_received = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      final_received = final_received_;
    }
    if (final_received) {
      CloseWrites();
    }
    StartRead(&incoming_);
  }

  void OnDone(const grpc::Status& status) override {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
    status_ = status;
    wake_.notify_all();
  }

  void Cancel() { context_.TryCancel(); }

  // Starts the keeper: a keep-alive ping every second (the agent's lease), and the end of an
  // agent that is silent past the heartbeat timeout. Runs until the stream ends.
  void StartKeeper() {
    keeper_ = std::thread([this] { Keep(); });
  }

  // Blocks until the stream has ended.
  void WaitForEnd() {
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait(lock, [this] { return done_; });
    lock.unlock();
    if (keeper_.joinable() && keeper_.get_id() != std::this_thread::get_id()) {
      keeper_.join();
    }
  }

  ~Stream() override {
    if (keeper_.joinable()) {
      keeper_.join();
    }
  }

  bool done() {
    std::lock_guard<std::mutex> lock(mutex_);
    return done_;
  }
  bool final_received() {
    std::lock_guard<std::mutex> lock(mutex_);
    return final_received_;
  }
  bool lost() {
    std::lock_guard<std::mutex> lock(mutex_);
    return lost_ || (done_ && !final_received_);
  }
  std::string failure() {
    std::lock_guard<std::mutex> lock(mutex_);
    return failure_;
  }
  grpc::Status status() {
    std::lock_guard<std::mutex> lock(mutex_);
    return status_;
  }

 private:
  void Keep() {
    uint64_t keepalive_id = 1'000'000;
    std::unique_lock<std::mutex> lock(mutex_);
    while (!done_) {
      wake_.wait_for(lock, std::chrono::nanoseconds(kKeepAliveInterval));
      if (done_) {
        break;
      }
      if (!final_received_ && common::MonotonicNowNs() - last_heard_ > options_.heartbeat_timeout) {
        lost_ = true;
        lock.unlock();
        Cancel();
        lock.lock();
        continue;
      }
      if (!writes_closed_) {
        lock.unlock();
        v1::CoordinatorMessage ping;
        ping.mutable_ping()->set_id(++keepalive_id);
        Send(std::move(ping));
        lock.lock();
      }
    }
  }

  const RemoteAgentOptions& options_;
  std::thread keeper_;
  grpc::ClientContext context_;
  v1::AgentMessage incoming_;

  std::mutex mutex_;
  std::condition_variable wake_;
  common::WriteQueue<v1::CoordinatorMessage> outgoing_;
  bool writes_closed_ = false;
  bool released_ = false;
  bool done_ = false;
  bool ready_ = false;
  bool final_received_ = false;
  bool lost_ = false;
  std::string failure_;
  grpc::Status status_;
  uint64_t last_pong_id_ = 0;
  Nanos last_pong_agent_ns_ = 0;
  Nanos last_heard_ = 0;
  common::AgentMessageSink* sink_ = nullptr;
  std::string name_;
};

struct RemoteAgentSession::Connection {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::Agent::Stub> stub;
  Nanos offset = 0;      // agent clock minus ours
  Nanos round_trip = 0;  // of the ping the offset came from
};

RemoteAgentSession::RemoteAgentSession(RemoteAgentOptions options)
    : options_(std::move(options)),
      name_(options_.address),
      connection_(std::make_unique<Connection>()) {}

RemoteAgentSession::~RemoteAgentSession() {
  if (stream_ != nullptr) {
    stream_->Cancel();
    stream_->WaitForEnd();
  }
}

absl::Status RemoteAgentSession::Connect() {
  Connection& state = *connection_;
  state.channel = grpc::CreateChannel(options_.address, grpc::InsecureChannelCredentials());
  state.stub = v1::Agent::NewStub(state.channel);

  grpc::ClientContext hello_context;
  hello_context.set_deadline(DeadlineIn(options_.connect_timeout));
  if (!options_.token.empty()) {
    hello_context.AddMetadata(kTokenMetadataKey, options_.token);
  }
  v1::HelloRequest hello;
  hello.set_protocol_version(common::kProtocolVersion);
  v1::AgentInfo info;
  const grpc::Status said = state.stub->Hello(&hello_context, hello, &info);
  if (!said.ok()) {
    return FromGrpc(said, options_.address);
  }
  if (info.protocol_version() != common::kProtocolVersion) {
    return absl::FailedPreconditionError("agent " + options_.address + " speaks protocol version " +
                                         std::to_string(info.protocol_version()) + " (barrage " +
                                         info.version() + "), this coordinator " +
                                         std::to_string(common::kProtocolVersion) +
                                         ": run the same barrage version everywhere");
  }
  if (info.busy()) {
    return absl::FailedPreconditionError("agent " + options_.address + " (" + info.name() +
                                         ") is busy with another coordinator's test");
  }
  name_ = info.name().empty() ? options_.address : info.name();

  stream_ = std::make_unique<Stream>(state.stub.get(), options_);
  Nanos best_round_trip = INT64_MAX;
  for (int i = 1; i <= kClockPings; ++i) {
    const Nanos sent = common::MonotonicNowNs();
    std::optional<Nanos> agent_ns =
        stream_->PingAndWait(static_cast<uint64_t>(i), options_.connect_timeout);
    const Nanos received = common::MonotonicNowNs();
    if (!agent_ns.has_value()) {
      return absl::UnavailableError("agent " + options_.address +
                                    " did not answer pings on its Run stream");
    }
    if (received - sent < best_round_trip) {
      best_round_trip = received - sent;
      state.round_trip = best_round_trip;
      // NTP-style: the agent read its clock halfway through the round trip.
      state.offset = *agent_ns - (sent + (received - sent) / 2);
    }
  }
  return absl::OkStatus();
}

common::Nanos RemoteAgentSession::clock_offset() const { return connection_->offset; }
common::Nanos RemoteAgentSession::round_trip() const { return connection_->round_trip; }
const std::string& RemoteAgentSession::address() const { return options_.address; }
bool RemoteAgentSession::lost() const { return stream_ != nullptr && stream_->lost(); }
const std::string& RemoteAgentSession::name() const { return name_; }

absl::Status RemoteAgentSession::Start(const common::AgentShare& share, Nanos start_at,
                                       common::AgentMessageSink* sink) {
  if (stream_ == nullptr) {
    return absl::FailedPreconditionError("agent " + options_.address + ": Connect first");
  }
  stream_->SetSink(sink, name_);
  stream_->StartKeeper();
  v1::CoordinatorMessage message;
  v1::Start* start = message.mutable_start();
  start->set_protocol_version(common::kProtocolVersion);
  common::EncodeShare(share, start->mutable_share());
  start->set_start_at_ns(start_at + connection_->offset);
  start->set_lease_timeout_ns(options_.lease_timeout);
  stream_->Send(std::move(message));
  return absl::OkStatus();
}

void RemoteAgentSession::Stop(Nanos grace) {
  if (stream_ == nullptr) {
    return;
  }
  v1::CoordinatorMessage message;
  message.mutable_stop()->set_grace_ns(grace);
  stream_->Send(std::move(message));
}

absl::Status RemoteAgentSession::Wait() {
  if (stream_ == nullptr) {
    return absl::FailedPreconditionError("agent " + options_.address + " was never started");
  }
  stream_->WaitForEnd();
  if (!stream_->failure().empty()) {
    return absl::FailedPreconditionError("agent " + name_ + " (" + options_.address +
                                         "): " + stream_->failure());
  }
  if (stream_->lost()) {
    return absl::UnavailableError("agent " + name_ + " (" + options_.address +
                                  ") was lost: " + stream_->status().error_message());
  }
  return absl::OkStatus();
}

}  // namespace barrage::coordinator
