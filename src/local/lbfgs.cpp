#include "nimbus/local/lbfgs.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <vector>

#include "nimbus/core/vector_ops.h"

namespace nimbus {

Status LbfgsOptions::Validate() const {
  if (!(gradient_tolerance >= 0)) return InvalidArgument("gradient_tolerance: must be >= 0");
  if (!(relative_tolerance >= 0 && relative_tolerance < 1)) return InvalidArgument("relative_tolerance: must be in [0, 1)");
  if (max_iterations < 0) return InvalidArgument("max_iterations: must be >= 0");
  if (memory < 1) return InvalidArgument("memory: must be >= 1");
  if (max_line_search_steps < 1) return InvalidArgument("max_line_search_steps: must be >= 1");
  if (!(armijo > 0 && armijo < 0.5)) return InvalidArgument("armijo: must be in (0, 0.5)");
  return Status::Ok();
}

LocalSolveStats MinimizeLbfgs(SmoothFunction& f, std::span<double> x, const LbfgsOptions& options) {
  const std::size_t n = f.dimension();
  LocalSolveStats stats;
  struct Pair {
    std::vector<double> s, y;
    double rho;  // 1 / (y.s)
  };
  std::deque<Pair> history;
  std::vector<double> g(n), direction(n), x_next(n), g_next(n);
  std::vector<double> alphas(static_cast<std::size_t>(options.memory));

  double value = f.Value(x);
  ++stats.evaluations;
  f.Gradient(x, g);
  double gradient_norm = Norm(g);
  stats.initial_gradient_norm = gradient_norm;
  const double tolerance = std::max(options.gradient_tolerance, options.relative_tolerance * gradient_norm);

  while (gradient_norm > tolerance && stats.iterations < options.max_iterations) {
    // Two-loop recursion: direction = -H g, with H0 = (s.y / y.y) I from the newest pair.
    for (std::size_t j = 0; j < n; ++j) direction[j] = -g[j];
    for (std::size_t i = history.size(); i-- > 0;) {
      alphas[i] = history[i].rho * Dot(history[i].s, direction);
      Axpy(-alphas[i], history[i].y, direction);
    }
    const double gamma =
        history.empty() ? 1.0 / gradient_norm : Dot(history.back().s, history.back().y) / SquaredNorm(history.back().y);
    Scale(gamma, direction);
    for (std::size_t i = 0; i < history.size(); ++i) {
      const double beta = history[i].rho * Dot(history[i].y, direction);
      Axpy(alphas[i] - beta, history[i].s, direction);
    }

    double slope = Dot(g, direction);
    if (!(slope < 0)) {  // not a descent direction (rounding): restart from steepest descent
      history.clear();
      for (std::size_t j = 0; j < n; ++j) direction[j] = -g[j] / gradient_norm;
      slope = Dot(g, direction);
    }
    double step = 1.0;
    double next_value = 0;
    bool accepted = false;
    for (int k = 0; k < options.max_line_search_steps; ++k) {
      for (std::size_t j = 0; j < n; ++j) x_next[j] = x[j] + step * direction[j];
      next_value = f.Value(x_next);
      ++stats.evaluations;
      if (next_value <= value + options.armijo * step * slope) {
        accepted = true;
        break;
      }
      // Minimizer of the quadratic through value, slope and next_value, kept in [0.1, 0.5] step.
      const double quadratic = -slope * step * step / (2.0 * (next_value - value - slope * step));
      step = std::clamp(quadratic, 0.1 * step, 0.5 * step);
    }
    ++stats.iterations;
    if (!accepted) break;
    f.Gradient(x_next, g_next);
    Pair pair{std::vector<double>(n), std::vector<double>(n), 0.0};
    for (std::size_t j = 0; j < n; ++j) {
      pair.s[j] = x_next[j] - x[j];
      pair.y[j] = g_next[j] - g[j];
    }
    const double sy = Dot(pair.s, pair.y);
    if (sy > 1e-12 * Norm(pair.s) * Norm(pair.y)) {
      pair.rho = 1.0 / sy;
      if (history.size() == static_cast<std::size_t>(options.memory)) history.pop_front();
      history.push_back(std::move(pair));
    }
    CopyInto(x_next, x);
    CopyInto(g_next, g);
    value = next_value;
    gradient_norm = Norm(g);
  }
  stats.final_gradient_norm = gradient_norm;
  stats.converged = gradient_norm <= tolerance;
  return stats;
}

}  // namespace nimbus
