#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "barrage/common/agent_session.h"
#include "barrage/coordinator/records_writer.h"
#include "barrage/coordinator/run_stats.h"
#include "barrage/v1/agent.pb.h"

namespace barrage::coordinator {

// What the merger knows of one agent.
struct AgentProgress {
  uint64_t records = 0;               // records merged from this agent
  uint64_t completed = 0;             // of which successful
  uint64_t first_start = UINT64_MAX;  // earliest send instant among its records (ns)
  v1::Heartbeat last_heartbeat;
  bool finished = false;
  v1::Finished finished_message;
  std::string failure;
};

// The coordinator's merge path: decodes every RecordBatch from every agent into one RunStats
// (and the records file), and keeps each agent's heartbeats and Finished message for the
// reconciliation at the end. Thread-safe: sessions call OnMessage from their own threads, once
// per batch.
class RunMerger : public common::AgentMessageSink {
 public:
  // @param records_writer optional; every decoded record is written to it.
  explicit RunMerger(RecordsWriter* records_writer);

  void OnMessage(const std::string& agent_name, const v1::AgentMessage& message) override;

  // A copy of the merged statistics so far (for progress lines and the final report).
  RunStats Snapshot() const;
  std::map<std::string, AgentProgress> Agents() const;

  // Compares what was merged with what each agent says it counted.
  // @return one line per mismatch; empty when everything adds up.
  std::vector<std::string> Reconcile() const;

 private:
  mutable absl::Mutex mutex_;
  RecordsWriter* records_writer_ ABSL_GUARDED_BY(mutex_);
  RunStats stats_ ABSL_GUARDED_BY(mutex_);
  std::map<std::string, AgentProgress> agents_ ABSL_GUARDED_BY(mutex_);
  std::vector<common::RequestRecord> decoded_ ABSL_GUARDED_BY(mutex_);  // reused per batch
  std::vector<std::string> decode_errors_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace barrage::coordinator
