#include "nimbus/executor/summary.h"

#include <cstdio>

#include "nimbus/core/format.h"
#include "nimbus/core/json_fields.h"
#include "nimbus/executor/trace_schema.h"

namespace nimbus {
const char* TerminationName(Termination termination) { return NameOf(termination).data(); }

std::string Summary::RelaysText() const {
  return relays == 0 ? "" : Format(" through %d relays", relays);
}

std::string Summary::BriefReport() const {
  const std::string resumed =
      resumed_at_round >= 0 ? Format(", resumed at round %lld", static_cast<long long>(resumed_at_round)) : "";
  const char* steps = algorithm == Algorithm::kNewton ? "Newton steps" : "iterations";
  const std::string residuals = TestsSubgradient(algorithm)
                                    ? Format("%s (%d rounds): objective %.10g, gradient norm %.3g", steps, rounds,
                                             objective, gradient_norm)
                                    : Format("iterations: objective %.10g, primal residual %.3g, dual residual %.3g",
                                             objective, primal_residual, dual_residual);
  return Format("nimbus: %s after %d %s, "
                "%lld nonzeros, %.3f s (load and setup %.3f s) on %d %s workers%s",
                TerminationName(termination), iterations, residuals.c_str(),
                static_cast<long long>(nnz), load_seconds + setup_seconds + solve_seconds, load_seconds + setup_seconds,
                workers, runtime.c_str(), (RelaysText() + resumed).c_str());
}

std::string Summary::FullReport() const {
  std::string out;
  out += "nimbus solver summary\n";
  out += Format("  problem          %lld rows, %lld features, %lld nonzeros\n", static_cast<long long>(rows),
                static_cast<long long>(cols), static_cast<long long>(data_nnz));
  if (solved_cols != cols) {
    out += Format("  features used    %lld (solved over these only)\n", static_cast<long long>(solved_cols));
  }
  out += Format("  runtime          %s, %d workers%s\n", runtime.c_str(), workers, RelaysText().c_str());
  out += Format("  termination      %s: %s\n", TerminationName(termination), message.c_str());
  const std::string why = algorithm_reason.empty() ? "" : " (" + algorithm_reason + ")";
  out += Format("  algorithm        %s%s\n", NameOf(algorithm).data(), why.c_str());
  out += Format("  iterations       %d (%d rounds)\n", iterations, rounds);
  out += Format("  objective        %.12g\n", objective);
  if (TestsSubgradient(algorithm)) {
    out += Format("  gradient norm    %.4g (tolerance %.4g)\n", gradient_norm, gradient_tolerance);
  } else {
    out += Format("  primal residual  %.4g (tolerance %.4g)\n", primal_residual, eps_primal);
    out += Format("  dual residual    %.4g (tolerance %.4g)\n", dual_residual, eps_dual);
    out += Format("  rho              %.4g (initial %.4g, %d updates)\n", rho, initial_rho, rho_updates);
  }
  out += Format("  model nonzeros   %lld of %lld\n", static_cast<long long>(nnz), static_cast<long long>(cols));
  out += Format("  local work       %lld data passes, %lld Newton/quasi-Newton steps, %lld CG steps\n",
                static_cast<long long>(data_passes), static_cast<long long>(local_iterations),
                static_cast<long long>(cg_iterations));
  out += Format("  time             load %.3f s, setup %.3f s, solve %.3f s (master %.3f s, waiting %.3f s)\n",
                load_seconds, setup_seconds, solve_seconds, master_seconds, wait_seconds);
  out += Format("  worker compute   %.3f s summed over workers\n", worker_compute_seconds);
  if (worker_restarts > 0 || messages_dropped > 0 || bytes_sent > 0) {
    out += Format("  workers          %lld restarts, %lld messages dropped, %.1f MB sent, %.1f MB received\n",
                  static_cast<long long>(worker_restarts), static_cast<long long>(messages_dropped),
                  static_cast<double>(bytes_sent) / 1e6, static_cast<double>(bytes_received) / 1e6);
  }
  if (reconnects > 0) {
    out += Format("  links            %lld reconnects, %lld rounds sent again\n", static_cast<long long>(reconnects),
                  static_cast<long long>(rounds_resent));
  }
  if (security == "curve") {
    out += Format("  security         CurveZMQ with this run's keys, %lld connections refused\n",
                  static_cast<long long>(clients_refused));
  } else if (security == "plaintext") {
    out += "  security         none (--insecure, loopback only)\n";
  }
  if (resumed_at_round >= 0) {
    out += Format("  resumed          from a checkpoint, at round %lld\n", static_cast<long long>(resumed_at_round));
  }
  if (checkpoints > 0 || checkpoint_failures > 0) {
    out += Format("  checkpoints      %d written (%.3f s), %d failed\n", checkpoints, checkpoint_seconds,
                  checkpoint_failures);
  }
  if (cost_dollars > 0) {
    out += Format("  cost             $%.5f at Lambda prices (%.1f GB-seconds)\n", cost_dollars, cost_gb_seconds);
  }
  if (stale_replies > 0) out += Format("  partial barrier  %lld stale replies reused\n", static_cast<long long>(stale_replies));
  if (lean_rounds > 0) {
    out += Format("  lean messages    %d rounds with z and w as float32 (entries within 2^-24 relative); the\n"
                  "                   rounds the stop test was made on were exact\n", lean_rounds);
  }
  return out;
}

std::string Summary::ToJson() const { return JsonText(FieldsToJson(*this)); }

}  // namespace nimbus
