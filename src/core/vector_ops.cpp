#include "nimbus/core/vector_ops.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace nimbus {
namespace {

// Sum of op(i) over i with four interleaved accumulators: vectorizes without -ffast-math
// and keeps a fixed summation order.
template <typename Op>
double SumOf(std::size_t n, Op op) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += op(i);
    s1 += op(i + 1);
    s2 += op(i + 2);
    s3 += op(i + 3);
  }
  for (; i < n; ++i) s0 += op(i);
  return (s0 + s1) + (s2 + s3);
}

}  // namespace

double Dot(std::span<const double> a, std::span<const double> b) {
  assert(a.size() == b.size());
  const double* pa = a.data();
  const double* pb = b.data();
  return SumOf(a.size(), [=](std::size_t i) { return pa[i] * pb[i]; });
}

double SquaredNorm(std::span<const double> a) { return Dot(a, a); }

double Norm(std::span<const double> a) { return std::sqrt(SquaredNorm(a)); }

double NormInf(std::span<const double> a) {
  double m = 0;
  for (double v : a) {
    if (std::isnan(v)) return v;  // a diverged iterate must not look small
    m = std::max(m, std::abs(v));
  }
  return m;
}

double Norm1(std::span<const double> a) {
  const double* pa = a.data();
  return SumOf(a.size(), [=](std::size_t i) { return std::abs(pa[i]); });
}

double SquaredDistance(std::span<const double> a, std::span<const double> b) {
  assert(a.size() == b.size());
  const double* pa = a.data();
  const double* pb = b.data();
  return SumOf(a.size(), [=](std::size_t i) {
    const double d = pa[i] - pb[i];
    return d * d;
  });
}

void Axpy(double alpha, std::span<const double> x, std::span<double> y) {
  assert(x.size() == y.size());
  const std::size_t n = x.size();
  for (std::size_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void Scale(double alpha, std::span<double> x) {
  for (double& v : x) v *= alpha;
}

void Fill(std::span<double> x, double value) { std::fill(x.begin(), x.end(), value); }

void CopyInto(std::span<const double> from, std::span<double> to) {
  assert(from.size() == to.size());
  std::copy(from.begin(), from.end(), to.begin());
}

std::size_t CountNonzeros(std::span<const double> a) {
  return static_cast<std::size_t>(std::count_if(a.begin(), a.end(), [](double v) { return v != 0.0; }));
}

}  // namespace nimbus
