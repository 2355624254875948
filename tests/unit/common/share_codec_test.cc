#include "barrage/common/share_codec.h"

#include "barrage/v1/agent.pb.h"
#include "gtest/gtest.h"

namespace barrage::common {
namespace {

AgentShare SampleShare() {
  AgentShare share;
  share.plan.request.url = "http://127.0.0.1:8080/api";
  share.plan.request.method = "POST";
  share.plan.request.headers = {"Content-Type: application/json", "X-Trace: 1"};
  share.plan.request.body = std::string("{\"a\":1}\0binary", 14);
  LoadSpec& load = share.plan.load;
  load.rate = 1234.5;
  load.arrival = ArrivalKind::kGamma;
  load.burstiness = 0.5;
  load.concurrency = 64;
  load.duration = 10 * kNanosPerSecond;
  load.requests = 5000;
  load.warmup = 2 * kNanosPerSecond;
  load.timeout = 3 * kNanosPerSecond;
  load.grace = kNanosPerSecond;
  load.seed = 42;
  load.threads = 3;
  share.slice_index = 1;
  share.slice_count = 3;
  share.slice_weights = {1, 2, 1};
  share.concurrency = 32;
  share.requests = 2500;
  return share;
}

TEST(ShareCodecTest, RoundTripKeepsEveryField) {
  const AgentShare share = SampleShare();
  v1::Share wire;
  EncodeShare(share, &wire);
  std::string bytes;
  ASSERT_TRUE(wire.SerializeToString(&bytes));
  v1::Share parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  absl::StatusOr<AgentShare> decoded = DecodeShare(parsed);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->plan.request.url, share.plan.request.url);
  EXPECT_EQ(decoded->plan.request.method, share.plan.request.method);
  EXPECT_EQ(decoded->plan.request.headers, share.plan.request.headers);
  EXPECT_EQ(decoded->plan.request.body, share.plan.request.body);
  const LoadSpec& load = decoded->plan.load;
  ASSERT_TRUE(load.rate.has_value());
  EXPECT_EQ(*load.rate, 1234.5);
  EXPECT_EQ(load.arrival, ArrivalKind::kGamma);
  EXPECT_EQ(load.burstiness, 0.5);
  EXPECT_EQ(load.concurrency, 64u);
  EXPECT_EQ(load.duration, 10 * kNanosPerSecond);
  EXPECT_EQ(load.requests, 5000u);
  EXPECT_EQ(load.warmup, 2 * kNanosPerSecond);
  EXPECT_EQ(load.timeout, 3 * kNanosPerSecond);
  EXPECT_EQ(load.grace, kNanosPerSecond);
  EXPECT_EQ(load.seed, 42u);
  EXPECT_EQ(load.threads, 3u);
  EXPECT_EQ(decoded->slice_index, 1u);
  EXPECT_EQ(decoded->slice_count, 3u);
  EXPECT_EQ(decoded->slice_weights, share.slice_weights);
  EXPECT_EQ(decoded->concurrency, 32u);
  EXPECT_EQ(decoded->requests, 2500u);
}

TEST(ShareCodecTest, ClosedLoopHasNoRate) {
  AgentShare share = SampleShare();
  share.plan.load.rate.reset();
  share.plan.load.arrival = ArrivalKind::kConstant;
  v1::Share wire;
  EncodeShare(share, &wire);
  absl::StatusOr<AgentShare> decoded = DecodeShare(wire);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_FALSE(decoded->plan.load.rate.has_value());
}

TEST(ShareCodecTest, RefusesWhatNoCoordinatorCouldHaveSent) {
  const auto refused = [](void (*spoil)(v1::Share&)) {
    v1::Share wire;
    EncodeShare(SampleShare(), &wire);
    spoil(wire);
    return DecodeShare(wire).status().code() == absl::StatusCode::kInvalidArgument;
  };
  EXPECT_TRUE(refused([](v1::Share& w) { w.set_slice_index(3); }));
  EXPECT_TRUE(refused([](v1::Share& w) { w.set_slice_count(0); }));
  EXPECT_TRUE(refused([](v1::Share& w) { w.add_slice_weights(1); }));  // 4 weights, 3 slices
  EXPECT_TRUE(refused([](v1::Share& w) { w.set_slice_weights(0, 0); }));
  EXPECT_TRUE(refused([](v1::Share& w) { w.mutable_load()->set_arrival(7); }));
  EXPECT_TRUE(refused([](v1::Share& w) { w.mutable_load()->set_rate(-1); }));
  EXPECT_TRUE(refused([](v1::Share& w) { w.mutable_request()->clear_url(); }));
  EXPECT_TRUE(refused([](v1::Share& w) { w.mutable_load()->set_threads(0); }));
}

}  // namespace
}  // namespace barrage::common
