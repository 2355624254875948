// Tests of the test-support nginx fixture (tests/support/nginx_fixture.cc).

#include "nginx_fixture.h"

#include "gtest/gtest.h"
#include "integration_util.h"

namespace barrage::integration {
namespace {

TEST(NginxServerTest, AnswersOkOnKeepAliveConnectionsAndStops) {
  NginxServer nginx;
  absl::Status started = nginx.Start();
  ASSERT_TRUE(started.ok()) << started;
  EXPECT_EQ(nginx.url(), "http://127.0.0.1:" + std::to_string(nginx.port()) + "/");

  LoopbackClient client;
  ASSERT_TRUE(client.Connect(nginx.port()));
  const std::string request = "GET /anything HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  ASSERT_TRUE(client.Send(request + request));
  std::string responses = client.ReadResponses(2);
  EXPECT_EQ(responses.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << responses;
  EXPECT_EQ(responses.find("HTTP/1.1 200 OK\r\n", 1) != std::string::npos, true) << responses;

  nginx.Stop();
  EXPECT_FALSE(barrage::testing::PortAccepts(nginx.port()));
}

TEST(NginxServerTest, CountsRequestsInItsAccessLog) {
  NginxServer nginx(NginxServer::Options{.access_log = true});
  absl::Status started = nginx.Start();
  ASSERT_TRUE(started.ok()) << started;
  LoopbackClient client;
  ASSERT_TRUE(client.Connect(nginx.port()));
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(client.Send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
    ASSERT_NE(client.ReadResponses(1).find("ok\n"), std::string::npos);
  }
  // After a graceful stop every finished request has been logged.
  nginx.Stop();
  EXPECT_EQ(nginx.RequestCount(), 3u);
}

}  // namespace
}  // namespace barrage::integration
