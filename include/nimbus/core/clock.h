// Clocks and timers. Monotonic time measures durations; wall time stamps trace events so that
// events from different processes can be placed on one axis.
#pragma once

#include <chrono>

namespace nimbus {

// Seconds on the monotonic clock (arbitrary origin).
double MonotonicSeconds();
// Seconds since the Unix epoch.
double WallSeconds();

class Stopwatch {
 public:
  Stopwatch() : start_(MonotonicSeconds()) {}
  double ElapsedSeconds() const { return MonotonicSeconds() - start_; }
  void Restart() { start_ = MonotonicSeconds(); }

 private:
  double start_;
};

// Adds the seconds between construction and destruction to *total.
class ScopedTimer {
 public:
  explicit ScopedTimer(double* total) : total_(total) {}
  ~ScopedTimer() { *total_ += watch_.ElapsedSeconds(); }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  double* total_;
  Stopwatch watch_;
};

// A point on the monotonic clock by which a wait must end.
class Deadline {
 public:
  static Deadline After(double seconds) { return Deadline(MonotonicSeconds() + seconds); }
  static Deadline Never() { return Deadline(1e300); }
  double RemainingSeconds() const { return at_ - MonotonicSeconds(); }
  bool Expired() const { return RemainingSeconds() <= 0; }
  double at() const { return at_; }
  std::chrono::steady_clock::time_point time_point() const;

 private:
  explicit Deadline(double at) : at_(at) {}
  double at_;
};

}  // namespace nimbus
