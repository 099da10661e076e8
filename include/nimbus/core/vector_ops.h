// Dense vector kernels over spans. Plain functions: they sit in inner loops, so no virtual calls.
// Reductions use four partial sums in a fixed order, so results are bit-identical run to run.
#pragma once

#include <cstddef>
#include <span>

namespace nimbus {

double Dot(std::span<const double> a, std::span<const double> b);
double SquaredNorm(std::span<const double> a);
double Norm(std::span<const double> a);
double NormInf(std::span<const double> a);
double Norm1(std::span<const double> a);
// ||a - b||^2
double SquaredDistance(std::span<const double> a, std::span<const double> b);
// y += alpha * x
void Axpy(double alpha, std::span<const double> x, std::span<double> y);
// x *= alpha
void Scale(double alpha, std::span<double> x);
void Fill(std::span<double> x, double value);
void CopyInto(std::span<const double> from, std::span<double> to);
// Number of entries that are not exactly zero.
std::size_t CountNonzeros(std::span<const double> a);

}  // namespace nimbus
