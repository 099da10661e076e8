// Clocks, stopwatches, scoped timers and deadlines (short sleeps only).
#include "nimbus/core/clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <thread>

namespace nimbus {
namespace {

using namespace std::chrono_literals;

TEST(ClockTest, MonotonicSecondsNeverGoesBack) {
  double previous = MonotonicSeconds();
  for (int i = 0; i < 1000; ++i) {
    const double now = MonotonicSeconds();
    ASSERT_GE(now, previous);
    previous = now;
  }
}

TEST(ClockTest, WallSecondsIsUnixTime) {
  const double expected = static_cast<double>(std::time(nullptr));
  EXPECT_NEAR(WallSeconds(), expected, 2.0);
  EXPECT_GT(WallSeconds(), 1.5e9);  // after 2017
}

TEST(StopwatchTest, MeasuresSleep) {
  Stopwatch watch;
  std::this_thread::sleep_for(50ms);
  const double elapsed = watch.ElapsedSeconds();
  EXPECT_GE(elapsed, 0.049);
  EXPECT_LT(elapsed, 5.0);
  watch.Restart();
  EXPECT_LT(watch.ElapsedSeconds(), elapsed);
}

TEST(ScopedTimerTest, AddsToTotal) {
  double total = 1.0;
  {
    ScopedTimer timer(&total);
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_GE(total, 1.009);
  EXPECT_LT(total, 6.0);
  const double after_first = total;
  { ScopedTimer timer(&total); }
  EXPECT_GE(total, after_first);
  EXPECT_LT(total, after_first + 1.0);
}

TEST(DeadlineTest, AfterExpires) {
  const Deadline deadline = Deadline::After(0.1);
  EXPECT_FALSE(deadline.Expired());
  EXPECT_GT(deadline.RemainingSeconds(), 0.0);
  EXPECT_LE(deadline.RemainingSeconds(), 0.1);
  std::this_thread::sleep_for(120ms);
  EXPECT_TRUE(deadline.Expired());
  EXPECT_LT(deadline.RemainingSeconds(), 0.0);
}

TEST(DeadlineTest, ZeroAndNegativeAreAlreadyExpired) {
  EXPECT_TRUE(Deadline::After(0).Expired());
  EXPECT_TRUE(Deadline::After(-1).Expired());
}

TEST(DeadlineTest, NeverDoesNotExpireAndHasAUsableTimePoint) {
  const Deadline never = Deadline::Never();
  EXPECT_FALSE(never.Expired());
  EXPECT_GT(never.RemainingSeconds(), 1e100);
  // The time point must not overflow into the past.
  EXPECT_GT(never.time_point(), std::chrono::steady_clock::now() + std::chrono::hours(24 * 365));
}

TEST(DeadlineTest, TimePointMatchesRemainingSeconds) {
  const Deadline deadline = Deadline::After(10.0);
  const auto remaining = deadline.time_point() - std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(remaining).count();
  EXPECT_NEAR(seconds, 10.0, 0.5);
  EXPECT_NEAR(deadline.at(), MonotonicSeconds() + 10.0, 0.5);
}

}  // namespace
}  // namespace nimbus
