#include "nimbus/problem/loss.h"

#include <cassert>

namespace nimbus {

const char* LossName(Loss loss) {
  switch (loss) {
    case Loss::kLogistic: return "logistic";
    case Loss::kSquared: return "squared";
    case Loss::kSquaredHinge: return "squared_hinge";
  }
  return "unknown";
}

Result<Loss> ParseLoss(const std::string& name) {
  if (name == "logistic") return Loss::kLogistic;
  if (name == "squared") return Loss::kSquared;
  if (name == "squared_hinge" || name == "squared-hinge") return Loss::kSquaredHinge;
  return InvalidArgument("unknown loss '" + name + "' (choose logistic, squared or squared_hinge)");
}

double SumLoss(Loss loss, std::span<const double> labels, std::span<const double> margins) {
  assert(labels.size() == margins.size());
  double sum = 0;
  const std::size_t n = labels.size();
  switch (loss) {
    case Loss::kLogistic:
      for (std::size_t r = 0; r < n; ++r) sum += LogOnePlusExpMinus(labels[r] * margins[r]);
      break;
    case Loss::kSquared:
      for (std::size_t r = 0; r < n; ++r) sum += 0.5 * (margins[r] - labels[r]) * (margins[r] - labels[r]);
      break;
    case Loss::kSquaredHinge:
      for (std::size_t r = 0; r < n; ++r) {
        const double slack = 1.0 - labels[r] * margins[r];
        if (slack > 0) sum += slack * slack;
      }
      break;
  }
  return sum;
}

double LossDerivatives(Loss loss, std::span<const double> labels, std::span<const double> margins, double scale,
                       std::span<double> first, std::span<double> second) {
  assert(labels.size() == margins.size() && first.size() == margins.size() && second.size() == margins.size());
  double sum = 0;
  const std::size_t n = labels.size();
  switch (loss) {
    case Loss::kLogistic:
      for (std::size_t r = 0; r < n; ++r) {
        // With t = y m: loss = log(1 + e^-t), dloss/dm = -y s(-t), d2loss/dm2 = s(t) s(-t),
        // where s is the sigmoid; e = e^{-|t|} keeps everything finite.
        const double y = labels[r];
        const double t = y * margins[r];
        const double e = std::exp(-std::abs(t));
        const double sigmoid_minus_t = t > 0 ? e / (1.0 + e) : 1.0 / (1.0 + e);
        sum += t > 0 ? std::log1p(e) : -t + std::log1p(e);
        first[r] = -y * sigmoid_minus_t * scale;
        second[r] = sigmoid_minus_t * (1.0 - sigmoid_minus_t) * scale;
      }
      break;
    case Loss::kSquared:
      for (std::size_t r = 0; r < n; ++r) {
        const double residual = margins[r] - labels[r];
        sum += 0.5 * residual * residual;
        first[r] = residual * scale;
        second[r] = scale;
      }
      break;
    case Loss::kSquaredHinge:
      for (std::size_t r = 0; r < n; ++r) {
        const double y = labels[r];
        const double slack = 1.0 - y * margins[r];
        if (slack > 0) {
          sum += slack * slack;
          first[r] = -2.0 * y * slack * scale;
          second[r] = 2.0 * scale;
        } else {
          first[r] = 0;
          second[r] = 0;
        }
      }
      break;
  }
  return sum;
}

double CurvatureAtZero(Loss loss) {
  switch (loss) {
    case Loss::kLogistic: return 0.25;
    case Loss::kSquared: return 1.0;
    case Loss::kSquaredHinge: return 2.0;
  }
  return 1.0;
}

}  // namespace nimbus
