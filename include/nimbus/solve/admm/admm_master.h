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
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nimbus/executor/executor.h"
#include "nimbus/solve/master.h"
#include "nimbus/solve/admm/options.h"
#include "nimbus/executor/summary.h"
#include "nimbus/core/trace.h"
#include "nimbus/problem/problem.h"

namespace nimbus {

class AdmmMaster final : public Master {
 public:
  AdmmMaster(const ProblemSpec& spec, const AdmmOptions& options, Executor* executor)
      : spec_(spec), options_(options), executor_(executor) {}

  Result<Solution> Solve() override;

 private:
  ProblemSpec spec_;
  AdmmOptions options_;
  Executor* executor_;
};

// rho_0 from the mean diagonal of the loss term's Hessian at x = 0 (the workers' reports)
// and the number of workers.
double InitialRho(const ProblemSpec& spec, std::span<const WorkerReady> ready);

}  // namespace nimbus
