// Distributed runs on loopback: real barrage-agent processes, real gRPC, a real nginx. The split
// and merge add up exactly; a lost agent, a stopped coordinator, a busy agent, a wrong token, an
// unreachable agent, another protocol version and a malformed --agents each end as documented.
// (The same over network namespaces, as separate hosts: multihost_test.cc.)

#include <signal.h>

#include <cmath>
#include <fstream>
#include <map>
#include <thread>

#include "integration_util.h"

namespace barrage::integration {
namespace {

// A barrage-agent on a free loopback port.
class Agent {
 public:
  // @return false (after recording a failure) when it did not come up.
  bool Start(const std::string& name, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {BARRAGE_AGENT_BIN, "--listen", "127.0.0.1:0", "--name", name};
    argv.insert(argv.end(), extra.begin(), extra.end());
    if (absl::Status started = process_.Start(argv); !started.ok()) {
      ADD_FAILURE() << started;
      return false;
    }
    absl::StatusOr<std::string> out =
        process_.WaitForOutput("listening on", std::chrono::seconds(10));
    if (!out.ok()) {
      ADD_FAILURE() << "barrage-agent did not start: " << out.status() << "\n"
                    << process_.ReadErr();
      return false;
    }
    address_ = out->substr(out->find("listening on ") + 13);
    address_ = address_.substr(0, address_.find_first_of("\r\n"));
    return true;
  }

  const std::string& address() const { return address_; }
  ChildProcess& process() { return process_; }

 private:
  ChildProcess process_;
  std::string address_;
};

std::string Join(const std::vector<Agent*>& agents) {
  std::string list;
  for (const Agent* agent : agents) {
    list += (list.empty() ? "" : ",") + agent->address();
  }
  return list;
}

void StartCoordinator(ChildProcess& coordinator, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {BARRAGE_BIN, "run"};
  argv.insert(argv.end(), args.begin(), args.end());
  EXPECT_TRUE(coordinator.Start(argv).ok());
}

TEST(DistributedTest, ThreeAgentsSplitTheRateAndTheMergeAddsUp) {
  NginxServer nginx;
  ASSERT_TRUE(nginx.Start().ok());
  Agent a1, a2, a3;
  ASSERT_TRUE(a1.Start("a1") && a2.Start("a2") && a3.Start("a3"));
  TempDir dir;
  const std::string result_path = dir.File("result.json");
  const std::string records_path = dir.File("records.jsonl");
  ProcessResult run = RunBarrage({"--url", nginx.url(), "--agents", Join({&a1, &a2, &a3}), "--rate",
                                  "1500", "--duration", "4s", "--threads", "1", "--save-result",
                                  result_path, "--save-records", records_path, "--quiet"},
                                 std::chrono::seconds(60));
  ASSERT_FALSE(run.timed_out) << Describe(run);
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  std::optional<Json> result = ReadJsonFile(result_path);
  ASSERT_TRUE(result.has_value()) << Describe(run);
  EXPECT_EQ((*result)["problems"].size(), 0u) << (*result)["problems"].dump();

  // Each agent sends its third of 1500/s for 4 s: 2000 +- 1%.
  ASSERT_EQ((*result)["agents"].size(), 3u);
  const AgentsSummary agents = CheckAgents(*result, 2000, 20);
  EXPECT_EQ(NumberAt(*result, "completed") + NumberAt(*result, "failed"), agents.total);
  // The agents started together: their first sends lie within 5 ms.
  EXPECT_LT(agents.first_send_spread_ms, 5.0);

  // Every request is in the records file, with its agent.
  std::map<std::string, int> per_agent;
  std::ifstream records(records_path);
  std::string line;
  while (std::getline(records, line)) {
    per_agent[Json::parse(line)["agent"].get<std::string>()]++;
  }
  EXPECT_EQ(per_agent.size(), 3u);
  for (const Json& agent : (*result)["agents"]) {
    EXPECT_EQ(per_agent[agent["name"].get<std::string>()],
              NumberAt(agent, "completed") + NumberAt(agent, "failed"));
  }
}

TEST(DistributedTest, WeightsSplitTheLoadInProportion) {
  NginxServer nginx;
  ASSERT_TRUE(nginx.Start().ok());
  Agent small, big;
  ASSERT_TRUE(small.Start("small") && big.Start("big"));
  TempDir dir;
  const std::string result_path = dir.File("result.json");
  ProcessResult run = RunBarrage(
      {"--url", nginx.url(), "--agents", Join({&small, &big}), "--agent-weights", "1,3", "--rate",
       "800", "--duration", "3s", "--threads", "1", "--save-result", result_path, "--quiet"},
      std::chrono::seconds(60));
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  std::optional<Json> result = ReadJsonFile(result_path);
  ASSERT_TRUE(result.has_value()) << Describe(run);
  // 2400 arrivals in all: a quarter and three quarters of them, exactly (constant arrivals).
  EXPECT_EQ(NumberAt(*result, "completed"), 2400);
  for (const Json& agent : (*result)["agents"]) {
    EXPECT_EQ(NumberAt(agent, "completed"), agent["name"] == "small" ? 600 : 1800) << agent;
  }
}

TEST(DistributedTest, ALostAgentIsNamedAndFailsTheRunUnlessPartialIsAllowed) {
  NginxServer nginx;
  ASSERT_TRUE(nginx.Start().ok());
  for (const bool allow_partial : {false, true}) {
    SCOPED_TRACE(allow_partial ? "--allow-partial" : "strict");
    Agent a1, a2;
    ASSERT_TRUE(a1.Start("steady") && a2.Start("doomed"));
    TempDir dir;
    const std::string result_path = dir.File("result.json");
    std::vector<std::string> args = {
        "--url", nginx.url(), "--agents", Join({&a1, &a2}), "--rate",    "400",    "--duration",
        "4s",    "--threads", "1",        "--save-result",  result_path, "--quiet"};
    if (allow_partial) {
      args.push_back("--allow-partial");
    }
    ChildProcess coordinator;
    StartCoordinator(coordinator, args);
    // The scenario: the agent dies 1.5 s into the run.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    ASSERT_TRUE(a2.process().Signal(SIGKILL));
    const auto killed_at = std::chrono::steady_clock::now();
    ProcessResult run = coordinator.Wait(std::chrono::seconds(30));
    // It finishes on time: the run had 2.5 s to go, plus the drain.
    EXPECT_LT(std::chrono::steady_clock::now() - killed_at, std::chrono::seconds(6));
    ASSERT_FALSE(run.timed_out) << Describe(run);
    EXPECT_EQ(run.exit_code, allow_partial ? 0 : 2) << Describe(run);
    EXPECT_NE(run.out.find("doomed"), std::string::npos) << Describe(run);
    std::optional<Json> result = ReadJsonFile(result_path);
    ASSERT_TRUE(result.has_value()) << Describe(run);
    for (const Json& agent : (*result)["agents"]) {
      if (agent["name"] == "doomed") {
        EXPECT_EQ(agent["lost"], true);
      } else {
        EXPECT_EQ(agent["lost"], false);
        EXPECT_NEAR(NumberAt(agent, "completed"), 800, 8);  // every record of the survivor
      }
    }
  }
}

// Requests nginx has logged so far.
uint64_t Served(const NginxServer& nginx) { return nginx.RequestCount(); }

TEST(DistributedTest, AgentsStopWhenTheCoordinatorIsGone) {
  NginxServer nginx(NginxServer::Options{.access_log = true});
  ASSERT_TRUE(nginx.Start().ok());
  // SIGKILL closes the coordinator's sockets (the agents see the stream break); SIGSTOP leaves
  // them open and silent, as a vanished host would (only the lease timeout ends the test).
  for (const int signal : {SIGKILL, SIGSTOP}) {
    SCOPED_TRACE(signal == SIGKILL ? "SIGKILL" : "SIGSTOP");
    Agent agent;
    ASSERT_TRUE(agent.Start("a"));
    ChildProcess coordinator;
    StartCoordinator(coordinator, {"--url", nginx.url(), "--agents", agent.address(), "--rate",
                                   "200", "--duration", "60s", "--lease-timeout", "2s", "--quiet"});
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the scenario: load is on
    const uint64_t before = Served(nginx);
    ASSERT_TRUE(coordinator.Signal(signal));
    // Lease timeout (2 s) plus one second: after that, nothing new may reach the target.
    std::this_thread::sleep_for(std::chrono::seconds(3));
    const uint64_t at_deadline = Served(nginx);
    std::this_thread::sleep_for(std::chrono::seconds(2));
    EXPECT_GT(before, 100u) << "load was running before the signal";
    EXPECT_EQ(Served(nginx), at_deadline) << "requests reached the target after the lease";
    coordinator.Signal(SIGKILL);
  }
}

// Runs the coordinator against `agents` with `extra` flags and expects `exit_code` and one
// stderr line containing `message`.
void ExpectRefusal(const std::string& agents, std::vector<std::string> extra, int exit_code,
                   const std::string& message) {
  std::vector<std::string> args = {
      "--url", "http://127.0.0.1:9/", "--agents", agents, "--duration", "1s", "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  ProcessResult run = RunBarrage(args, std::chrono::seconds(30));
  ASSERT_FALSE(run.timed_out) << Describe(run);
  EXPECT_FALSE(LooksLikeCrash(run)) << Describe(run);
  EXPECT_EQ(run.exit_code, exit_code) << Describe(run);
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_NE(run.err.find(message), std::string::npos) << run.err;
}

TEST(DistributedTest, RefusalsAreOneClearLine) {
  Agent plain;
  ASSERT_TRUE(plain.Start("plain"));
  TempDir dir;
  const std::string token_file = dir.File("token");
  std::ofstream(token_file) << "s3cret\n";
  const std::string wrong_file = dir.File("wrong");
  std::ofstream(wrong_file) << "guess\n";
  Agent guarded;
  ASSERT_TRUE(guarded.Start("guarded", {"--token-file", token_file}));
  Agent future;
  ASSERT_TRUE(future.Start("future", {"--advertise-protocol", "99"}));

  ExpectRefusal(guarded.address(), {}, 2, "refused our token");
  ExpectRefusal(guarded.address(), {"--agent-token-file", wrong_file}, 2, "refused our token");
  ExpectRefusal(future.address(), {}, 2, "protocol version 99");
  const int nobody = barrage::testing::FreeLoopbackPort();
  ExpectRefusal("127.0.0.1:" + std::to_string(nobody), {}, 2, "unreachable");
  ExpectRefusal("127.0.0.1", {}, 1, "--agents: '127.0.0.1' has no port");
  ExpectRefusal("127.0.0.1:7070,127.0.0.1:7070", {}, 1, "listed more than once");
  ExpectRefusal("127.0.0.1:7070", {"--agent-weights", "1,2"}, 1,
                "--agent-weights: 2 weights for 1");
}

TEST(DistributedTest, AnAgentRefusesToListenBeyondLoopbackWithoutAToken) {
  ProcessResult refused = barrage::testing::RunProcess({BARRAGE_AGENT_BIN, "--listen", "0.0.0.0:0"},
                                                       std::chrono::seconds(10));
  EXPECT_EQ(refused.exit_code, 1) << Describe(refused);
  EXPECT_NE(refused.err.find("--token-file"), std::string::npos) << refused.err;
  ProcessResult unknown =
      barrage::testing::RunProcess({BARRAGE_AGENT_BIN, "--frobnicate"}, std::chrono::seconds(10));
  EXPECT_EQ(unknown.exit_code, 1) << Describe(unknown);
  EXPECT_NE(unknown.err.find("--frobnicate: unknown flag"), std::string::npos) << unknown.err;
}

TEST(DistributedTest, ABusyAgentRefusesASecondCoordinator) {
  NginxServer nginx;
  ASSERT_TRUE(nginx.Start().ok());
  Agent agent;
  ASSERT_TRUE(agent.Start("shared"));
  ChildProcess first;
  StartCoordinator(first, {"--url", nginx.url(), "--agents", agent.address(), "--rate", "100",
                           "--duration", "20s", "--quiet"});
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the first test is running
  ExpectRefusal(agent.address(), {}, 2, "busy");
  first.Signal(SIGINT);
  ProcessResult ended = first.Wait(std::chrono::seconds(15));
  EXPECT_EQ(ended.exit_code, 0) << Describe(ended);
}

}  // namespace
}  // namespace barrage::integration
