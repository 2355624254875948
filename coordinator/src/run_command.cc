#include "barrage/coordinator/run_command.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "barrage/agent/local_agent_session.h"
#include "barrage/common/weighted_slices.h"
#include "barrage/coordinator/fidelity.h"
#include "barrage/coordinator/progress.h"
#include "barrage/coordinator/records_writer.h"
#include "barrage/coordinator/remote_agent_session.h"
#include "barrage/coordinator/report.h"
#include "barrage/coordinator/run_merger.h"

#ifndef BARRAGE_VERSION
#define BARRAGE_VERSION "0.0.0"
#endif

namespace barrage::coordinator {
namespace {

using common::Nanos;

// Workers need time to build their timelines and handles before the shared start instant.
constexpr Nanos kStartDelay = 100 * common::kNanosPerMilli;
// Remote agents build their workers when Start arrives, several per host on a busy machine.
constexpr Nanos kRemoteStartDelay = 500 * common::kNanosPerMilli;
constexpr Nanos kProgressInterval = common::kNanosPerSecond;

// Every connection is a file descriptor; the soft limit (often 1024) is too low for load tests.
void RaiseFileLimit() {
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// True when every request failed to connect: the target was unreachable.
bool TargetUnreachable(const RunStats& stats) {
  return stats.completed == 0 && stats.failed > 0 &&
         stats.errors_by_class[static_cast<int>(common::ErrorClass::kConnect)] == stats.failed;
}

absl::Status WriteResult(const std::string& path, const nlohmann::json& result) {
  std::ofstream file(path, std::ios::trunc);
  file << result.dump(2) << '\n';
  file.close();
  if (!file) return absl::InternalError("--save-result: could not write " + path);
  return absl::OkStatus();
}

// The in-process agent, or every --agents agent connected (hello, version, clock offset).
// Nothing is started: an agent that cannot be reached fails the run before any load is sent.
// With --allow-partial, agents that cannot be reached are left out (and named in `unreachable`)
// as long as one can.
absl::StatusOr<std::vector<common::AgentSessionPtr>> ConnectAgents(
    const RunOptions& options, std::vector<AgentSummary>* unreachable) {
  std::vector<common::AgentSessionPtr> sessions;
  if (options.agents.empty()) {
    sessions.push_back(agent::MakeLocalAgentSession("local"));
    return sessions;
  }
  // Connect to every agent at once: an unreachable one costs the connect timeout once, not once
  // per agent.
  std::vector<std::unique_ptr<RemoteAgentSession>> candidates;
  std::vector<absl::Status> statuses(options.agents.size());
  std::vector<std::thread> connectors;
  for (size_t i = 0; i < options.agents.size(); ++i) {
    RemoteAgentOptions remote;
    remote.address = options.agents[i];
    remote.token = options.agent_token;
    remote.lease_timeout = options.lease_timeout;
    candidates.push_back(std::make_unique<RemoteAgentSession>(remote));
    connectors.emplace_back([&, i] { statuses[i] = candidates[i]->Connect(); });
  }
  for (std::thread& connector : connectors) {
    connector.join();
  }
  absl::Status first_error;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (statuses[i].ok()) {
      sessions.push_back(std::move(candidates[i]));
      continue;
    }
    if (!options.allow_partial) {
      return statuses[i];
    }
    if (first_error.ok()) first_error = statuses[i];
    AgentSummary left_out;
    left_out.name = options.agents[i];
    left_out.address = options.agents[i];
    left_out.lost = true;
    left_out.failure = "not reached at the start: " + std::string(statuses[i].message());
    unreachable->push_back(left_out);
  }
  if (sessions.empty()) {
    return absl::UnavailableError("no agent could be reached; the first error: " +
                                  std::string(first_error.message()));
  }
  return sessions;
}

// One line per agent for the result, from what its session and the merger know.
AgentSummary SummarizeAgent(const common::AgentSession& session, const absl::Status& status,
                            const std::map<std::string, AgentProgress>& progress, Nanos start_at) {
  AgentSummary summary;
  summary.name = session.name();
  summary.address = "in-process";
  if (const auto* remote = dynamic_cast<const RemoteAgentSession*>(&session)) {
    summary.address = remote->address();
    summary.clock_offset_ms = static_cast<double>(remote->clock_offset()) / 1e6;
    summary.round_trip_ms = static_cast<double>(remote->round_trip()) / 1e6;
    summary.start_at_ns = start_at + remote->clock_offset();
    summary.lost = remote->lost();
  } else {
    summary.start_at_ns = start_at;
  }
  if (!status.ok()) {
    summary.failure = std::string(status.message());
  }
  if (auto found = progress.find(session.name()); found != progress.end()) {
    const AgentProgress& agent = found->second;
    summary.completed =
        agent.finished ? agent.finished_message.totals().completed() : agent.completed;
    summary.failed =
        agent.finished ? agent.finished_message.totals().failed() : agent.records - agent.completed;
    if (agent.first_start != UINT64_MAX) {
      summary.first_send_ms = static_cast<double>(agent.first_start) / 1e6;
    }
  }
  return summary;
}

Nanos StartDelay(const std::vector<common::AgentSessionPtr>& sessions) {
  Nanos delay = kStartDelay;
  for (const auto& session : sessions) {
    if (auto* remote = dynamic_cast<const RemoteAgentSession*>(session.get())) {
      delay = std::max(delay, kRemoteStartDelay + 4 * remote->round_trip());
    }
  }
  return delay;
}

}  // namespace

int RunCommand(const RunOptions& options, std::ostream& out, std::ostream& err) {
  RaiseFileLimit();
  std::unique_ptr<RecordsWriter> records;
  if (!options.save_records.empty()) {
    absl::StatusOr<std::unique_ptr<RecordsWriter>> opened =
        RecordsWriter::Open(options.save_records);
    if (!opened.ok()) {
      err << "barrage run: " << opened.status().message() << '\n';
      return kExitUsage;
    }
    records = std::move(*opened);
  }

  // Ctrl-C and SIGTERM are taken synchronously by this thread (sigtimedwait): block them before
  // any thread starts so that every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigset_t previous_mask;
  pthread_sigmask(SIG_BLOCK, &stop_signals, &previous_mask);

  RunMerger merger(records.get());
  std::vector<AgentSummary> unreachable;
  absl::StatusOr<std::vector<common::AgentSessionPtr>> connected =
      ConnectAgents(options, &unreachable);
  if (!connected.ok()) {
    pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
    err << "barrage run: " << connected.status().message() << '\n';
    return kExitRunFailed;
  }
  std::vector<common::AgentSessionPtr> sessions = std::move(*connected);

  // Every agent starts at the same instant, far enough out for the slowest to hear of it.
  const Nanos start_at = common::MonotonicNowNs() + StartDelay(sessions);
  const Nanos measure_at = start_at + options.plan.load.warmup;
  RunReport report;
  report.options = &options;
  report.version = BARRAGE_VERSION;
  report.wall_start = common::WallNowNs() + (measure_at - common::MonotonicNowNs());

  const uint32_t agent_count = static_cast<uint32_t>(sessions.size());
  std::vector<uint32_t> weights(agent_count, 1);
  if (!options.agent_weights.empty() && unreachable.empty()) {
    weights = options.agent_weights;
  } else if (!options.agent_weights.empty()) {
    // Keep the weights of the agents that were reached, in order.
    weights.clear();
    for (size_t k = 0; k < options.agents.size(); ++k) {
      const bool left_out = std::any_of(
          unreachable.begin(), unreachable.end(),
          [&](const AgentSummary& agent) { return agent.address == options.agents[k]; });
      if (!left_out) weights.push_back(options.agent_weights[k]);
    }
  }
  for (uint32_t i = 0; i < agent_count; ++i) {
    common::AgentShare share;
    share.plan = options.plan;
    share.slice_index = i;
    share.slice_count = agent_count;
    // Weights: one per connected agent (those left out with --allow-partial drop theirs).
    share.slice_weights = weights;
    share.concurrency =
        static_cast<uint32_t>(common::WeightedShare(options.plan.load.concurrency, weights, i));
    share.requests = common::WeightedShare(options.plan.load.requests, weights, i);
    if (absl::Status started = sessions[i]->Start(share, start_at, &merger); !started.ok()) {
      for (auto& session : sessions) {
        session->Stop(0);
      }
      pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
      err << "barrage run: could not start agent " << sessions[i]->name() << ": "
          << started.message() << '\n';
      return kExitRunFailed;
    }
  }

  std::atomic<bool> finished{false};
  std::vector<absl::Status> session_statuses(sessions.size());
  std::thread waiter([&] {
    for (size_t i = 0; i < sessions.size(); ++i) {
      session_statuses[i] = sessions[i]->Wait();
    }
    finished.store(true, std::memory_order_release);
  });

  ProgressPrinter progress(err, isatty(STDERR_FILENO) != 0, options.plan.load.duration);
  Nanos next_progress = measure_at + kProgressInterval;
  int interrupts = 0;
  while (!finished.load(std::memory_order_acquire)) {
    timespec wait{0, 100'000'000};
    const int signal = sigtimedwait(&stop_signals, nullptr, &wait);
    if (signal == SIGINT || signal == SIGTERM) {
      ++interrupts;
      report.interrupted = true;
      // The first Ctrl-C drains for the grace period; a second one cancels at once.
      const Nanos grace = interrupts == 1 ? options.plan.load.grace : 0;
      if (!options.quiet) {
        err << (interrupts == 1 ? "\nstopping: in-flight requests have "
                                : "\nstopping now: cancelling in-flight requests")
            << (interrupts == 1 ? common::FormatDuration(grace) + " to finish\n" : "\n");
      }
      for (auto& session : sessions) {
        session->Stop(grace);
      }
    }
    const Nanos now = common::MonotonicNowNs();
    if (!options.quiet && now >= next_progress) {
      uint64_t in_flight = 0;
      for (const auto& [name, agent] : merger.Agents()) {
        in_flight += agent.last_heartbeat.in_flight();
      }
      progress.Update(now - measure_at, merger.Snapshot(), in_flight);
      next_progress += kProgressInterval;
    }
  }
  waiter.join();
  progress.Finish();
  pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);

  report.stats = merger.Snapshot();
  const std::map<std::string, AgentProgress> agents = merger.Agents();
  report.fidelity = AssessFidelity(agents, options.plan.load);
  report.problems = merger.Reconcile();
  bool agent_failed = !unreachable.empty();
  for (size_t i = 0; i < sessions.size(); ++i) {
    report.agents.push_back(SummarizeAgent(*sessions[i], session_statuses[i], agents, start_at));
    if (!session_statuses[i].ok()) {
      agent_failed = true;
      report.problems.push_back(std::string(session_statuses[i].message()) + "; its share (slice " +
                                std::to_string(i) + " of " + std::to_string(sessions.size()) +
                                ") was not fully delivered");
    }
  }
  for (AgentSummary& left_out : unreachable) {
    report.problems.push_back("agent " + left_out.address + " " + left_out.failure +
                              "; the agents that answered share the whole load");
    report.agents.push_back(std::move(left_out));
  }
  if (records != nullptr) {
    if (absl::Status closed = records->Close(); !closed.ok()) {
      report.problems.push_back(std::string(closed.message()));
    }
  }

  out << FormatSummary(report) << std::flush;
  const nlohmann::json result = BuildResultJson(report);
  int exit_code = kExitOk;
  if (!options.save_result.empty()) {
    if (absl::Status written = WriteResult(options.save_result, result); !written.ok()) {
      err << "barrage run: " << written.message() << '\n';
      exit_code = kExitRunFailed;
    }
  }

  if (agent_failed && !options.allow_partial) {
    err << "barrage run: the run failed: " << report.problems.back()
        << " (--allow-partial accepts a run that lost agents)\n";
    return kExitRunFailed;
  }
  if (TargetUnreachable(report.stats)) {
    err << "barrage run: the target was unreachable for every request (" << report.stats.failed
        << " connect errors): check --url, and that the server listens on that address and port\n";
    return kExitRunFailed;
  }
  for (const ThresholdOutcome& outcome : EvaluateThresholds(options.thresholds, result)) {
    if (!outcome.passed) {
      err << "barrage run: threshold crossed: " << outcome.threshold->text << " (actual "
          << outcome.actual << ")\n";
      exit_code = exit_code == kExitOk ? kExitThresholdCrossed : exit_code;
    }
  }
  return exit_code;
}

}  // namespace barrage::coordinator
