// Limited-memory BFGS with a backtracking Armijo line search: the second inner solver. It
// needs only values and gradients, so it also suits losses without a usable Hessian.
#pragma once

#include <span>

#include "nimbus/core/status.h"
#include "nimbus/local/smooth_function.h"

namespace nimbus {

struct LbfgsOptions {
  double gradient_tolerance = 1e-8;  // stop when ||grad|| <= this (absolute)
  double relative_tolerance = 0.0;   // ... or <= this times the starting ||grad||
  int max_iterations = 500;
  int memory = 10;                   // (s, y) pairs kept
  int max_line_search_steps = 40;
  double armijo = 1e-4;              // sufficient decrease constant

  Status Validate() const;
};

LocalSolveStats MinimizeLbfgs(SmoothFunction& f, std::span<double> x, const LbfgsOptions& options);

}  // namespace nimbus
