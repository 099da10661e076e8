// Options of the ADMM master, with defaults and a Validate() that names the bad field.
#pragma once

#include <optional>

#include "nimbus/choices.h"
#include "nimbus/core/status.h"

namespace nimbus {

struct AdmmOptions {
  // Penalty rho. 0 means: start from the data's own curvature scale, rho_0 = rho_scale times
  // InitialRho() (coordinator.h), which scales the mean diagonal of the loss term's Hessian
  // at x = 0 by the number of workers.
  double rho = 0.0;
  double rho_scale = 1.0;
  // Residual balancing (as OSQP): rho <- rho * sqrt((r / max(||x||, ||z||)) / (s / ||y||)),
  // applied only when it moves rho by more than rho_adapt_threshold, never by more than
  // rho_max_step at once, and kept within [rho_min, rho_max].
  bool adaptive_rho = true;
  double rho_adapt_threshold = 5.0;
  double rho_max_step = 100.0;
  double rho_min = 1e-10;
  double rho_max = 1e10;
  // Over-relaxation alpha in [1, 1.8] (1 = none).
  double relaxation = 1.6;
  // Boyd's stop test: r <= sqrt(K n) eps_abs + eps_rel max(||x||, ||z||) and
  // s <= sqrt(K n) eps_abs + eps_rel ||y||.
  double eps_abs = 1e-6;
  double eps_rel = 1e-3;
  int max_iterations = 1000;
  // Stop as soon as F(z) <= this (benchmarks: time to a given accuracy).
  std::optional<double> target_objective;
  // Inexact x-updates: the gradient tolerance of round k is
  //   inner_factor * min(rho r, s) / sqrt(K) from the last residuals,
  // and in the first two rounds, before residuals exist, inner_first_relative times the
  // starting gradient norm.
  double inner_factor = 0.3;
  double inner_first_relative = 0.3;
  // Partial barrier: go on once this many workers replied (0 or K: all), reusing the others'
  // newest replies if none is older than max_staleness rounds. rho stays fixed while rounds
  // are partial (a stale w_i is scaled for the rho it was computed with).
  int barrier = 0;
  int max_staleness = 2;
  // Lean messages: z and the w_i travel as float32 (half the bytes; each entry within a
  // relative 2^-24) until the stop test first passes; rounds are then exact again until it
  // passes on a round whose x-update saw the exact z, so the answer meets the same test.
  // Runtimes without a wire pass doubles regardless.
  MessagePrecision message_precision = MessagePrecision::kFloat64;
  // Deadline of one round (a worker that misses it has failed).
  double round_timeout_seconds = 3600.0;
  // Deadline for all workers to load their shards.
  double start_timeout_seconds = 600.0;

  Status Validate() const;
};

}  // namespace nimbus
