#include "nimbus/problem/loss.h"

#include <cassert>
#include <map>
#include <mutex>
#include <vector>
#include <algorithm>

namespace nimbus {

double CustomLoss::CurvatureAtZero() const {
  double first = 0, second = 0;
  Derivatives(1.0, 0.0, &first, &second);
  return second;
}

double CustomLoss::Sum(std::span<const double> labels, std::span<const double> margins) const {
  double sum = 0;
  for (std::size_t r = 0; r < labels.size(); ++r) sum += Value(labels[r], margins[r]);
  return sum;
}

double CustomLoss::SumWithDerivatives(std::span<const double> labels, std::span<const double> margins, double scale,
                                      std::span<double> first, std::span<double> second) const {
  double sum = 0;
  for (std::size_t r = 0; r < labels.size(); ++r) {
    sum += Value(labels[r], margins[r]);
    Derivatives(labels[r], margins[r], &first[r], &second[r]);
    first[r] *= scale;
    second[r] *= scale;
  }
  return sum;
}

namespace {

// The custom losses this process knows by name.
struct LossRegistry {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const CustomLoss>> losses;
  std::map<std::string, LossMaker> families;
};
LossRegistry& Registry() {
  static LossRegistry registry;
  return registry;
}

constexpr const char* kBuiltInLosses = "logistic, squared, squared_hinge";

}  // namespace

const char* LossName(const Loss& loss) {
  switch (loss.kind()) {
    case LossKind::kLogistic: return "logistic";
    case LossKind::kSquared: return "squared";
    case LossKind::kSquaredHinge: return "squared_hinge";
    case LossKind::kCustom: return loss.custom()->name().c_str();
  }
  return "unknown";
}

Result<Loss> ParseLoss(const std::string& name) {
  if (name == "logistic") return Loss::kLogistic;
  if (name == "squared") return Loss::kSquared;
  if (name == "squared_hinge" || name == "squared-hinge") return Loss::kSquaredHinge;
  LossRegistry& registry = Registry();
  std::unique_lock lock(registry.mutex);
  if (auto found = registry.losses.find(name); found != registry.losses.end()) return Loss(found->second);
  const std::size_t colon = name.find(':');
  if (colon != std::string::npos) {
    if (auto family = registry.families.find(name.substr(0, colon)); family != registry.families.end()) {
      const LossMaker make = family->second;
      lock.unlock();
      Result<std::shared_ptr<const CustomLoss>> made = make(name.substr(colon + 1));
      if (!made.ok()) return made.status().WithContext("loss '" + name + "'");
      if (*made == nullptr || (*made)->name() != name) {
        return InvalidArgument("loss '" + name + "': its family made a loss of another name");
      }
      return Loss(std::move(made).value());
    }
  }
  std::string known = kBuiltInLosses;
  for (const auto& [registered, loss] : registry.losses) known += ", " + registered;
  for (const auto& [family, make] : registry.families) known += ", " + family + ":PARAMETER";
  const bool none = registry.losses.empty() && registry.families.empty();
  return InvalidArgument("unknown loss '" + name + "' (choose " + known + ")" +
                         (none ? "; a program's own loss must be registered (RegisterLoss) in the program that "
                                 "solves, and in its workers (nimbus.h: WorkerMain)"
                               : ""));
}

Status RegisterLossFamily(const std::string& family, LossMaker make) {
  if (family.empty() || family.find(':') != std::string::npos || !make) {
    return InvalidArgument("RegisterLossFamily: a family name without ':' and a maker");
  }
  LossRegistry& registry = Registry();
  std::lock_guard lock(registry.mutex);
  registry.families[family] = std::move(make);
  return Status::Ok();
}

Status RegisterLoss(std::shared_ptr<const CustomLoss> loss) {
  if (loss == nullptr || loss->name().empty()) return InvalidArgument("RegisterLoss: a loss with a name");
  const std::string& name = loss->name();
  if (name == "logistic" || name == "squared" || name == "squared_hinge" || name == "squared-hinge") {
    return InvalidArgument("RegisterLoss: '" + name + "' is one of nimbus's own losses");
  }
  LossRegistry& registry = Registry();
  std::lock_guard lock(registry.mutex);
  auto [at, added] = registry.losses.emplace(name, loss);
  if (!added && at->second != loss) return InvalidArgument("RegisterLoss: another loss is registered as '" + name + "'");
  return Status::Ok();
}

namespace {

// Sum over rows of c_r value(y_r, m_r); unweighted rows in a loop of their own.
template <class Value>
double SumValues(std::span<const double> labels, std::span<const double> margins, std::span<const double> weights,
                 Value value) {
  double sum = 0;
  if (weights.empty()) {
    for (std::size_t r = 0; r < labels.size(); ++r) sum += value(labels[r], margins[r]);
  } else {
    for (std::size_t r = 0; r < labels.size(); ++r) sum += weights[r] * value(labels[r], margins[r]);
  }
  return sum;
}

// The sums of a loss given by `row(y, m, &first, &second)`, which returns the row's value and
// sets its derivatives; unweighted rows and weighted ones in loops of their own, so that the
// common unweighted case pays nothing for the weights.
template <class Row>
double SumRows(std::span<const double> labels, std::span<const double> margins, double scale, std::span<double> first,
               std::span<double> second, std::span<const double> weights, Row row) {
  double sum = 0;
  const std::size_t n = labels.size();
  if (weights.empty()) {
    for (std::size_t r = 0; r < n; ++r) {
      sum += row(labels[r], margins[r], &first[r], &second[r]);
      first[r] *= scale;
      second[r] *= scale;
    }
    return sum;
  }
  for (std::size_t r = 0; r < n; ++r) {
    const double c = weights[r];
    sum += c * row(labels[r], margins[r], &first[r], &second[r]);
    first[r] *= c * scale;
    second[r] *= c * scale;
  }
  return sum;
}

// With t = y m: loss = log(1 + e^-t), dloss/dm = -y s(-t), d2loss/dm2 = s(t) s(-t), where s is
// the sigmoid; e = e^{-|t|} keeps everything finite.
double LogisticRow(double y, double m, double* first, double* second) {
  const double t = y * m;
  const double e = std::exp(-std::abs(t));
  const double sigmoid_minus_t = t > 0 ? e / (1.0 + e) : 1.0 / (1.0 + e);
  *first = -y * sigmoid_minus_t;
  *second = sigmoid_minus_t * (1.0 - sigmoid_minus_t);
  return t > 0 ? std::log1p(e) : -t + std::log1p(e);
}

double SquaredRow(double y, double m, double* first, double* second) {
  const double residual = m - y;
  *first = residual;
  *second = 1.0;
  return 0.5 * residual * residual;
}

double SquaredHingeRow(double y, double m, double* first, double* second) {
  const double slack = 1.0 - y * m;
  const bool active = slack > 0;
  *first = active ? -2.0 * y * slack : 0.0;
  *second = active ? 2.0 : 0.0;
  return active ? slack * slack : 0.0;
}

}  // namespace

double SumLoss(const Loss& loss, std::span<const double> labels, std::span<const double> margins,
               std::span<const double> weights) {
  assert(labels.size() == margins.size() && (weights.empty() || weights.size() == labels.size()));
  switch (loss.kind()) {
    case LossKind::kCustom: {
      const CustomLoss& custom = *loss.custom();
      if (weights.empty()) return custom.Sum(labels, margins);
      return SumValues(labels, margins, weights, [&custom](double y, double m) { return custom.Value(y, m); });
    }
    case LossKind::kLogistic:
      return SumValues(labels, margins, weights, [](double y, double m) { return LogOnePlusExpMinus(y * m); });
    case LossKind::kSquared:
      return SumValues(labels, margins, weights, [](double y, double m) { return 0.5 * (m - y) * (m - y); });
    case LossKind::kSquaredHinge:
      return SumValues(labels, margins, weights, [](double y, double m) {
        const double slack = 1.0 - y * m;
        return slack > 0 ? slack * slack : 0.0;
      });
  }
  return 0;
}

double LossDerivatives(const Loss& loss, std::span<const double> labels, std::span<const double> margins, double scale,
                       std::span<double> first, std::span<double> second, std::span<const double> weights) {
  assert(labels.size() == margins.size() && first.size() == margins.size() && second.size() == margins.size());
  assert(weights.empty() || weights.size() == labels.size());
  switch (loss.kind()) {
    case LossKind::kCustom: {
      const CustomLoss& custom = *loss.custom();
      if (weights.empty()) return custom.SumWithDerivatives(labels, margins, scale, first, second);
      return SumRows(labels, margins, scale, first, second, weights, [&custom](double y, double m, double* d1, double* d2) {
        custom.Derivatives(y, m, d1, d2);
        return custom.Value(y, m);
      });
    }
    // Lambdas, not function pointers: each instantiation of SumRows gets its own row, inlined.
    case LossKind::kLogistic:
      return SumRows(labels, margins, scale, first, second, weights,
                     [](double y, double m, double* d1, double* d2) { return LogisticRow(y, m, d1, d2); });
    case LossKind::kSquared:
      return SumRows(labels, margins, scale, first, second, weights,
                     [](double y, double m, double* d1, double* d2) { return SquaredRow(y, m, d1, d2); });
    case LossKind::kSquaredHinge:
      return SumRows(labels, margins, scale, first, second, weights,
                     [](double y, double m, double* d1, double* d2) { return SquaredHingeRow(y, m, d1, d2); });
  }
  return 0;
}

namespace {

// One row's softmax: p = exp(m - max m) / sum, and log sum exp(m) - m_k.
double SoftmaxRow(const double* margins, std::size_t classes, std::size_t k, double* p) {
  double top = margins[0];
  for (std::size_t c = 1; c < classes; ++c) top = std::max(top, margins[c]);
  double sum = 0;
  for (std::size_t c = 0; c < classes; ++c) sum += (p[c] = std::exp(margins[c] - top));
  for (std::size_t c = 0; c < classes; ++c) p[c] /= sum;
  return top + std::log(sum) - margins[k];
}

}  // namespace

double SoftmaxLoss(std::span<const double> labels, std::span<const double> margins, int64_t classes,
                   std::span<const double> weights) {
  const auto c_count = static_cast<std::size_t>(classes);
  assert(margins.size() == labels.size() * c_count);
  std::vector<double> p(c_count);
  double sum = 0;
  for (std::size_t r = 0; r < labels.size(); ++r) {
    const double value = SoftmaxRow(margins.data() + r * c_count, c_count, ClassIndex(labels[r]), p.data());
    sum += weights.empty() ? value : weights[r] * value;
  }
  return sum;
}

double SoftmaxDerivatives(std::span<const double> labels, std::span<const double> margins, int64_t classes, double scale,
                          std::span<double> first, std::span<double> probabilities, std::span<const double> weights) {
  const auto c_count = static_cast<std::size_t>(classes);
  assert(margins.size() == labels.size() * c_count && first.size() == margins.size() &&
         probabilities.size() == margins.size());
  double sum = 0;
  for (std::size_t r = 0; r < labels.size(); ++r) {
    const std::size_t k = ClassIndex(labels[r]);
    double* p = probabilities.data() + r * c_count;
    const double c_r = weights.empty() ? 1.0 : weights[r];
    sum += c_r * SoftmaxRow(margins.data() + r * c_count, c_count, k, p);
    for (std::size_t c = 0; c < c_count; ++c) first[r * c_count + c] = scale * c_r * (p[c] - (c == k ? 1.0 : 0.0));
  }
  return sum;
}

double CurvatureAtZero(const Loss& loss) {
  switch (loss.kind()) {
    case LossKind::kLogistic: return 0.25;
    case LossKind::kSquared: return 1.0;
    case LossKind::kSquaredHinge: return 2.0;
    case LossKind::kCustom: return loss.custom()->CurvatureAtZero();
  }
  return 1.0;
}

}  // namespace nimbus
