#include "barrage/coordinator/agent_addresses.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace barrage::coordinator {
namespace {

using ::testing::AnyOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::vector<std::string> Texts(const std::vector<AgentAddress>& agents) {
  std::vector<std::string> texts;
  for (const AgentAddress& agent : agents) {
    texts.push_back(agent.text);
  }
  return texts;
}

// The error message of ParseAgents(value), which must fail.
std::string AgentsError(std::string_view value) {
  absl::StatusOr<std::vector<AgentAddress>> agents = ParseAgents(value);
  EXPECT_FALSE(agents.ok()) << value;
  if (agents.ok()) {
    return "";
  }
  EXPECT_EQ(agents.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(agents.status().message());
  EXPECT_THAT(message, StartsWith("--agents: "));
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  return message;
}

std::string WeightsError(std::string_view value, size_t count) {
  absl::StatusOr<std::vector<uint32_t>> weights = ParseAgentWeights(value, count);
  EXPECT_FALSE(weights.ok()) << value;
  if (weights.ok()) {
    return "";
  }
  const std::string message(weights.status().message());
  EXPECT_THAT(message, StartsWith("--agent-weights: "));
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  return message;
}

// A file in a fresh temporary directory, removed with it.
class TempFile {
 public:
  explicit TempFile(const std::string& contents) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "agent_addresses_test.XXXXXX").string();
    dir_ = mkdtemp(pattern.data());
    path_ = dir_ + "/agents.txt";
    std::ofstream(path_) << contents;
  }
  ~TempFile() { std::filesystem::remove_all(dir_); }
  const std::string& path() const { return path_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::string path_;
};

TEST(ParseAgentsTest, CommaListOfHostsAndAddresses) {
  absl::StatusOr<std::vector<AgentAddress>> agents =
      ParseAgents("h1:7070, 10.0.0.2:7071 ,[::1]:7070,Agent-3.example.com:1");
  ASSERT_TRUE(agents.ok()) << agents.status();
  EXPECT_THAT(Texts(*agents), ElementsAre("h1:7070", "10.0.0.2:7071", "[::1]:7070",
                                          "agent-3.example.com:1"));
  EXPECT_EQ((*agents)[0].host, "h1");
  EXPECT_EQ((*agents)[0].port, 7070);
  EXPECT_EQ((*agents)[2].host, "::1");
  EXPECT_EQ((*agents)[3].port, 1);
}

TEST(ParseAgentsTest, OneAgentAndTheHighestPort) {
  absl::StatusOr<std::vector<AgentAddress>> agents = ParseAgents("127.0.0.1:65535");
  ASSERT_TRUE(agents.ok()) << agents.status();
  ASSERT_EQ(agents->size(), 1u);
  EXPECT_EQ((*agents)[0].port, 65535);
  EXPECT_EQ((*agents)[0].text, "127.0.0.1:65535");
}

TEST(ParseAgentsTest, IPv6AddressesAreCanonical) {
  absl::StatusOr<std::vector<AgentAddress>> agents = ParseAgents("[0:0::0001]:7070,[FE80::A]:1");
  ASSERT_TRUE(agents.ok()) << agents.status();
  EXPECT_THAT(Texts(*agents), ElementsAre("[::1]:7070", "[fe80::a]:1"));
}

TEST(ParseAgentsTest, RefusesMalformedValues) {
  EXPECT_THAT(AgentsError(""), HasSubstr("no agents given"));
  EXPECT_THAT(AgentsError("  "), HasSubstr("no agents given"));
  EXPECT_THAT(AgentsError("h1"), HasSubstr("'h1' has no port; write it as h1:7070"));
  EXPECT_THAT(AgentsError("h1:"), HasSubstr("empty port"));
  EXPECT_THAT(AgentsError(":7070"), HasSubstr("has no host"));
  EXPECT_THAT(AgentsError("h1:0"), HasSubstr("port '0' in 'h1:0' is not in 1..65535"));
  EXPECT_THAT(AgentsError("h1:70000"), HasSubstr("port '70000' in 'h1:70000' is not in 1..65535"));
  EXPECT_THAT(AgentsError("h1:7o70"), HasSubstr("is not in 1..65535"));
  EXPECT_THAT(AgentsError("h1:-1"), HasSubstr("is not in 1..65535"));
  EXPECT_THAT(AgentsError("h1:7070,,h2:7070"), HasSubstr("entry 2 of"));
  EXPECT_THAT(AgentsError("h1:7070,"), HasSubstr("entry 2 of"));
  EXPECT_THAT(AgentsError("h1:7070,h2:7070,H1:7070"),
              HasSubstr("h1:7070 is listed more than once"));
  EXPECT_THAT(AgentsError("[::1]:7070,[0::1]:7070"),
              HasSubstr("[::1]:7070 is listed more than once"));
  EXPECT_THAT(AgentsError("::1:7070"), HasSubstr("write it as [::1]:7070"));
  EXPECT_THAT(AgentsError("[::1]"), HasSubstr("no port"));
  EXPECT_THAT(AgentsError("[::1:7070"), HasSubstr("no closing ']'"));
  EXPECT_THAT(AgentsError("[10.0.0.1]:7070"), HasSubstr("is not an IPv6 address"));
  EXPECT_THAT(AgentsError("h 1:7070"), HasSubstr("invalid host 'h 1'"));
  EXPECT_THAT(AgentsError("http://h1:7070"), HasSubstr("scheme"));
  EXPECT_THAT(AgentsError("dns://8.8.8.8/h1:7070"), HasSubstr("three slashes"));
  EXPECT_THAT(AgentsError("h1:7070,@agents.txt"), HasSubstr("@FILE alone"));
}

TEST(ParseAgentsTest, ReadsAFileSkippingBlankLinesAndComments) {
  TempFile file(
      "# the rack by the window\n"
      "\n"
      "  h1:7070   # first\n"
      "h2:7070\r\n"
      "[::1]:7070\n"
      "   \t\n"
      "h3:7071");
  absl::StatusOr<std::vector<AgentAddress>> agents = ParseAgents("@" + file.path());
  ASSERT_TRUE(agents.ok()) << agents.status();
  EXPECT_THAT(Texts(*agents), ElementsAre("h1:7070", "h2:7070", "[::1]:7070", "h3:7071"));
}

TEST(ParseAgentsTest, FileErrorsNameTheFileAndLine) {
  const std::string missing = "/nonexistent-dir-for-barrage-tests/agents.txt";
  std::string message = AgentsError("@" + missing);
  EXPECT_THAT(message, HasSubstr("cannot read agent file '" + missing + "'"));
  EXPECT_THAT(message, HasSubstr("No such file or directory"));

  EXPECT_THAT(AgentsError("@"), HasSubstr("needs a file name"));

  TempFile bad_port("h1:7070\n# ok so far\nh2:99999\n");
  EXPECT_THAT(AgentsError("@" + bad_port.path()),
              HasSubstr(bad_port.path() + " line 3: port '99999'"));

  TempFile two_per_line("h1:7070,h2:7070\n");
  EXPECT_THAT(AgentsError("@" + two_per_line.path()), HasSubstr("one agent per line"));

  TempFile only_comments("# nobody here\n\n");
  EXPECT_THAT(AgentsError("@" + only_comments.path()), HasSubstr("lists no agents"));

  TempFile duplicates("h1:7070\nh1:7070\n");
  EXPECT_THAT(AgentsError("@" + duplicates.path()), HasSubstr("listed more than once"));

  EXPECT_THAT(AgentsError("@" + only_comments.dir()), HasSubstr("is a directory"));
}

TEST(ParseAgentsTest, DnsNameGivesEveryAddressOfLocalhost) {
  absl::StatusOr<std::vector<AgentAddress>> agents = ParseAgents("dns:///localhost:7070");
  ASSERT_TRUE(agents.ok()) << agents.status();
  EXPECT_THAT(Texts(*agents), AnyOf(ElementsAre("127.0.0.1:7070"), ElementsAre("[::1]:7070"),
                                    ElementsAre("127.0.0.1:7070", "[::1]:7070")));
  for (const AgentAddress& agent : *agents) {
    EXPECT_EQ(agent.port, 7070);
  }
}

TEST(ParseAgentsTest, DnsItemsMixWithAddresses) {
  absl::StatusOr<std::vector<AgentAddress>> agents =
      ParseAgents("h1:7070,dns:///localhost:7071");
  ASSERT_TRUE(agents.ok()) << agents.status();
  ASSERT_GE(agents->size(), 2u);
  EXPECT_EQ((*agents)[0].text, "h1:7070");
  EXPECT_EQ((*agents)[1].port, 7071);
}

TEST(ParseAgentsTest, DnsErrors) {
  std::string message = AgentsError("dns:///no-such-name.invalid:7070");
  EXPECT_THAT(message, HasSubstr("'dns:///no-such-name.invalid:7070' has no A or AAAA records"));
  EXPECT_THAT(message, HasSubstr("list the agents as host:port"));
  EXPECT_THAT(AgentsError("dns:///localhost"), HasSubstr("no port"));
  EXPECT_THAT(AgentsError("dns:///localhost:0"), HasSubstr("not in 1..65535"));
}

TEST(ParseAgentsTest, DnsAddressesCountAsDuplicates) {
  absl::StatusOr<std::vector<AgentAddress>> localhost = ParseAgents("dns:///localhost:7070");
  ASSERT_TRUE(localhost.ok()) << localhost.status();
  const std::string first = localhost->front().text;
  EXPECT_THAT(AgentsError("dns:///localhost:7070," + first),
              HasSubstr(first + " is listed more than once"));
}

TEST(ParseAgentWeightsTest, ParsesOneWeightPerAgent) {
  absl::StatusOr<std::vector<uint32_t>> weights = ParseAgentWeights("1, 2 ,1", 3);
  ASSERT_TRUE(weights.ok()) << weights.status();
  EXPECT_THAT(*weights, ElementsAre(1u, 2u, 1u));
}

TEST(ParseAgentWeightsTest, EmptyMeansEqualWeights) {
  absl::StatusOr<std::vector<uint32_t>> weights = ParseAgentWeights("", 4);
  ASSERT_TRUE(weights.ok()) << weights.status();
  EXPECT_THAT(*weights, ElementsAre(1u, 1u, 1u, 1u));
}

TEST(ParseAgentWeightsTest, RefusesBadWeights) {
  EXPECT_THAT(WeightsError("1,2", 3), HasSubstr("2 weights for 3 agents"));
  EXPECT_THAT(WeightsError("1,2,1,1", 3), HasSubstr("4 weights for 3 agents"));
  EXPECT_THAT(WeightsError("1,0,1", 3), HasSubstr("agent 2 has weight 0"));
  EXPECT_THAT(WeightsError("1,,1", 3), HasSubstr("entry 2 of '1,,1' is empty"));
  EXPECT_THAT(WeightsError("1,x,1", 3), HasSubstr("'x' is not a whole number"));
  EXPECT_THAT(WeightsError("1,-2,1", 3), HasSubstr("'-2' is not a whole number"));
  EXPECT_THAT(WeightsError("1.5,1", 2), HasSubstr("'1.5' is not a whole number"));
  EXPECT_THAT(WeightsError("99999999999,1", 2), HasSubstr("'99999999999' is too large"));
  EXPECT_THAT(WeightsError("60000,50000", 2), HasSubstr("add up to 110000, more than 100000"));
}

}  // namespace
}  // namespace barrage::coordinator
