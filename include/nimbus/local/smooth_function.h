// The interface between an inner solver and the function it minimizes, in the shape of
// liblinear's `function`: value, gradient, Hessian-vector product and Hessian diagonal.
// Called a handful of times per solver iteration, so it is a virtual seam; the sparse
// kernels behind it are not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace nimbus {

class SmoothFunction {
 public:
  virtual ~SmoothFunction() = default;
  virtual std::size_t dimension() const = 0;
  // f(x).
  virtual double Value(std::span<const double> x) = 0;
  // grad f(x). Also makes x the point at which HessianVector and HessianDiagonal are taken.
  // Implementations cache work for x equal to the last point given to Value().
  virtual void Gradient(std::span<const double> x, std::span<double> gradient) = 0;
  // hv = H v at the last Gradient() point.
  virtual void HessianVector(std::span<const double> v, std::span<double> hv) = 0;
  // hv = H v where v has an entry, for a caller that reads no other: a function may leave the
  // rest 0 (each block's features where some block of v has an entry count as v's). By default
  // the whole product.
  virtual void HessianVectorOnSupport(std::span<const double> v, std::span<double> hv) { HessianVector(v, hv); }
  // The diagonal of H at the last Gradient() point (a preconditioner).
  virtual void HessianDiagonal(std::span<double> diagonal) = 0;
};

// What an inner solve did, for reports and for tightening tolerances.
struct LocalSolveStats {
  int iterations = 0;     // Newton or quasi-Newton steps
  int cg_iterations = 0;  // Hessian-vector products inside Newton-CG
  int evaluations = 0;    // function values computed
  double initial_gradient_norm = 0;
  double final_gradient_norm = 0;
  bool converged = false;  // reached the gradient tolerance
};

}  // namespace nimbus
