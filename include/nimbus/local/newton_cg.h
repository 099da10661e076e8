// Trust-region Newton with preconditioned conjugate gradients (Lin & More's TRON, as in
// liblinear's newton solver): each step solves H s = -g inexactly by CG inside a trust
// region measured in the preconditioner's norm, then the region grows or shrinks with the
// ratio of actual to predicted decrease.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "nimbus/core/status.h"
#include "nimbus/local/smooth_function.h"

namespace nimbus {

struct NewtonCgOptions {
  double gradient_tolerance = 1e-8;  // stop when ||grad|| <= this (absolute)
  double relative_tolerance = 0.0;   // ... or <= this times the starting ||grad||
  int max_iterations = 100;          // Newton steps
  int max_cg_iterations = 200;       // per Newton step
  // CG stops when ||residual|| <= cg_forcing * ||grad|| (an inexact Newton step).
  double cg_forcing = 0.1;
  // The first trust region; 0: the preconditioned gradient's length, as TRON starts. A run
  // that goes on from a checkpoint passes the radius it had.
  double initial_radius = 0;
  // Called after every Newton step; returning false ends the solve there (a master's stop
  // rules: a target, a failed worker, the user; and its checkpoints).
  struct Progress {
    int iteration = 0;
    double value = 0;          // at the iterate
    double gradient_norm = 0;  // likewise
    double radius = 0;         // of the trust region for the next step (0 where there is none)
    double initial_gradient_norm = 0;  // at the point the solve started from
  };
  std::function<bool(const Progress&)> after_iteration;
  // Coordinates in independent blocks, the Hessian block diagonal (a one-vs-rest model's
  // classes): CG then runs one recurrence per block, with its own step sizes and its own stop
  // test (cg_forcing times its share of the gradient), in the same Hessian products, so each
  // block converges at its own rate instead of the whole spectrum's. block_of[k] < blocks is
  // coordinate k's block (it must outlive the solve); blocks = 1: one recurrence.
  int blocks = 1;
  std::span<const uint32_t> block_of;

  Status Validate() const;
};

// The solver's vectors, kept by a caller that solves again and again (an ADMM worker, every
// round), so that a model-sized allocation is not made, faulted in and zeroed each time.
struct NewtonCgWorkspace {
  std::vector<double> g, g_trial, m, s, x_trial, r, z, d, hd;
  void Resize(std::size_t n);
};

// Minimizes f from the starting point in x (a warm start); x holds the result.
LocalSolveStats MinimizeNewtonCg(SmoothFunction& f, std::span<double> x, const NewtonCgOptions& options,
                                 NewtonCgWorkspace* workspace = nullptr);

}  // namespace nimbus
