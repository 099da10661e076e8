#include "nimbus/core/clock.h"

#include <algorithm>

namespace nimbus {

double MonotonicSeconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

double WallSeconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::chrono::steady_clock::time_point Deadline::time_point() const {
  using namespace std::chrono;
  // Clamp so that Never() does not overflow the clock's integer representation.
  const double remaining = std::min(RemainingSeconds(), 1e9);
  return steady_clock::now() + duration_cast<steady_clock::duration>(duration<double>(remaining));
}

}  // namespace nimbus
