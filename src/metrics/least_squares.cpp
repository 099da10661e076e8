#include "nimbus/metrics/least_squares.h"

#include <cmath>
#include <utility>

namespace nimbus {

std::vector<double> NonNegativeLeastSquares(const std::vector<std::vector<double>>& rows, const std::vector<double>& y) {
  const std::size_t n = rows.empty() ? 0 : rows[0].size();
  std::vector<double> best(n, 0.0);
  double best_residual = 0;
  for (std::size_t i = 0; i < y.size(); ++i) best_residual += y[i] * y[i];
  for (unsigned mask = 1; mask < (1u << n); ++mask) {
    std::vector<std::size_t> free;
    for (std::size_t j = 0; j < n; ++j) {
      if (mask & (1u << j)) free.push_back(j);
    }
    const std::size_t m = free.size();
    // Normal equations (A^T A) x = A^T y over the free unknowns, by Gaussian elimination.
    std::vector<std::vector<double>> system(m, std::vector<double>(m + 1, 0.0));
    for (std::size_t r = 0; r < rows.size(); ++r) {
      for (std::size_t a = 0; a < m; ++a) {
        for (std::size_t b = 0; b < m; ++b) system[a][b] += rows[r][free[a]] * rows[r][free[b]];
        system[a][m] += rows[r][free[a]] * y[r];
      }
    }
    bool singular = false;
    for (std::size_t c = 0; c < m && !singular; ++c) {
      std::size_t pivot = c;
      for (std::size_t r = c + 1; r < m; ++r) {
        if (std::abs(system[r][c]) > std::abs(system[pivot][c])) pivot = r;
      }
      std::swap(system[c], system[pivot]);
      if (std::abs(system[c][c]) < 1e-300) {
        singular = true;
        break;
      }
      for (std::size_t r = 0; r < m; ++r) {
        if (r == c) continue;
        const double factor = system[r][c] / system[c][c];
        for (std::size_t k = c; k <= m; ++k) system[r][k] -= factor * system[c][k];
      }
    }
    if (singular) continue;
    std::vector<double> x(n, 0.0);
    bool feasible = true;
    for (std::size_t a = 0; a < m; ++a) {
      x[free[a]] = system[a][m] / system[a][a];
      feasible = feasible && x[free[a]] >= 0 && std::isfinite(x[free[a]]);
    }
    if (!feasible) continue;
    double residual = 0;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      double fitted = 0;
      for (std::size_t j = 0; j < n; ++j) fitted += rows[r][j] * x[j];
      residual += (fitted - y[r]) * (fitted - y[r]);
    }
    if (residual < best_residual) {
      best_residual = residual;
      best = x;
    }
  }
  return best;
}

}  // namespace nimbus
