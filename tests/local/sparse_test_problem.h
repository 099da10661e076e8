// Test-only helpers for the problem, local and worker tests: small sparse problems built by
// hand as CSR arrays, and dense reference computations (losses, gradients, Hessians, a
// Gaussian-elimination solver and a dense damped Newton method) that share no code with the
// library, so the library's answers can be checked against them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "nimbus/core/csr.h"
#include "nimbus/local/smooth_function.h"
#include "nimbus/problem/loss.h"

namespace nimbus::testing {

inline const Loss kAllLosses[] = {Loss::kLogistic, Loss::kSquared, Loss::kSquaredHinge};

// n values uniform in [-scale, scale], reproducible from the seed.
inline std::vector<double> RandomVector(std::size_t n, uint64_t seed, double scale) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-scale, scale);
  std::vector<double> v(n);
  for (double& x : v) x = uniform(rng);
  return v;
}

// A CSR matrix with labels, owning its arrays.
struct SparseProblem {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<int64_t> row_ptr{0};
  std::vector<uint32_t> col_idx;
  std::vector<double> values;
  std::vector<double> labels;

  void AddRow(const std::vector<std::pair<uint32_t, double>>& entries, double label) {
    for (const auto& [j, v] : entries) {
      col_idx.push_back(j);
      values.push_back(v);
    }
    row_ptr.push_back(static_cast<int64_t>(col_idx.size()));
    labels.push_back(label);
    ++rows;
  }

  CsrView View() const {
    CsrView view;
    view.rows = rows;
    view.cols = cols;
    view.row_ptr = row_ptr.data();
    view.col_idx = col_idx.data();
    view.values = values.data();
    return view;
  }

  std::size_t Width(bool intercept) const { return static_cast<std::size_t>(cols) + (intercept ? 1 : 0); }

  // Row-major dense copy; with an intercept, a trailing column of ones.
  std::vector<double> Dense(bool intercept) const {
    const std::size_t width = Width(intercept);
    std::vector<double> dense(static_cast<std::size_t>(rows) * width, 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = row_ptr[static_cast<std::size_t>(r)]; k < row_ptr[static_cast<std::size_t>(r) + 1]; ++k) {
        dense[static_cast<std::size_t>(r) * width + col_idx[static_cast<std::size_t>(k)]] +=
            values[static_cast<std::size_t>(k)];
      }
      if (intercept) dense[static_cast<std::size_t>(r) * width + width - 1] = 1.0;
    }
    return dense;
  }
};

// rows x cols with `nnz_per_row` distinct random columns per row, values in [-1, 1] (times
// `value_scale`), labels +-1 for classification (drawn from a planted model with noise) or
// real targets for the squared loss.
inline SparseProblem MakeRandomProblem(int64_t rows, int64_t cols, int nnz_per_row, uint64_t seed, Loss loss,
                                       double value_scale = 1.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> planted(static_cast<std::size_t>(cols));
  for (double& w : planted) w = 2.0 * normal(rng);
  SparseProblem p;
  p.cols = cols;
  std::vector<uint32_t> all(static_cast<std::size_t>(cols));
  std::iota(all.begin(), all.end(), 0u);
  for (int64_t r = 0; r < rows; ++r) {
    std::shuffle(all.begin(), all.end(), rng);
    std::vector<uint32_t> chosen(all.begin(), all.begin() + std::min<int64_t>(nnz_per_row, cols));
    std::sort(chosen.begin(), chosen.end());
    std::vector<std::pair<uint32_t, double>> entries;
    double margin = 0;
    for (uint32_t j : chosen) {
      double v = uniform(rng);
      if (std::abs(v) < 0.05) v = 0.05;
      v *= value_scale;
      entries.emplace_back(j, v);
      margin += v * planted[j];
    }
    double label;
    if (loss == Loss::kSquared) {
      label = margin + 0.3 * normal(rng);
    } else {
      label = (margin + normal(rng)) > 0 ? 1.0 : -1.0;
    }
    p.AddRow(entries, label);
  }
  return p;
}

// ---- Reference losses, written from their formulas (moderate margins only). ----

inline double RefLoss(Loss loss, double y, double m) {
  switch (loss.kind()) {
    case LossKind::kLogistic: return std::log(1.0 + std::exp(-y * m));
    case LossKind::kSquared: return 0.5 * (m - y) * (m - y);
    case LossKind::kSquaredHinge: return std::pow(std::max(0.0, 1.0 - y * m), 2);
    case LossKind::kCustom: break;  // tested on their own
  }
  return 0;
}

inline double RefLossFirst(Loss loss, double y, double m) {
  switch (loss.kind()) {
    case LossKind::kLogistic: return -y / (1.0 + std::exp(y * m));
    case LossKind::kSquared: return m - y;
    case LossKind::kSquaredHinge: return -2.0 * y * std::max(0.0, 1.0 - y * m);
    case LossKind::kCustom: break;
  }
  return 0;
}

inline double RefLossSecond(Loss loss, double y, double m) {
  switch (loss.kind()) {
    case LossKind::kLogistic: {
      const double p = 1.0 / (1.0 + std::exp(-y * m));
      return p * (1.0 - p);
    }
    case LossKind::kSquared: return 1.0;
    case LossKind::kSquaredHinge: return 1.0 - y * m > 0 ? 2.0 : 0.0;
    case LossKind::kCustom: break;
  }
  return 0;
}

// ---- Dense reference computations over a SparseProblem. ----

inline std::vector<double> RefMargins(const SparseProblem& p, bool intercept, const std::vector<double>& x) {
  const std::vector<double> a = p.Dense(intercept);
  const std::size_t width = p.Width(intercept);
  std::vector<double> m(static_cast<std::size_t>(p.rows), 0.0);
  for (std::size_t r = 0; r < m.size(); ++r) {
    for (std::size_t j = 0; j < width; ++j) m[r] += a[r * width + j] * x[j];
  }
  return m;
}

// (1/N) sum_r loss(y_r, m_r)
inline double RefDataLoss(const SparseProblem& p, Loss loss, bool intercept, double total_rows,
                          const std::vector<double>& x) {
  const std::vector<double> m = RefMargins(p, intercept, x);
  double sum = 0;
  for (std::size_t r = 0; r < m.size(); ++r) sum += RefLoss(loss, p.labels[r], m[r]);
  return sum / total_rows;
}

// (1/N) A^T loss'(A x)
inline std::vector<double> RefDataGradient(const SparseProblem& p, Loss loss, bool intercept, double total_rows,
                                           const std::vector<double>& x) {
  const std::vector<double> a = p.Dense(intercept);
  const std::size_t width = p.Width(intercept);
  const std::vector<double> m = RefMargins(p, intercept, x);
  std::vector<double> g(width, 0.0);
  for (std::size_t r = 0; r < m.size(); ++r) {
    const double d = RefLossFirst(loss, p.labels[r], m[r]) / total_rows;
    for (std::size_t j = 0; j < width; ++j) g[j] += a[r * width + j] * d;
  }
  return g;
}

// (1/N) A^T diag(loss''(A x)) A, row-major width x width.
inline std::vector<double> RefDataHessian(const SparseProblem& p, Loss loss, bool intercept, double total_rows,
                                          const std::vector<double>& x) {
  const std::vector<double> a = p.Dense(intercept);
  const std::size_t width = p.Width(intercept);
  const std::vector<double> m = RefMargins(p, intercept, x);
  std::vector<double> h(width * width, 0.0);
  for (std::size_t r = 0; r < m.size(); ++r) {
    const double d = RefLossSecond(loss, p.labels[r], m[r]) / total_rows;
    for (std::size_t i = 0; i < width; ++i) {
      for (std::size_t j = 0; j < width; ++j) h[i * width + j] += d * a[r * width + i] * a[r * width + j];
    }
  }
  return h;
}

// Solves M x = b (M row-major n x n) by Gaussian elimination with partial pivoting.
inline std::vector<double> SolveDense(std::vector<double> m, std::vector<double> b) {
  const std::size_t n = b.size();
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t pivot = k;
    for (std::size_t i = k + 1; i < n; ++i) {
      if (std::abs(m[i * n + k]) > std::abs(m[pivot * n + k])) pivot = i;
    }
    if (pivot != k) {
      for (std::size_t j = 0; j < n; ++j) std::swap(m[k * n + j], m[pivot * n + j]);
      std::swap(b[k], b[pivot]);
    }
    for (std::size_t i = k + 1; i < n; ++i) {
      const double factor = m[i * n + k] / m[k * n + k];
      for (std::size_t j = k; j < n; ++j) m[i * n + j] -= factor * m[k * n + j];
      b[i] -= factor * b[k];
    }
  }
  std::vector<double> x(n);
  for (std::size_t i = n; i-- > 0;) {
    double s = b[i];
    for (std::size_t j = i + 1; j < n; ++j) s -= m[i * n + j] * x[j];
    x[i] = s / m[i * n + i];
  }
  return x;
}

// The minimizer of phi(x) = (1/N) sum loss + (rho/2) ||x - v||^2 for the squared loss, from
// its normal equations (A^T A / N + rho I) x = rho v + A^T y / N.
inline std::vector<double> RefSquaredLossMinimizer(const SparseProblem& p, bool intercept, double total_rows,
                                                   double rho, const std::vector<double>& v) {
  const std::vector<double> a = p.Dense(intercept);
  const std::size_t width = p.Width(intercept);
  std::vector<double> m(width * width, 0.0), b(width, 0.0);
  for (std::size_t r = 0; r < static_cast<std::size_t>(p.rows); ++r) {
    for (std::size_t i = 0; i < width; ++i) {
      b[i] += a[r * width + i] * p.labels[r] / total_rows;
      for (std::size_t j = 0; j < width; ++j) m[i * width + j] += a[r * width + i] * a[r * width + j] / total_rows;
    }
  }
  for (std::size_t i = 0; i < width; ++i) {
    m[i * width + i] += rho;
    b[i] += rho * v[i];
  }
  return SolveDense(m, b);
}

inline double RefAugmentedValue(const SparseProblem& p, Loss loss, bool intercept, double total_rows, double rho,
                                const std::vector<double>& v, const std::vector<double>& x) {
  double prox = 0;
  for (std::size_t j = 0; j < x.size(); ++j) prox += (x[j] - v[j]) * (x[j] - v[j]);
  return RefDataLoss(p, loss, intercept, total_rows, x) + 0.5 * rho * prox;
}

inline std::vector<double> RefAugmentedGradient(const SparseProblem& p, Loss loss, bool intercept, double total_rows,
                                                double rho, const std::vector<double>& v,
                                                const std::vector<double>& x) {
  std::vector<double> g = RefDataGradient(p, loss, intercept, total_rows, x);
  for (std::size_t j = 0; j < g.size(); ++j) g[j] += rho * (x[j] - v[j]);
  return g;
}

inline double RefNorm(const std::vector<double>& a) {
  double s = 0;
  for (double v : a) s += v * v;
  return std::sqrt(s);
}

inline double RefMaxAbsDiff(std::span<const double> a, std::span<const double> b) {
  double worst = 0;
  for (std::size_t j = 0; j < a.size(); ++j) worst = std::max(worst, std::abs(a[j] - b[j]));
  return worst;
}

// The minimizer of phi by a dense damped Newton method (backtracking on phi), iterated until
// the gradient is at rounding level: an independent answer for every loss.
inline std::vector<double> RefAugmentedMinimizer(const SparseProblem& p, Loss loss, bool intercept,
                                                 double total_rows, double rho, const std::vector<double>& v) {
  const std::size_t width = p.Width(intercept);
  std::vector<double> x = v;
  for (int iteration = 0; iteration < 200; ++iteration) {
    const std::vector<double> g = RefAugmentedGradient(p, loss, intercept, total_rows, rho, v, x);
    if (RefNorm(g) < 1e-15) break;
    std::vector<double> h = RefDataHessian(p, loss, intercept, total_rows, x);
    for (std::size_t j = 0; j < width; ++j) h[j * width + j] += rho;
    std::vector<double> minus_g(width);
    for (std::size_t j = 0; j < width; ++j) minus_g[j] = -g[j];
    const std::vector<double> step = SolveDense(h, minus_g);
    const double value = RefAugmentedValue(p, loss, intercept, total_rows, rho, v, x);
    double slope = 0;
    for (std::size_t j = 0; j < width; ++j) slope += g[j] * step[j];
    double t = 1.0;
    std::vector<double> next(width);
    for (int k = 0; k < 60; ++k) {
      for (std::size_t j = 0; j < width; ++j) next[j] = x[j] + t * step[j];
      if (RefAugmentedValue(p, loss, intercept, total_rows, rho, v, next) <= value + 1e-4 * t * slope) break;
      t *= 0.5;
    }
    if (next == x) break;
    x = next;
  }
  return x;
}

// f(x) = x.Q.x / 2 - b.x for a dense symmetric positive definite Q: a SmoothFunction that is
// not built on data, whose minimizer solves Q x = b. Counts its calls.
class DenseQuadratic final : public SmoothFunction {
 public:
  DenseQuadratic(std::vector<double> q, std::vector<double> b) : q_(std::move(q)), b_(std::move(b)) {}
  std::size_t dimension() const override { return b_.size(); }
  double Value(std::span<const double> x) override {
    ++values;
    double f = 0;
    const std::size_t n = b_.size();
    for (std::size_t i = 0; i < n; ++i) {
      double qx = 0;
      for (std::size_t j = 0; j < n; ++j) qx += q_[i * n + j] * x[j];
      f += 0.5 * x[i] * qx - b_[i] * x[i];
    }
    return f;
  }
  void Gradient(std::span<const double> x, std::span<double> gradient) override {
    ++gradients;
    const std::size_t n = b_.size();
    for (std::size_t i = 0; i < n; ++i) {
      double qx = 0;
      for (std::size_t j = 0; j < n; ++j) qx += q_[i * n + j] * x[j];
      gradient[i] = qx - b_[i];
    }
  }
  void HessianVector(std::span<const double> v, std::span<double> hv) override {
    const std::size_t n = b_.size();
    for (std::size_t i = 0; i < n; ++i) {
      double s = 0;
      for (std::size_t j = 0; j < n; ++j) s += q_[i * n + j] * v[j];
      hv[i] = s;
    }
  }
  void HessianDiagonal(std::span<double> diagonal) override {
    const std::size_t n = b_.size();
    for (std::size_t i = 0; i < n; ++i) diagonal[i] = q_[i * n + i];
  }
  std::vector<double> Minimizer() const { return SolveDense(q_, b_); }
  const std::vector<double>& q() const { return q_; }
  const std::vector<double>& b() const { return b_; }

  int values = 0;
  int gradients = 0;

 private:
  std::vector<double> q_, b_;
};

// A random SPD matrix B^T B + shift I whose rows and columns are scaled by `scales`
// (so the diagonal spans scales^2): ill-conditioned unless preconditioned.
inline DenseQuadratic MakeScaledQuadratic(std::size_t n, uint64_t seed, const std::vector<double>& scales) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> b_mat(n * n), q(n * n, 0.0), b(n);
  for (double& v : b_mat) v = uniform(rng);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double s = i == j ? 0.5 : 0.0;
      for (std::size_t k = 0; k < n; ++k) s += b_mat[k * n + i] * b_mat[k * n + j];
      q[i * n + j] = s * scales[i] * scales[j];
    }
    b[i] = uniform(rng) * scales[i];
  }
  return DenseQuadratic(std::move(q), std::move(b));
}

// A shard of 60 rows and 15 features of a problem with N = 120 rows (solver tests).
inline constexpr double kTotalRows = 120;
inline SparseProblem ShardProblem(Loss loss, uint64_t seed) { return MakeRandomProblem(60, 15, 4, seed, loss); }

// "logistic +b rho=0.1": names a case in failure messages.
inline std::string Label(Loss loss, bool intercept, double rho) {
  return std::string(LossName(loss)) + (intercept ? " +b" : "") + " rho=" + std::to_string(rho);
}

}  // namespace nimbus::testing
