#include "nimbus/problem/loss.h"

#include <cassert>
#include <map>
#include <mutex>

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

double SumLoss(const Loss& loss, std::span<const double> labels, std::span<const double> margins) {
  assert(labels.size() == margins.size());
  double sum = 0;
  const std::size_t n = labels.size();
  switch (loss.kind()) {
    case LossKind::kCustom: return loss.custom()->Sum(labels, margins);
    case LossKind::kLogistic:
      for (std::size_t r = 0; r < n; ++r) sum += LogOnePlusExpMinus(labels[r] * margins[r]);
      break;
    case LossKind::kSquared:
      for (std::size_t r = 0; r < n; ++r) sum += 0.5 * (margins[r] - labels[r]) * (margins[r] - labels[r]);
      break;
    case LossKind::kSquaredHinge:
      for (std::size_t r = 0; r < n; ++r) {
        const double slack = 1.0 - labels[r] * margins[r];
        if (slack > 0) sum += slack * slack;
      }
      break;
  }
  return sum;
}

double LossDerivatives(const Loss& loss, std::span<const double> labels, std::span<const double> margins, double scale,
                       std::span<double> first, std::span<double> second) {
  assert(labels.size() == margins.size() && first.size() == margins.size() && second.size() == margins.size());
  double sum = 0;
  const std::size_t n = labels.size();
  switch (loss.kind()) {
    case LossKind::kCustom: return loss.custom()->SumWithDerivatives(labels, margins, scale, first, second);
    case LossKind::kLogistic:
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
    case LossKind::kSquared:
      for (std::size_t r = 0; r < n; ++r) {
        const double residual = margins[r] - labels[r];
        sum += 0.5 * residual * residual;
        first[r] = residual * scale;
        second[r] = scale;
      }
      break;
    case LossKind::kSquaredHinge:
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
