#include "nimbus/local/newton_cg.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "nimbus/core/vector_ops.h"

namespace nimbus {
namespace {

// Trust-region update constants of TRON (Lin & More 1999).
constexpr double kEta0 = 1e-4, kEta1 = 0.25, kEta2 = 0.75;
constexpr double kSigma1 = 0.25, kSigma2 = 0.5, kSigma3 = 4.0;
// Below this fraction of |f|, a decrease is measured from gradients instead of values.
constexpr double kValueResolution = 1e-10;

double MNorm(std::span<const double> s, std::span<const double> m) {
  double sum = 0;
  for (std::size_t j = 0; j < s.size(); ++j) sum += m[j] * s[j] * s[j];
  return std::sqrt(sum);
}

using CgWork = NewtonCgWorkspace;

// The step to the boundary of ||s||_M <= delta from s along p: s += tau p, r -= tau hp,
// with tau the positive root of ||s + tau p||_M = delta.
void StepToBoundary(std::span<const double> m, double delta, std::span<const double> p, std::span<const double> hp,
                    std::span<double> s, std::span<double> r) {
  double ss = 0, sp = 0, pp = 0;
  for (std::size_t j = 0; j < s.size(); ++j) {
    ss += m[j] * s[j] * s[j];
    sp += m[j] * s[j] * p[j];
    pp += m[j] * p[j] * p[j];
  }
  const double radius = delta * delta - ss;
  const double root = std::sqrt(std::max(0.0, sp * sp + pp * radius));
  // radius / (sp + root) when sp >= 0 avoids cancellation; else (root - sp) / pp.
  const double tau = sp >= 0 ? radius / (sp + root) : (root - sp) / pp;
  Axpy(tau, p, s);
  Axpy(-tau, hp, r);
}

// Steihaug's truncated preconditioned CG for min g.s + s.H.s/2 with ||s||_M <= delta.
// On return s is the step and work.r = -g - H s. Returns (iterations, reached boundary).
std::pair<int, bool> TruncatedCg(SmoothFunction& f, std::span<const double> g, std::span<const double> m,
                                 double delta, double tolerance, int max_iterations, std::span<double> s,
                                 CgWork& work) {
  const std::size_t n = g.size();
  Fill(s, 0.0);
  for (std::size_t j = 0; j < n; ++j) {
    work.r[j] = -g[j];
    work.z[j] = work.r[j] / m[j];
    work.d[j] = work.z[j];
  }
  double rz = Dot(work.r, work.z);
  int iterations = 0;
  while (iterations < max_iterations) {
    if (Norm(work.r) <= tolerance) break;
    ++iterations;
    f.HessianVector(work.d, work.hd);
    const double dhd = Dot(work.d, work.hd);
    const double alpha = rz / dhd;
    // Would the full step leave the region? Then stop on its boundary: the positive root of
    // ||s + tau d||_M = delta.
    double ss = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const double sj = s[j] + alpha * work.d[j];
      ss += m[j] * sj * sj;
    }
    if (!(dhd > 0) || std::sqrt(ss) > delta) {
      StepToBoundary(m, delta, work.d, work.hd, s, work.r);
      return {iterations, true};
    }
    Axpy(alpha, work.d, s);
    Axpy(-alpha, work.hd, work.r);
    for (std::size_t j = 0; j < n; ++j) work.z[j] = work.r[j] / m[j];
    const double rz_next = Dot(work.r, work.z);
    const double beta = rz_next / rz;
    rz = rz_next;
    for (std::size_t j = 0; j < n; ++j) work.d[j] = work.z[j] + beta * work.d[j];
  }
  return {iterations, false};
}

// TruncatedCg on a block-diagonal H, one recurrence per block b in the same products:
//   alpha_b = (r_b . z_b) / (d_b . H d_b),   beta_b = (r_b+ . z_b+) / (r_b . z_b),
// and block b stops (its d_b zeroed) once its residual is small enough (below). The step
// leaving the region is cut at the boundary as a whole.
std::pair<int, bool> TruncatedBlockCg(SmoothFunction& f, std::span<const double> g, std::span<const double> m,
                                      double delta, double forcing, const NewtonCgOptions& options, std::span<double> s,
                                      CgWork& work) {
  const std::size_t n = g.size();
  const auto blocks = static_cast<std::size_t>(options.blocks);
  const std::span<const uint32_t> block = options.block_of;
  std::vector<double> rz(blocks, 0.0), rz_next(blocks), dhd(blocks), alpha(blocks), tolerance(blocks, 0.0),
      residual(blocks);
  std::vector<bool> active(blocks, true);
  Fill(s, 0.0);
  for (std::size_t j = 0; j < n; ++j) {
    work.r[j] = -g[j];
    work.z[j] = work.r[j] / m[j];
    work.d[j] = work.z[j];
    rz[block[j]] += work.r[j] * work.z[j];
    tolerance[block[j]] += g[j] * g[j];
  }
  // Block b stops at forcing max(||g_b||, ||g|| / sqrt(blocks)): its own share, except that a
  // block far below the others' (a class nearly solved) waits for them, untouched this step.
  double g_squared = 0;
  for (const double t : tolerance) g_squared += t;
  const double floor = std::sqrt(g_squared / static_cast<double>(blocks));
  for (double& t : tolerance) t = forcing * std::max(std::sqrt(t), floor);
  int iterations = 0;
  while (iterations < options.max_cg_iterations) {
    std::fill(residual.begin(), residual.end(), 0.0);
    for (std::size_t j = 0; j < n; ++j) residual[block[j]] += work.r[j] * work.r[j];
    bool any = false;
    for (std::size_t b = 0; b < blocks; ++b) any |= (active[b] = active[b] && std::sqrt(residual[b]) > tolerance[b]);
    if (!any) break;
    for (std::size_t j = 0; j < n; ++j) work.d[j] = active[block[j]] ? work.d[j] : 0.0;
    ++iterations;
    f.HessianVector(work.d, work.hd);
    std::fill(dhd.begin(), dhd.end(), 0.0);
    for (std::size_t j = 0; j < n; ++j) dhd[block[j]] += work.d[j] * work.hd[j];
    bool curved = true;
    for (std::size_t b = 0; b < blocks; ++b) {
      alpha[b] = !active[b] ? 0.0 : dhd[b] > 0 ? rz[b] / dhd[b] : 1.0;
      curved = curved && (!active[b] || dhd[b] > 0);
    }
    // The full step alpha_b d_b in every block, p, and its product H p.
    double ss = 0;
    for (std::size_t j = 0; j < n; ++j) {
      work.d[j] *= alpha[block[j]];
      work.hd[j] *= alpha[block[j]];
      ss += m[j] * (s[j] + work.d[j]) * (s[j] + work.d[j]);
    }
    if (!curved || std::sqrt(ss) > delta) {
      StepToBoundary(m, delta, work.d, work.hd, s, work.r);
      return {iterations, true};
    }
    Axpy(1.0, work.d, s);
    Axpy(-1.0, work.hd, work.r);
    std::fill(rz_next.begin(), rz_next.end(), 0.0);
    for (std::size_t j = 0; j < n; ++j) {
      work.z[j] = work.r[j] / m[j];
      rz_next[block[j]] += work.r[j] * work.z[j];
    }
    // d held alpha_b d_b: the next direction is z + (beta_b / alpha_b) (alpha_b d_b).
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t b = block[j];
      work.d[j] = active[b] ? work.z[j] + rz_next[b] / rz[b] / alpha[b] * work.d[j] : 0.0;
    }
    std::swap(rz, rz_next);
  }
  return {iterations, false};
}

}  // namespace

Status NewtonCgOptions::Validate() const {
  if (!(gradient_tolerance >= 0)) return InvalidArgument("gradient_tolerance: must be >= 0");
  if (!(relative_tolerance >= 0 && relative_tolerance < 1)) return InvalidArgument("relative_tolerance: must be in [0, 1)");
  if (max_iterations < 0) return InvalidArgument("max_iterations: must be >= 0");
  if (max_cg_iterations < 1) return InvalidArgument("max_cg_iterations: must be >= 1");
  if (!(cg_forcing > 0 && cg_forcing < 1)) return InvalidArgument("cg_forcing: must be in (0, 1)");
  if (!(initial_radius >= 0)) return InvalidArgument("initial_radius: must be >= 0");
  if (blocks < 1) return InvalidArgument("blocks: must be >= 1");
  return Status::Ok();
}

void NewtonCgWorkspace::Resize(std::size_t n) {
  for (std::vector<double>* v : {&g, &g_trial, &m, &s, &x_trial, &r, &z, &d, &hd}) v->resize(n);
}

LocalSolveStats MinimizeNewtonCg(SmoothFunction& f, std::span<double> x, const NewtonCgOptions& options,
                                 NewtonCgWorkspace* workspace) {
  const std::size_t n = f.dimension();
  LocalSolveStats stats;
  NewtonCgWorkspace local;
  NewtonCgWorkspace& work = workspace != nullptr ? *workspace : local;
  work.Resize(n);
  std::vector<double>& g = work.g;
  std::vector<double>& g_trial = work.g_trial;
  std::vector<double>& m = work.m;
  std::vector<double>& s = work.s;
  std::vector<double>& x_trial = work.x_trial;

  double value = f.Value(x);
  ++stats.evaluations;
  f.Gradient(x, g);
  f.HessianDiagonal(m);
  double gradient_norm = Norm(g);
  stats.initial_gradient_norm = gradient_norm;
  const double tolerance = std::max(options.gradient_tolerance, options.relative_tolerance * gradient_norm);
  // The first region: the preconditioned gradient's length, as TRON starts.
  double delta = 0;
  for (std::size_t j = 0; j < n; ++j) delta += g[j] * g[j] / m[j];
  delta = options.initial_radius > 0 ? options.initial_radius : std::sqrt(delta);

  while (gradient_norm > tolerance && stats.iterations < options.max_iterations) {
    const double cg_tolerance = options.cg_forcing * gradient_norm;
    const auto [cg_iterations, on_boundary] =
        options.blocks > 1 ? TruncatedBlockCg(f, g, m, delta, options.cg_forcing, options, s, work)
                           : TruncatedCg(f, g, m, delta, cg_tolerance, options.max_cg_iterations, s, work);
    stats.cg_iterations += cg_iterations;

    for (std::size_t j = 0; j < n; ++j) x_trial[j] = x[j] + s[j];
    const double trial_value = f.Value(x_trial);
    ++stats.evaluations;
    const double gs = Dot(g, s);
    // With r = -g - H s: predicted decrease -(g.s + s.H.s/2) = -(g.s - s.r)/2.
    const double predicted = -0.5 * (gs - Dot(s, work.r));
    if (!(predicted > 0)) break;  // CG found no descent: nothing is left to gain
    double actual = value - trial_value;
    // Close to the optimum the decrease drops below the rounding error of f itself, and a
    // comparison of values would reject good steps. There, measure it from the gradients by
    // the trapezoid rule, -(g + g_trial).s / 2, which is exact on a quadratic.
    bool trial_gradient_known = false;
    if (predicted <= kValueResolution * std::abs(value)) {
      f.Gradient(x_trial, g_trial);
      actual = -0.5 * (gs + Dot(g_trial, s));
      trial_gradient_known = true;
    }
    const double step_norm = MNorm(s, m);
    if (stats.iterations == 0 && options.initial_radius == 0) delta = std::min(delta, step_norm);

    // Step length that minimizes the quadratic through f, f'(0) = g.s and f(1) = f - actual.
    const double curvature = -actual - gs;
    const double alpha = curvature <= 0 ? kSigma3 : std::max(kSigma1, -0.5 * gs / curvature);
    if (actual < kEta0 * predicted) {
      delta = std::min(alpha * step_norm, kSigma2 * delta);
    } else if (actual < kEta1 * predicted) {
      delta = std::max(kSigma1 * delta, std::min(alpha * step_norm, kSigma2 * delta));
    } else if (actual < kEta2 * predicted) {
      delta = std::max(kSigma1 * delta, std::min(alpha * step_norm, kSigma3 * delta));
    } else if (on_boundary) {
      delta = kSigma3 * delta;
    } else {
      delta = std::max(delta, std::min(alpha * step_norm, kSigma3 * delta));
    }

    ++stats.iterations;
    if (actual > kEta0 * predicted) {
      CopyInto(x_trial, x);
      value = trial_value;
      if (trial_gradient_known) {
        std::swap(g, g_trial);
      } else {
        f.Gradient(x, g);
      }
      f.HessianDiagonal(m);
      gradient_norm = Norm(g);
    } else if (trial_gradient_known) {
      f.Gradient(x, g);  // the Hessian must again be the one at x
    }
    if (step_norm == 0) break;
    const NewtonCgOptions::Progress progress{stats.iterations, value, gradient_norm, delta,
                                             stats.initial_gradient_norm};
    if (options.after_iteration && !options.after_iteration(progress)) break;
  }
  stats.final_gradient_norm = gradient_norm;
  stats.converged = gradient_norm <= tolerance;
  return stats;
}

}  // namespace nimbus
