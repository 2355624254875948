// Agents on separate hosts: a private network of namespaces (a coordinator host, three agent
// hosts, a target host running nginx), real barrage-agent processes listening on their lab
// addresses behind a shared token, and the coordinator splitting --rate 6000 for 10 s among
// them. Each agent delivers its third, the merge adds up exactly, every merged percentile
// matches the records, and the agents start within 5 ms of each other.

#include <fstream>
#include <iostream>

#include "netlab.h"
#include "percentile_check.h"

namespace barrage::integration {
namespace {

using barrage::testing::NetLab;

constexpr int kAgentPort = 7070;
constexpr int kTargetPort = 8080;

TEST(MultiHostTest, ThreeAgentHostsShareSixThousandRequestsPerSecond) {
  std::string why;
  if (!NetLab::Available(&why)) {
    GTEST_SKIP() << "network namespaces are not available here: " << why;
  }
  NetLab lab;
  absl::StatusOr<NetLab::Host> target = lab.AddHost("target");
  absl::StatusOr<NetLab::Host> coordinator = lab.AddHost("coord");
  ASSERT_TRUE(target.ok() && coordinator.ok());
  std::vector<NetLab::Host> agent_hosts;
  for (const char* name : {"agent1", "agent2", "agent3"}) {
    absl::StatusOr<NetLab::Host> host = lab.AddHost(name);
    ASSERT_TRUE(host.ok()) << host.status();
    agent_hosts.push_back(*host);
  }
  absl::StatusOr<std::unique_ptr<barrage::testing::LabNginx>> nginx =
      lab.StartNginx(*target, kTargetPort);
  ASSERT_TRUE(nginx.ok()) << nginx.status();

  TempDir dir;
  const std::string token_path = dir.File("token");
  std::ofstream(token_path) << "lab-secret\n";
  std::vector<std::unique_ptr<ChildProcess>> agents;
  std::string agent_list;
  for (const NetLab::Host& host : agent_hosts) {
    auto agent = std::make_unique<ChildProcess>();
    const std::string listen = host.address + ":" + std::to_string(kAgentPort);
    ASSERT_TRUE(lab.Start(*agent, host,
                          {BARRAGE_AGENT_BIN, "--listen", listen, "--name", host.name,
                           "--token-file", token_path})
                    .ok());
    absl::StatusOr<std::string> up = agent->WaitForOutput("listening on", std::chrono::seconds(10));
    ASSERT_TRUE(up.ok()) << host.name << ": " << up.status() << "\n" << agent->ReadErr();
    agent_list += (agent_list.empty() ? "" : ",") + listen;
    agents.push_back(std::move(agent));
  }

  const std::string result_path = dir.File("result.json");
  const std::string records_path = dir.File("records.jsonl");
  const std::string url = "http://" + target->address + ":" + std::to_string(kTargetPort) + "/";
  ProcessResult run = lab.Run(*coordinator,
                              {BARRAGE_BIN,
                               "run",
                               "--url",
                               url,
                               "--agents",
                               agent_list,
                               "--agent-token-file",
                               token_path,
                               "--rate",
                               "6000",
                               "--duration",
                               "10s",
                               "--threads",
                               "1",
                               "--percentiles",
                               "50,90,95,99,99.9",
                               "--save-result",
                               result_path,
                               "--save-records",
                               records_path,
                               "--quiet"},
                              std::chrono::seconds(90));
  ASSERT_FALSE(run.timed_out) << Describe(run);
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  std::optional<Json> result = ReadJsonFile(result_path);
  ASSERT_TRUE(result.has_value()) << Describe(run);
  EXPECT_EQ((*result)["problems"].size(), 0u) << (*result)["problems"].dump();

  // Each agent: 20,000 +- 1%. The merged count is the sum of the agents' own totals.
  ASSERT_EQ((*result)["agents"].size(), 3u);
  const AgentsSummary summary = CheckAgents(*result, 20000, 200);
  const double agents_total = summary.total;
  EXPECT_EQ(NumberAt(*result, "completed") + NumberAt(*result, "failed"), agents_total);
  std::cout << "agents: " << (*result)["agents"].dump() << "\nmerged completed "
            << NumberAt(*result, "completed") << ", agents' total " << agents_total
            << ", first-send spread " << summary.first_send_spread_ms << " ms" << std::endl;
  EXPECT_LT(summary.first_send_spread_ms, 5.0) << "the agents did not start together";

  // Every merged percentile against all agents' records.
  std::vector<Record> records = ReadRecords(records_path);
  EXPECT_EQ(static_cast<double>(records.size()), agents_total);
  std::vector<Record> successful;
  for (const Record& record : records) {
    if (record.ok()) {
      successful.push_back(record);
    }
  }
  ExpectPercentilesMatchRecords(*result, successful, {50, 90, 95, 99, 99.9});
  // And the target saw them all, from the three agent hosts.
  EXPECT_GE((*nginx)->RequestCount(), static_cast<uint64_t>(agents_total));
}

}  // namespace
}  // namespace barrage::integration
