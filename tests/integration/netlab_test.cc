// Tests of the network-namespace lab (tests/support/netlab.cc): hosts reach each other over the lab
// bridge and nowhere else, nginx counts what it receives, and teardown leaves no namespace, no
// /etc/netns folder and no process behind, also when the test never calls TearDown().

#include "netlab.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "integration_util.h"

namespace barrage::integration {
namespace {

using barrage::testing::LabNginx;
using barrage::testing::NetLab;
using std::chrono::milliseconds;

constexpr milliseconds kCommandTimeout{10000};
constexpr int kTargetPort = 8080;

#define SKIP_UNLESS_NETLAB_AVAILABLE()                           \
  do {                                                           \
    std::string why;                                             \
    if (!NetLab::Available(&why)) {                              \
      GTEST_SKIP() << "network namespaces unavailable: " << why; \
    }                                                            \
  } while (false)

std::vector<std::string> AllNamespaces() {
  ProcessResult listed =
      barrage::testing::RunProcess({NetLab::IpBinary(), "netns", "list"}, kCommandTimeout);
  EXPECT_EQ(listed.exit_code, 0) << Describe(listed);
  std::vector<std::string> names;
  std::istringstream lines(listed.out);
  std::string line;
  while (std::getline(lines, line)) {
    names.push_back(line.substr(0, line.find(' ')));
  }
  return names;
}

std::vector<std::string> NamespacesStartingWith(const std::string& prefix) {
  std::vector<std::string> found;
  for (const std::string& name : AllNamespaces()) {
    if (name.rfind(prefix + "-", 0) == 0) {
      found.push_back(name);
    }
  }
  return found;
}

// Whether `pid` is gone or only a zombie waiting to be reaped (it runs no more code either way).
bool Dead(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) {
    return true;
  }
  size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

// `curl` run inside `from`: @return the body, or the failure as text.
std::string Fetch(NetLab& lab, const NetLab::Host& from, const std::string& url) {
  ProcessResult fetched =
      lab.Run(from, {"curl", "-s", "-S", "--max-time", "5", url}, kCommandTimeout);
  if (fetched.exit_code != 0) {
    return "curl failed: " + Describe(fetched);
  }
  return fetched.out;
}

TEST(NetLabTest, ClientsInTwoNamespacesReachNginxOnTheTargetAndNothingElse) {
  SKIP_UNLESS_NETLAB_AVAILABLE();
  NetLab lab;
  absl::StatusOr<NetLab::Host> target = lab.AddHost("target");
  ASSERT_TRUE(target.ok()) << target.status();
  absl::StatusOr<NetLab::Host> client1 = lab.AddHost("client1");
  ASSERT_TRUE(client1.ok()) << client1.status();
  absl::StatusOr<NetLab::Host> client2 = lab.AddHost("client2");
  ASSERT_TRUE(client2.ok()) << client2.status();

  EXPECT_EQ(lab.prefix().rfind("brg" + std::to_string(getpid()) + "-", 0), 0u) << lab.prefix();
  EXPECT_EQ(lab.subnet().rfind("10.77.", 0), 0u) << lab.subnet();
  std::vector<std::string> expected_namespaces = {lab.prefix() + "-sw", target->netns,
                                                  client1->netns, client2->netns};
  EXPECT_EQ(lab.Namespaces(), expected_namespaces);
  std::vector<std::string> present = NamespacesStartingWith(lab.prefix());
  std::sort(present.begin(), present.end());
  std::sort(expected_namespaces.begin(), expected_namespaces.end());
  EXPECT_EQ(present, expected_namespaces);
  for (const NetLab::Host* host : {&*target, &*client1, &*client2}) {
    EXPECT_EQ(host->address.rfind(lab.subnet() + ".", 0), 0u) << host->address;
    // No default route: nothing sent inside the lab can leave the machine.
    ProcessResult routes = barrage::testing::RunProcess(
        {NetLab::IpBinary(), "-n", host->netns, "route", "show", "default"}, kCommandTimeout);
    EXPECT_EQ(routes.exit_code, 0) << Describe(routes);
    EXPECT_EQ(routes.out, "") << host->netns;
    ProcessResult outside = barrage::testing::RunProcess(
        {NetLab::IpBinary(), "-n", host->netns, "route", "get", "1.1.1.1"}, kCommandTimeout);
    EXPECT_NE(outside.exit_code, 0) << Describe(outside);
  }
  EXPECT_NE(target->address, client1->address);
  EXPECT_NE(client1->address, client2->address);
  // The lab's addresses exist only inside its namespaces.
  ProcessResult root_addresses =
      barrage::testing::RunProcess({NetLab::IpBinary(), "-4", "addr", "show"}, kCommandTimeout);
  EXPECT_EQ(root_addresses.out.find(lab.subnet() + "."), std::string::npos) << root_addresses.out;

  ASSERT_TRUE(lab.WriteHostsFiles().ok());
  absl::StatusOr<std::unique_ptr<LabNginx>> nginx = lab.StartNginx(*target, kTargetPort);
  ASSERT_TRUE(nginx.ok()) << nginx.status();
  EXPECT_EQ((*nginx)->url(), "http://" + target->address + ":8080/");
  EXPECT_TRUE(lab.Connects(*client1, target->address, kTargetPort));
  EXPECT_FALSE(lab.Connects(*client1, target->address, kTargetPort + 1));
  // Each namespace has its own loopback: nginx does not listen on the clients' 127.0.0.1.
  EXPECT_FALSE(lab.Connects(*client1, "127.0.0.1", kTargetPort));
  const uint64_t probes = (*nginx)->RequestCount();  // Connects() opens and closes, no request

  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Fetch(lab, *client1, (*nginx)->url()), "ok\n");
  }
  EXPECT_EQ(Fetch(lab, *client2, (*nginx)->url()), "ok\n");
  // By name, through /etc/netns/<netns>/hosts.
  EXPECT_EQ(Fetch(lab, *client2, "http://target:8080/"), "ok\n");

  (*nginx)->Stop();
  EXPECT_EQ(probes, 0u);
  EXPECT_EQ((*nginx)->RequestCount(), 5u);
  std::vector<LabNginx::Request> requests = (*nginx)->Requests();
  ASSERT_EQ(requests.size(), 5u);
  int from_client1 = 0;
  int from_client2 = 0;
  for (const LabNginx::Request& request : requests) {
    EXPECT_EQ(request.status, 200);
    EXPECT_GT(request.unix_ms, 1'600'000'000'000);
    from_client1 += request.client == client1->address ? 1 : 0;
    from_client2 += request.client == client2->address ? 1 : 0;
  }
  EXPECT_EQ(from_client1, 3);
  EXPECT_EQ(from_client2, 2);

  const std::string prefix = lab.prefix();
  absl::Status torn_down = lab.TearDown();
  EXPECT_TRUE(torn_down.ok()) << torn_down;
  EXPECT_TRUE(lab.Namespaces().empty());
  EXPECT_EQ(NamespacesStartingWith(prefix), std::vector<std::string>{});
  EXPECT_FALSE(std::filesystem::exists("/etc/netns/" + target->netns));
  EXPECT_TRUE(lab.TearDown().ok());  // idempotent
  EXPECT_FALSE(lab.AddHost("late").ok());
}

TEST(NetLabTest, DestructorKillsEveryProcessAndDeletesEverythingWithoutTearDown) {
  SKIP_UNLESS_NETLAB_AVAILABLE();
  // Declared before the lab so that they outlive it: the lab, not their destructors, must end
  // them.
  ChildProcess sleeper;
  std::unique_ptr<LabNginx> nginx;
  std::string prefix;
  std::vector<std::string> netns_names;
  std::vector<pid_t> pids_inside;

  // Leaves the scope early the way a failed ASSERT_* leaves a test body: no TearDown() call.
  [&] {
    NetLab lab;
    prefix = lab.prefix();
    absl::StatusOr<NetLab::Host> a = lab.AddHost("a");
    ASSERT_TRUE(a.ok()) << a.status();
    absl::StatusOr<NetLab::Host> b = lab.AddHost("b");
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_TRUE(lab.WriteHostsFiles().ok());
    ASSERT_TRUE(std::filesystem::exists("/etc/netns/" + a->netns + "/hosts"));
    netns_names = lab.Namespaces();

    ASSERT_TRUE(lab.Start(sleeper, *a, {"sleep", "300"}).ok());
    absl::StatusOr<std::unique_ptr<LabNginx>> started = lab.StartNginx(*b, kTargetPort);
    ASSERT_TRUE(started.ok()) << started.status();
    nginx = std::move(*started);
    // A daemon that left our process group and session: only `ip netns pids` can find it.
    // (Its output goes to /dev/null: Run() waits until every writer of its pipes is gone.)
    ProcessResult daemon = lab.Run(
        *b, {"bash", "-c", "setsid -f sleep 300 </dev/null >/dev/null 2>&1"}, kCommandTimeout);
    ASSERT_EQ(daemon.exit_code, 0) << Describe(daemon);

    for (const NetLab::Host* host : {&*a, &*b}) {
      std::vector<pid_t> pids = lab.Pids(host->netns);
      pids_inside.insert(pids_inside.end(), pids.begin(), pids.end());
    }
    // a: sleeper (ip netns exec execs it in place, so it keeps the child's PID).
    // b: nginx master and worker, and the daemon.
    EXPECT_NE(std::find(pids_inside.begin(), pids_inside.end(), sleeper.pid()), pids_inside.end());
    EXPECT_NE(std::find(pids_inside.begin(), pids_inside.end(), nginx->pid()), pids_inside.end());
    EXPECT_GE(pids_inside.size(), 4u);
    return;
  }();
  ASSERT_FALSE(HasFatalFailure());

  EXPECT_EQ(NamespacesStartingWith(prefix), std::vector<std::string>{});
  for (const std::string& netns : netns_names) {
    EXPECT_FALSE(std::filesystem::exists("/etc/netns/" + netns)) << netns;
  }
  ProcessResult ended = sleeper.Wait(milliseconds(5000));
  EXPECT_FALSE(ended.timed_out);
  EXPECT_EQ(ended.exit_code, 128 + SIGKILL);
  EXPECT_TRUE(Dead(nginx->pid()));
  for (pid_t pid : pids_inside) {
    EXPECT_TRUE(Dead(pid)) << "pid " << pid << " survived the lab";
  }
}

TEST(NetLabTest, RejectsBadHostNames) {
  SKIP_UNLESS_NETLAB_AVAILABLE();
  NetLab lab;
  for (const char* bad : {"", "sw", "a b", "x/y", "name-longer-than-twenty"}) {
    absl::StatusOr<NetLab::Host> host = lab.AddHost(bad);
    EXPECT_EQ(host.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  // Nothing was built for the rejected names.
  EXPECT_TRUE(lab.Namespaces().empty());
  ASSERT_TRUE(lab.AddHost("one").ok());
  EXPECT_EQ(lab.AddHost("one").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(lab.Namespaces().size(), 2u);  // the switch and "one"
}

TEST(NetLabTest, RemovesLabsLeftByAKilledTestProcess) {
  SKIP_UNLESS_NETLAB_AVAILABLE();
  // A lab of this (live) process must survive the sweep. Built first: the first lab of a process
  // sweeps stale labs itself, which would leave nothing for the explicit sweep below (under
  // ctest every test is the first of its process).
  NetLab live;
  ASSERT_TRUE(live.AddHost("keep").ok());
  // A PID that belonged to a process that has exited: its lab can have no live owner.
  ChildProcess gone;
  ASSERT_TRUE(gone.Start({"/bin/true"}).ok());
  ASSERT_EQ(gone.Wait(milliseconds(5000)).exit_code, 0);
  const std::string stale = "brg" + std::to_string(gone.pid()) + "-0-sw";
  ProcessResult added =
      barrage::testing::RunProcess({NetLab::IpBinary(), "netns", "add", stale}, kCommandTimeout);
  ASSERT_EQ(added.exit_code, 0) << Describe(added);
  ChildProcess stray;
  ASSERT_TRUE(stray.Start({NetLab::IpBinary(), "netns", "exec", stale, "sleep", "300"}).ok());
  // Wait until `ip netns exec` has entered the namespace (bounded), so the sweep must kill it.
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(5000);
  bool inside = false;
  while (!inside && std::chrono::steady_clock::now() < deadline) {
    ProcessResult pids =
        barrage::testing::RunProcess({NetLab::IpBinary(), "netns", "pids", stale}, kCommandTimeout);
    inside = pids.out.find(std::to_string(stray.pid()) + "\n") != std::string::npos;
  }
  ASSERT_TRUE(inside) << "the stray process never entered " << stale;
  EXPECT_GE(NetLab::RemoveStaleLabs(), 1);
  std::vector<std::string> names = AllNamespaces();
  EXPECT_EQ(std::find(names.begin(), names.end(), stale), names.end());
  EXPECT_EQ(NamespacesStartingWith(live.prefix()).size(), 2u);
  ProcessResult ended = stray.Wait(milliseconds(5000));
  EXPECT_FALSE(ended.timed_out);
  EXPECT_EQ(ended.exit_code, 128 + SIGKILL);
}

}  // namespace
}  // namespace barrage::integration
