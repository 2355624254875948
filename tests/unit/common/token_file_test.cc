#include "barrage/common/token_file.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace barrage::common {
namespace {

std::string WriteTemp(const std::string& content) {
  char path[] = "/tmp/barrage-token-XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << content;
  return path;
}

TEST(TokenFileTest, ReadsTheSecretWithoutTrailingLineBreaks) {
  const std::string path = WriteTemp("s3cret\r\n\n");
  absl::StatusOr<std::string> token = ReadTokenFile(path);
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(*token, "s3cret");
  std::remove(path.c_str());
}

TEST(TokenFileTest, RefusesAMissingOrEmptyFile) {
  EXPECT_EQ(ReadTokenFile("/nonexistent/token").status().message(),
            "cannot read '/nonexistent/token'");
  const std::string path = WriteTemp("\n");
  EXPECT_EQ(ReadTokenFile(path).status().message(), "'" + path + "' is empty");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace barrage::common
