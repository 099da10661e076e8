// A seeded random stream with fixed algorithms (SplitMix64 seeding xoshiro256**), so a seed
// gives the same numbers on every platform and standard library (std:: distributions are
// implementation-defined): synthetic data, cross-validation folds.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

namespace nimbus {

class Random {
 public:
  explicit Random(uint64_t seed) {
    for (uint64_t& s : state_) {
      seed += 0x9e3779b97f4a7c15ULL;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      s = z ^ (z >> 31);
    }
  }
  uint64_t Next() {
    const uint64_t result = Rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = Rotl(state_[3], 45);
    return result;
  }
  // Uniform in (0, 1].
  double UniformOpenClosed() { return (static_cast<double>(Next() >> 11) + 1.0) * 0x1.0p-53; }
  // Uniform integer in [0, n).
  uint64_t Below(uint64_t n) { return static_cast<uint64_t>(UniformOpenClosed() * static_cast<double>(n)) % n; }
  double Gaussian() {
    const double u1 = UniformOpenClosed();
    const double u2 = UniformOpenClosed();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t state_[4];
};

}  // namespace nimbus
