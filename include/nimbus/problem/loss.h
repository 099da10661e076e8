// Margin losses loss(y, m) with m = a . x (+ b). Each has a value, a first and a second
// derivative in m; the solver only ever needs these per row.
//
//   logistic       log(1 + exp(-y m))          y in {-1, +1}
//   squared        (m - y)^2 / 2               y real (lasso, ridge)
//   squared hinge  max(0, 1 - y m)^2           y in {-1, +1} (L2-loss SVM; its second
//                                              derivative is the generalized one, 0 or 2)
#pragma once

#include <cmath>
#include <span>
#include <string>

#include "nimbus/core/status.h"

namespace nimbus {

enum class Loss { kLogistic, kSquared, kSquaredHinge };

const char* LossName(Loss loss);  // "logistic", "squared", "squared_hinge"
Result<Loss> ParseLoss(const std::string& name);
inline bool IsClassification(Loss loss) { return loss != Loss::kSquared; }

// log(1 + exp(-t)) without overflow for large |t|.
inline double LogOnePlusExpMinus(double t) {
  return t > 0 ? std::log1p(std::exp(-t)) : -t + std::log1p(std::exp(t));
}

inline double LossValue(Loss loss, double y, double m) {
  switch (loss) {
    case Loss::kLogistic: return LogOnePlusExpMinus(y * m);
    case Loss::kSquared: return 0.5 * (m - y) * (m - y);
    case Loss::kSquaredHinge: {
      const double slack = 1.0 - y * m;
      return slack > 0 ? slack * slack : 0.0;
    }
  }
  return 0;
}

// Sum over rows of loss(y_r, m_r).
double SumLoss(Loss loss, std::span<const double> labels, std::span<const double> margins);

// Sum over rows of loss(y_r, m_r); first[r] = dloss/dm, second[r] = d2loss/dm2, each times `scale`.
double LossDerivatives(Loss loss, std::span<const double> labels, std::span<const double> margins, double scale,
                       std::span<double> first, std::span<double> second);

// The second derivative at m = 0, where every solve starts: the curvature scale of the data.
double CurvatureAtZero(Loss loss);

}  // namespace nimbus
