// Margin losses loss(y, m) with m = a . x (+ b). Each has a value, a first and a second
// derivative in m; the solver only ever needs these per row.
//
//   logistic       log(1 + exp(-y m))          y in {-1, +1}
//   squared        (m - y)^2 / 2               y real (lasso, ridge)
//   squared hinge  max(0, 1 - y m)^2           y in {-1, +1} (L2-loss SVM; its second
//                                              derivative is the generalized one, 0 or 2)
//   a user's own   CustomLoss                  smooth and convex in m
#pragma once

#include <cmath>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "nimbus/core/status.h"

namespace nimbus {

// A user's own loss(y, m): smooth and convex in the margin m, given by its value and first
// two derivatives in m. Every algorithm solves with it. Remote workers find it by name: the
// worker program registers it (RegisterLoss) before it serves (nimbus.h: WorkerMain).
class CustomLoss {
 public:
  // `classification`: labels are two classes, encoded -1/+1 as nimbus's classifiers see them;
  // otherwise they are real targets, as they are in the file.
  CustomLoss(std::string name, bool classification) : name_(std::move(name)), classification_(classification) {}
  virtual ~CustomLoss() = default;

  const std::string& name() const { return name_; }
  bool classification() const { return classification_; }
  virtual double Value(double y, double m) const = 0;
  // dloss/dm and d2loss/dm2 (>= 0) at (y, m).
  virtual void Derivatives(double y, double m, double* first, double* second) const = 0;
  // The curvature scale where solves start (m = 0), for ADMM's first rho: by default the
  // second derivative at (y, m) = (1, 0).
  virtual double CurvatureAtZero() const;
  // Sum over rows (and the derivatives scaled by `scale`): override for speed, e.g. to let the
  // compiler vectorize; the defaults call Value and Derivatives row by row.
  virtual double Sum(std::span<const double> labels, std::span<const double> margins) const;
  virtual double SumWithDerivatives(std::span<const double> labels, std::span<const double> margins, double scale,
                                    std::span<double> first, std::span<double> second) const;

 private:
  std::string name_;
  bool classification_;
};

enum class LossKind { kLogistic, kSquared, kSquaredHinge, kCustom };

// One of nimbus's losses, or a user's. Copies share the user's loss object.
class Loss {
 public:
  static const Loss kLogistic, kSquared, kSquaredHinge;

  Loss() = default;  // logistic
  explicit Loss(LossKind kind) : kind_(kind) {}
  explicit Loss(std::shared_ptr<const CustomLoss> custom) : kind_(LossKind::kCustom), custom_(std::move(custom)) {}

  LossKind kind() const { return kind_; }
  const CustomLoss* custom() const { return custom_.get(); }
  friend bool operator==(const Loss& a, const Loss& b) { return a.kind_ == b.kind_ && a.custom_ == b.custom_; }

 private:
  LossKind kind_ = LossKind::kLogistic;
  std::shared_ptr<const CustomLoss> custom_;
};
inline const Loss Loss::kLogistic{LossKind::kLogistic};
inline const Loss Loss::kSquared{LossKind::kSquared};
inline const Loss Loss::kSquaredHinge{LossKind::kSquaredHinge};

// "logistic", "squared", "squared_hinge", or the custom loss's name.
const char* LossName(const Loss& loss);
// nimbus's losses by name, then the registered ones. Errors list what there is.
Result<Loss> ParseLoss(const std::string& name);
// Makes a custom loss known by its name in this process (to ParseLoss, and so to the workers
// it runs). A name of nimbus's own losses, or one already registered for another object, is
// refused.
Status RegisterLoss(std::shared_ptr<const CustomLoss> loss);
// A family of custom losses with a parameter, e.g. "huber:1.5": ParseLoss("FAMILY:PARAMETER")
// asks `make` for the loss, whose name must be that whole text. Workers find it the same way.
using LossMaker = std::function<Result<std::shared_ptr<const CustomLoss>>(const std::string& parameter)>;
Status RegisterLossFamily(const std::string& family, LossMaker make);
inline bool IsClassification(const Loss& loss) {
  return loss.kind() == LossKind::kCustom ? loss.custom()->classification() : loss.kind() != LossKind::kSquared;
}

// log(1 + exp(-t)) without overflow for large |t|.
inline double LogOnePlusExpMinus(double t) {
  return t > 0 ? std::log1p(std::exp(-t)) : -t + std::log1p(std::exp(t));
}

inline double LossValue(const Loss& loss, double y, double m) {
  switch (loss.kind()) {
    case LossKind::kLogistic: return LogOnePlusExpMinus(y * m);
    case LossKind::kSquared: return 0.5 * (m - y) * (m - y);
    case LossKind::kSquaredHinge: {
      const double slack = 1.0 - y * m;
      return slack > 0 ? slack * slack : 0.0;
    }
    case LossKind::kCustom: return loss.custom()->Value(y, m);
  }
  return 0;
}

// Sum over rows of c_r loss(y_r, m_r), with c_r = weights[r] (empty: every c_r = 1).
double SumLoss(const Loss& loss, std::span<const double> labels, std::span<const double> margins,
               std::span<const double> weights = {});

// Sum over rows of c_r loss(y_r, m_r); first[r] = c_r dloss/dm, second[r] = c_r d2loss/dm2,
// each times `scale`. A custom loss's own sums serve unweighted rows only: weighted rows go
// through its Value and Derivatives row by row.
double LossDerivatives(const Loss& loss, std::span<const double> labels, std::span<const double> margins, double scale,
                       std::span<double> first, std::span<double> second, std::span<const double> weights = {});

// The class of an encoded label: a multiclass label is its class index 0 .. C-1; -1/+1 are
// classes 0 and 1.
inline std::size_t ClassIndex(double label) { return label > 0 ? static_cast<std::size_t>(label) : 0; }

// The multinomial (softmax) loss of rows with C margins each (margins[r C + c]) and a class
// each (labels[r], ClassIndex): c_r (log sum_c exp(m_rc) - m_{r,class}), summed.
double SoftmaxLoss(std::span<const double> labels, std::span<const double> margins, int64_t classes,
                   std::span<const double> weights = {});
// The same sum; probabilities[r C + c] = p_rc = exp(m_rc) / sum_c' exp(m_rc') and
// first[r C + c] = scale c_r (p_rc - [c = class r]), its derivative in m_rc.
double SoftmaxDerivatives(std::span<const double> labels, std::span<const double> margins, int64_t classes, double scale,
                          std::span<double> first, std::span<double> probabilities, std::span<const double> weights = {});

// The second derivative at m = 0, where every solve starts: the curvature scale of the data.
double CurvatureAtZero(const Loss& loss);

}  // namespace nimbus
