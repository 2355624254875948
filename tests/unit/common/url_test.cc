#include "barrage/common/url.h"

#include <ostream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace barrage::common {
namespace {

using ::testing::HasSubstr;

TEST(ParseUrlTest, SplitsAPlainHttpUrl) {
  absl::StatusOr<Url> url = ParseUrl("http://example.com:8080/api/v1?x=1&y=2");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->scheme, "http");
  EXPECT_EQ(url->host, "example.com");
  EXPECT_EQ(url->port, 8080);
  EXPECT_EQ(url->target, "/api/v1?x=1&y=2");
}

TEST(ParseUrlTest, DefaultsPortBySchemeAndTargetToSlash) {
  absl::StatusOr<Url> http = ParseUrl("http://127.0.0.1");
  ASSERT_TRUE(http.ok()) << http.status();
  EXPECT_EQ(http->port, 80);
  EXPECT_EQ(http->target, "/");

  absl::StatusOr<Url> https = ParseUrl("https://example.com");
  ASSERT_TRUE(https.ok()) << https.status();
  EXPECT_EQ(https->scheme, "https");
  EXPECT_EQ(https->port, 443);
  EXPECT_EQ(https->target, "/");
}

TEST(ParseUrlTest, LowercasesTheScheme) {
  absl::StatusOr<Url> url = ParseUrl("HTTPS://Example.COM/");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->scheme, "https");
  EXPECT_EQ(url->host, "Example.COM");
}

TEST(ParseUrlTest, QueryWithoutPathGetsASlash) {
  absl::StatusOr<Url> url = ParseUrl("http://h:81?q=1");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->host, "h");
  EXPECT_EQ(url->port, 81);
  EXPECT_EQ(url->target, "/?q=1");
}

TEST(ParseUrlTest, DropsTheFragment) {
  absl::StatusOr<Url> url = ParseUrl("http://h/page?a=b#section");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->target, "/page?a=b");
}

TEST(ParseUrlTest, AcceptsBracketedIpv6WithAndWithoutPort) {
  absl::StatusOr<Url> with_port = ParseUrl("http://[::1]:8080/x");
  ASSERT_TRUE(with_port.ok()) << with_port.status();
  EXPECT_EQ(with_port->host, "::1");
  EXPECT_EQ(with_port->port, 8080);
  EXPECT_EQ(with_port->target, "/x");

  absl::StatusOr<Url> without_port = ParseUrl("https://[2001:db8::42]");
  ASSERT_TRUE(without_port.ok()) << without_port.status();
  EXPECT_EQ(without_port->host, "2001:db8::42");
  EXPECT_EQ(without_port->port, 443);
}

TEST(ParseUrlTest, SkipsUserInfo) {
  absl::StatusOr<Url> url = ParseUrl("http://user:secret@127.0.0.1:9000/");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->host, "127.0.0.1");
  EXPECT_EQ(url->port, 9000);
}

TEST(ParseUrlTest, AcceptsPortBounds) {
  EXPECT_EQ(ParseUrl("http://h:1/").value().port, 1);
  EXPECT_EQ(ParseUrl("http://h:65535/").value().port, 65535);
}

TEST(ParseUrlTest, AcceptsNamesWithHyphensUnderscoresAndARootDot) {
  EXPECT_TRUE(ParseUrl("http://my-host_1.example.com./").ok());
  EXPECT_TRUE(ParseUrl("http://localhost:8000/v1/completions").ok());
}

// Each malformed URL and the words its message must contain.
struct BadUrl {
  std::string text;
  std::string why;
};

// Names the case in test output instead of dumping its bytes.
void PrintTo(const BadUrl& bad, std::ostream* out) { *out << ::testing::PrintToString(bad.text); }

class BadUrlTest : public ::testing::TestWithParam<BadUrl> {};

TEST_P(BadUrlTest, IsRefusedWithTheReason) {
  absl::StatusOr<Url> url = ParseUrl(GetParam().text);
  ASSERT_FALSE(url.ok()) << GetParam().text << " was accepted";
  EXPECT_EQ(url.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(url.status().message());
  EXPECT_THAT(message, HasSubstr(GetParam().why));
  EXPECT_THAT(message, HasSubstr("is not a valid URL"));
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, BadUrlTest,
    ::testing::Values(
        BadUrl{"", "missing scheme"}, BadUrl{"127.0.0.1:8080/", "missing scheme"},
        BadUrl{"localhost/path", "missing scheme"}, BadUrl{"://host/", "missing scheme"},
        BadUrl{"http:/host/", "missing scheme"}, BadUrl{"ftp://host/", "unsupported scheme 'ftp'"},
        BadUrl{"ws://host/", "unsupported scheme 'ws'"}, BadUrl{"http://", "empty host"},
        BadUrl{"http:///path", "empty host"}, BadUrl{"http://:80/", "empty host"},
        BadUrl{"http://user@/", "empty host"}, BadUrl{"http://h:0/", "bad port"},
        BadUrl{"http://h:65536/", "bad port"}, BadUrl{"http://h:99999/", "bad port"},
        BadUrl{"http://h:/", "bad port"}, BadUrl{"http://h:-1/", "bad port"},
        BadUrl{"http://h:+80/", "bad port"}, BadUrl{"http://h:80x/", "bad port"},
        BadUrl{"http://h:8:8/", "bad port"}, BadUrl{"http://[::1]:/", "bad port"},
        BadUrl{"http://[::1]:70000/", "bad port"}, BadUrl{"http://[::1/", "unclosed '['"},
        BadUrl{"http://[]/", "empty host"}, BadUrl{"http://[zz::1]/", "bad IPv6 address"},
        BadUrl{"http://[1::2::3]/", "bad IPv6 address"},
        BadUrl{"http://[::1]x/", "unexpected text after the IPv6 host"},
        BadUrl{"http://1.2.3.999/", "bad IPv4 address"},
        BadUrl{"http://1.2.3/", "bad IPv4 address"},
        BadUrl{"http://ho$t/", "bad character in host"}, BadUrl{"http://a..b/", "empty label"},
        BadUrl{"http://./", "empty label"}, BadUrl{"http://-a.com/", "starts or ends with '-'"},
        BadUrl{"http://" + std::string(64, 'a') + ".com/", "longer than 63"},
        BadUrl{"http://h/a b", "space or control character"},
        BadUrl{"http://h/\nx", "space or control character"}));

}  // namespace
}  // namespace barrage::common
