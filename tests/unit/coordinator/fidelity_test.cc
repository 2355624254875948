#include "barrage/coordinator/fidelity.h"

#include "gtest/gtest.h"

namespace barrage::coordinator {
namespace {

AgentProgress FinishedAgent(uint64_t lag_ns, uint64_t cpu_ns, uint64_t wall_ns,
                            uint64_t engine_limited = 0, uint64_t dropped = 0) {
  AgentProgress agent;
  agent.finished = true;
  common::LatencyHistogram lag;
  for (int i = 0; i < 100; ++i) lag.Record(lag_ns);
  lag.ToProto(agent.finished_message.mutable_schedule_lag());
  v1::Totals* totals = agent.finished_message.mutable_totals();
  totals->set_cpu_ns(cpu_ns);
  totals->set_wall_ns(wall_ns);
  totals->set_engine_limited_arrivals(engine_limited);
  totals->set_dropped_arrivals(dropped);
  return agent;
}

common::LoadSpec OpenLoop() {
  common::LoadSpec load;
  load.rate = 1000;
  return load;
}

TEST(FidelityTest, AClientThatKeptItsScheduleIsNotLimited) {
  const ClientFidelity fidelity =
      AssessFidelity({{"a", FinishedAgent(50'000, 200, 1000)}}, OpenLoop());
  EXPECT_FALSE(fidelity.client_limited);
  EXPECT_TRUE(fidelity.reason.empty());
  EXPECT_NEAR(fidelity.schedule_lag_p99_ms, 0.05, 0.001);
  EXPECT_DOUBLE_EQ(fidelity.agent_cpu, 0.2);
}

TEST(FidelityTest, LateSendsMarkTheRunClientLimited) {
  const ClientFidelity fidelity =
      AssessFidelity({{"a", FinishedAgent(5'000'000, 200, 1000)}}, OpenLoop());
  EXPECT_TRUE(fidelity.client_limited);
  EXPECT_NE(fidelity.reason.find("schedule lag p99"), std::string::npos);
}

TEST(FidelityTest, TheEngineLimitAndABusyCpuAreReasonsToo) {
  const ClientFidelity fidelity = AssessFidelity(
      {{"a", FinishedAgent(10'000, 950, 1000, 7, 3)}, {"b", FinishedAgent(10'000, 950, 1000)}},
      OpenLoop());
  EXPECT_TRUE(fidelity.client_limited);
  EXPECT_EQ(fidelity.engine_limited_arrivals, 7u);
  EXPECT_EQ(fidelity.dropped_arrivals, 3u);
  EXPECT_NE(fidelity.reason.find("7 arrivals waited for the engine"), std::string::npos);
  EXPECT_NE(fidelity.reason.find("95% busy"), std::string::npos);
}

TEST(FidelityTest, ScheduleLagDoesNotApplyToAClosedLoop) {
  common::LoadSpec closed;
  closed.concurrency = 8;
  const ClientFidelity fidelity =
      AssessFidelity({{"a", FinishedAgent(5'000'000, 100, 1000)}}, closed);
  EXPECT_FALSE(fidelity.client_limited);
}

}  // namespace
}  // namespace barrage::coordinator
