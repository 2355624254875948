#include "barrage/coordinator/run_merger.h"

#include <algorithm>

#include "barrage/common/record_codec.h"

namespace barrage::coordinator {

RunMerger::RunMerger(RecordsWriter* records_writer) : records_writer_(records_writer) {}

void RunMerger::OnMessage(const std::string& agent_name, const v1::AgentMessage& message) {
  absl::MutexLock lock(&mutex_);
  AgentProgress& agent = agents_[agent_name];
  switch (message.kind_case()) {
    case v1::AgentMessage::kRecords: {
      decoded_.clear();
      if (absl::Status status = common::DecodeRecordBatch(message.records(), &decoded_);
          !status.ok()) {
        decode_errors_.push_back("agent " + agent_name + " sent a malformed record batch: " +
                                 std::string(status.message()));
        return;
      }
      for (const common::RequestRecord& record : decoded_) {
        stats_.Add(record);
        agent.completed += record.ok() ? 1 : 0;
        agent.first_start = std::min(
            agent.first_start, static_cast<uint64_t>(std::max<common::Nanos>(0, record.start)));
      }
      agent.records += decoded_.size();
      if (records_writer_ != nullptr) records_writer_->Write(decoded_, agent_name);
      break;
    }
    case v1::AgentMessage::kHeartbeat:
      agent.last_heartbeat = message.heartbeat();
      break;
    case v1::AgentMessage::kFinished:
      agent.finished = true;
      agent.finished_message = message.finished();
      break;
    case v1::AgentMessage::kFailure:
      agent.failure = message.failure().reason();
      break;
    case v1::AgentMessage::kReady:  // the session's business, not the merge's
    case v1::AgentMessage::kPong:
    case v1::AgentMessage::KIND_NOT_SET:
      break;
  }
}

RunStats RunMerger::Snapshot() const {
  absl::MutexLock lock(&mutex_);
  return stats_;
}

std::map<std::string, AgentProgress> RunMerger::Agents() const {
  absl::MutexLock lock(&mutex_);
  return agents_;
}

std::vector<std::string> RunMerger::Reconcile() const {
  absl::MutexLock lock(&mutex_);
  std::vector<std::string> problems = decode_errors_;
  uint64_t agents_completed = 0;
  uint64_t agents_failed = 0;
  uint64_t not_streamed = 0;
  bool all_finished = true;
  for (const auto& [name, agent] : agents_) {
    if (!agent.failure.empty()) problems.push_back("agent " + name + " failed: " + agent.failure);
    if (!agent.finished) {
      problems.push_back("agent " + name + " did not report its totals");
      all_finished = false;
      continue;
    }
    const v1::Totals& totals = agent.finished_message.totals();
    agents_completed += totals.completed();
    agents_failed += totals.failed();
    not_streamed += totals.records_not_streamed();
    if (totals.records_not_streamed() > 0) {
      problems.push_back("agent " + name + " could not stream " +
                         std::to_string(totals.records_not_streamed()) +
                         " records (its own totals and histograms stay exact)");
    }
    if (agent.records + totals.records_not_streamed() != totals.completed() + totals.failed()) {
      problems.push_back("agent " + name + " counted " +
                         std::to_string(totals.completed() + totals.failed()) + " requests but " +
                         std::to_string(agent.records) + " records arrived");
    }
  }
  // Without every agent's totals there is nothing exact to compare with (said above).
  if (all_finished && not_streamed == 0 &&
      (stats_.completed != agents_completed || stats_.failed != agents_failed)) {
    problems.push_back(
        "merged counts (completed " + std::to_string(stats_.completed) + ", failed " +
        std::to_string(stats_.failed) + ") differ from the agents' totals (completed " +
        std::to_string(agents_completed) + ", failed " + std::to_string(agents_failed) + ")");
  }
  return problems;
}

}  // namespace barrage::coordinator
