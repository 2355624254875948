// Tests of the test-support process helpers (tests/support/process.cc).

#include "process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace barrage::testing {
namespace {

using std::chrono::milliseconds;

TEST(RunProcessTest, CapturesOutputAndExitCode) {
  ProcessResult result =
      RunProcess({"/bin/sh", "-c", "echo to-out; echo to-err >&2; exit 3"}, milliseconds(10000));
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.out, "to-out\n");
  EXPECT_EQ(result.err, "to-err\n");
}

TEST(RunProcessTest, KillsTheWholeGroupAtTheTimeout) {
  const auto started = std::chrono::steady_clock::now();
  // The background sleep holds the pipes open too: only killing the group ends it.
  ProcessResult result = RunProcess({"/bin/sh", "-c", "sleep 30 & sleep 30"}, milliseconds(200));
  const auto elapsed = std::chrono::steady_clock::now() - started;
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.exit_code, 128 + SIGKILL);
  EXPECT_LT(elapsed, std::chrono::seconds(3));
}

TEST(RunProcessTest, ReportsAMissingBinary) {
  ProcessResult result = RunProcess({"/nonexistent/binary"}, milliseconds(1000));
  EXPECT_EQ(result.exit_code, -1);
  EXPECT_NE(result.err.find("/nonexistent/binary"), std::string::npos) << result.err;
}

TEST(ChildProcessTest, WaitsForOutputAndStopsOnASignal) {
  ChildProcess child;
  ASSERT_TRUE(child.Start({"/bin/sh", "-c", "echo ready; exec sleep 30"}).ok());
  EXPECT_GT(child.pid(), 0);
  absl::StatusOr<std::string> out = child.WaitForOutput("ready", milliseconds(5000));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(child.Exited());
  ASSERT_TRUE(child.Signal(SIGTERM));
  ProcessResult result = child.Wait(milliseconds(5000));
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.exit_code, 128 + SIGTERM);
  EXPECT_EQ(result.out, "ready\n");
  EXPECT_FALSE(child.Signal(SIGTERM));  // already reaped
}

TEST(ChildProcessTest, KillsTheChildAtTheWaitTimeout) {
  ChildProcess child;
  ASSERT_TRUE(child.Start({"/bin/sleep", "30"}).ok());
  ProcessResult result = child.Wait(milliseconds(100));
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.exit_code, 128 + SIGKILL);
}

TEST(ChildProcessTest, WaitForOutputStopsWhenTheChildExits) {
  ChildProcess child;
  ASSERT_TRUE(child.Start({"/bin/sh", "-c", "echo oops >&2; exit 1"}).ok());
  absl::StatusOr<std::string> out = child.WaitForOutput("never", milliseconds(5000));
  EXPECT_TRUE(absl::IsAborted(out.status())) << out.status();
  EXPECT_NE(out.status().message().find("oops"), std::string::npos) << out.status();
  EXPECT_EQ(child.Wait(milliseconds(0)).exit_code, 1);
}

TEST(TempDirTest, IsRemovedWithItsContents) {
  std::string path;
  {
    TempDir dir;
    path = dir.path();
    std::ofstream(dir.File("a.txt")) << "x";
    ASSERT_TRUE(std::filesystem::exists(dir.File("a.txt")));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(FreeLoopbackPortTest, GivesAPortThatCanBeBound) {
  const int port = FreeLoopbackPort();
  ASSERT_GT(port, 0);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  EXPECT_FALSE(PortAccepts(port));
  EXPECT_EQ(listen(fd, 1), 0);
  EXPECT_TRUE(PortAccepts(port));
  close(fd);
}

}  // namespace
}  // namespace barrage::testing
