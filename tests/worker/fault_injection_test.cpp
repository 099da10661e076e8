// Injected faults: the option syntax, and draws that are reproducible from the seed.
#include "nimbus/worker/fault_injection.h"

#include <gtest/gtest.h>

namespace nimbus {
namespace {

TEST(FaultInjection, ParsesEverySpecForm) {
  FaultInjection f;
  ASSERT_TRUE(ParseDelaySpec("250", &f).ok());
  EXPECT_EQ(f.delay_ms, 250);
  EXPECT_EQ(f.delay_probability, 1);
  EXPECT_EQ(f.delay_worker, -1);
  ASSERT_TRUE(ParseDelaySpec("40:0.5@3", &f).ok());
  EXPECT_EQ(f.delay_ms, 40);
  EXPECT_EQ(f.delay_probability, 0.5);
  EXPECT_EQ(f.delay_worker, 3);

  FaultInjection c;
  ASSERT_TRUE(ParseCrashSpec("0.1", &c).ok());
  EXPECT_EQ(c.crash_probability, 0.1);
  ASSERT_TRUE(ParseCrashSpec("0.2@1", &c).ok());
  EXPECT_EQ(c.crash_worker, 1);
  FaultInjection r;
  ASSERT_TRUE(ParseCrashSpec("@2:7", &r).ok());
  EXPECT_EQ(r.crash_worker, 2);
  EXPECT_EQ(r.crash_round, 7);

  FaultInjection s;
  ASSERT_TRUE(ParseSlowSpec("5@0", &s).ok());
  EXPECT_EQ(s.slow_factor, 5);
  EXPECT_EQ(s.slow_worker, 0);
}

TEST(FaultInjection, BadSpecsSayWhatIsExpected) {
  FaultInjection f;
  EXPECT_NE(ParseDelaySpec("x", &f).message().find("MS[:P][@WORKER]"), std::string::npos);
  EXPECT_NE(ParseDelaySpec("10:2", &f).message().find("probability must be in [0, 1]"), std::string::npos);
  EXPECT_NE(ParseCrashSpec("1.0", &f).message().find("[0, 1)"), std::string::npos);
  EXPECT_NE(ParseCrashSpec("@1", &f).message().find("@WORKER:ROUND"), std::string::npos);
  EXPECT_NE(ParseSlowSpec("5", &f).message().find("FACTOR@WORKER"), std::string::npos);
  FaultInjection g;
  EXPECT_NE(ParseSlowSpec("0.5@1", &g).message().find("factor must be >= 1"), std::string::npos);
}

TEST(FaultInjection, DrawsAreReproducibleAndNearTheirProbability) {
  FaultInjection f;
  f.crash_probability = 0.25;
  f.seed = 7;
  int crashes = 0;
  for (int64_t round = 0; round < 4000; ++round) {
    const bool once = f.Crashes(2, 0, round);
    EXPECT_EQ(once, f.Crashes(2, 0, round));  // the same coordinates, the same draw
    crashes += once ? 1 : 0;
  }
  EXPECT_GT(crashes, 900);
  EXPECT_LT(crashes, 1100);
  FaultInjection other = f;
  other.seed = 8;
  int differ = 0;
  for (int64_t round = 0; round < 200; ++round) differ += f.Crashes(2, 0, round) != other.Crashes(2, 0, round);
  EXPECT_GT(differ, 0);
}

TEST(FaultInjection, TargetedCrashesAndDelays) {
  FaultInjection f;
  f.crash_worker = 1;
  f.crash_round = 3;
  EXPECT_TRUE(f.Crashes(1, 0, 3));
  EXPECT_FALSE(f.Crashes(1, 1, 3));  // the replacement redoing round 3 survives
  EXPECT_FALSE(f.Crashes(0, 0, 3));
  EXPECT_FALSE(f.Crashes(1, 0, 4));
  f.delay_ms = 100;
  f.delay_worker = 2;
  EXPECT_EQ(f.DelaySeconds(2, 0, 5), 0.1);
  EXPECT_EQ(f.DelaySeconds(1, 0, 5), 0.0);
  EXPECT_TRUE(f.active());
  EXPECT_FALSE(FaultInjection{}.active());
}

}  // namespace
}  // namespace nimbus

namespace nimbus {
namespace {

TEST(FaultInjectionText, RoundTripsEveryFieldAndRefusesAnythingElse) {
  FaultInjection faults;
  EXPECT_EQ(EncodeFaults(faults), "");  // none: nothing to send
  ASSERT_TRUE(DecodeFaults("").ok());
  EXPECT_FALSE(DecodeFaults("")->active());
  faults.crash_probability = 0.125;
  faults.delay_ms = 30;
  faults.delay_probability = 0.5;
  faults.delay_worker = 2;
  faults.crash_worker = 1;
  faults.crash_round = 4;
  faults.slow_worker = 3;
  faults.slow_factor = 5;
  faults.seed = 99;
  EXPECT_EQ(EncodeFaults(faults), "0.125 30 0.5 2 1 4 3 5 99");
  Result<FaultInjection> back = DecodeFaults(EncodeFaults(faults));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->crash_probability, 0.125);
  EXPECT_EQ(back->delay_ms, 30);
  EXPECT_EQ(back->delay_probability, 0.5);
  EXPECT_EQ(back->delay_worker, 2);
  EXPECT_EQ(back->crash_worker, 1);
  EXPECT_EQ(back->crash_round, 4);
  EXPECT_EQ(back->slow_worker, 3);
  EXPECT_EQ(back->slow_factor, 5);
  EXPECT_EQ(back->seed, 99u);
  for (const char* bad : {"0.125 30", "0.125 30 0.5 2 1 4 3 5 99 7", "x 30 0.5 2 1 4 3 5 99", "1.5 0 1 -1 -1 -1 -1 1 1"}) {
    EXPECT_FALSE(DecodeFaults(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace nimbus
