// The second master algorithm: distributed Newton-CG, as MPI-LIBLINEAR does it (Zhuang,
// Chin, Juan & Lin 2015). For a smooth problem (l1 = 0) the master runs TRON
// (local/newton_cg.h) on F(x) = sum_i f_i(x) + (l2/2) ||x||^2; with an l1 term, TRON on the
// smooth problem of an active set with fixed signs, cycle after cycle, the set growing by
// the coordinates whose subgradient says they should move (newton.cpp, ActiveSetNewton).
// The pieces of F come from the workers' shards:
//
//   evaluate round   F(x), grad F(x), diag H(x)   <- sum_i of each shard's, plus the l2 terms
//   product round    H(x) v                       <- sum_i H_i(x) v, plus l2 v
//
// one round per trial point and one per CG step. No consensus: the iterate lives on the
// master alone, and every request names what it needs, so a replacement worker (given the
// point it lacks) answers as the one it replaces would have.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "nimbus/executor/executor.h"
#include "nimbus/solve/master.h"
#include "nimbus/local/newton_cg.h"
#include "nimbus/local/smooth_function.h"
#include "nimbus/problem/problem.h"

namespace nimbus {

struct NewtonOptions {
  // Stop when ||v(x)|| <= gradient_tolerance * ||v(0)||, v the minimum-norm subgradient of F
  // (the gradient for a smooth problem; liblinear's test without its class-balance factor).
  double gradient_tolerance = kNewtonGradientTolerance;
  int max_iterations = 1000;      // Newton steps
  int max_cg_iterations = 250;    // per Newton step
  double cg_forcing = 0.1;        // CG stops at ||r|| <= cg_forcing ||grad||
  // Stop once F(x) <= this; the gradient test is then off (the run ends at the target, at the
  // iteration cap, or where no step decreases F any more).
  std::optional<double> target_objective;
  double round_timeout_seconds = 3600.0;
  double start_timeout_seconds = 600.0;
  // Hessian-vector products travel as float32 (lean messages: the direction out, the product
  // back, each entry within a relative 2^-24): they only shape the step, which an exact
  // evaluation then accepts or refuses, and the stop test is on exact gradients, so the
  // answer meets the same test. Evaluations stay doubles.
  bool lean_products = false;

  Status Validate() const;
};

class NewtonMaster final : public Master {
 public:
  NewtonMaster(const ProblemSpec& spec, const NewtonOptions& options, Executor* executor)
      : spec_(spec), options_(options), executor_(executor) {}

  Result<Solution> Solve() override;

 private:
  ProblemSpec spec_;
  NewtonOptions options_;
  Executor* executor_;
};

}  // namespace nimbus
