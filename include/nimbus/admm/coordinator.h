// The ADMM master: global consensus with the regularizer on the master (Boyd et al. 2011,
// sections 3.3, 3.4, 7.1, 8.2). One named step per line of the math:
//
//   round k on the workers   w_i = alpha x_i + (1 - alpha) z^k + u_i     (Executor::RunRound)
//   ZUpdate                  z^{k+1} = prox_{g/(K rho)}(mean_i w_i)
//   Residuals                r = sqrt(sum ||x_i - z||^2), s = rho sqrt(K) ||z^{k+1} - z^k||
//   Converged                Boyd's eps_abs / eps_rel test
//   AdaptRho                 residual balancing; workers rescale u by rho_old / rho_new
//
// The scalars of the stop test for iteration k arrive with the replies of round k, so the
// test costs no extra message; the model returned is the z the test was made on.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "nimbus/admm/executor.h"
#include "nimbus/admm/options.h"
#include "nimbus/admm/summary.h"
#include "nimbus/metrics/trace.h"
#include "nimbus/problem/problem.h"

namespace nimbus {

// What the iteration callback sees after each tested iteration.
struct IterationInfo {
  int iteration = 0;
  double elapsed_seconds = 0;  // since the first round
  double objective = 0;        // F(z)
  double primal_residual = 0;
  double dual_residual = 0;
  double eps_primal = 0;
  double eps_dual = 0;
  double rho = 0;              // the rho of the round that produced the tested x_i
};
// Return false to stop the solve (Termination::kUserStopped).
using IterationCallback = std::function<bool(const IterationInfo&)>;

struct Solution {
  std::vector<double> model;  // z: d weights, then the intercept if the problem has one
  Summary summary;
};

class Coordinator {
 public:
  Coordinator(const ProblemSpec& spec, const AdmmOptions& options, Executor* executor)
      : spec_(spec), options_(options), executor_(executor) {}

  void SetIterationCallback(IterationCallback callback) { callback_ = std::move(callback); }
  void SetTraceSink(TraceSink* sink) { trace_ = sink; }

  // Starts the workers, runs rounds until a stop condition, stops the workers. An error
  // Result only for bad options or a failed start; a worker failing mid-run is reported in
  // the summary (kWorkerFailed) with the newest model whose objective is known.
  Result<Solution> Solve();

 private:
  ProblemSpec spec_;
  AdmmOptions options_;
  Executor* executor_;
  IterationCallback callback_;
  TraceSink* trace_ = nullptr;
};

// rho_0 from the mean diagonal of the loss term's Hessian at x = 0 (the workers' reports)
// and the number of workers.
double InitialRho(const ProblemSpec& spec, std::span<const WorkerReady> ready);

}  // namespace nimbus
