// Huber regression with nimbus: real targets y_r, residuals r = m_r - y_r,
//
//   minimize (1/N) sum_r h(m_r - y_r) + (l2/2) ||x||^2,   m_r = a_r . x + b,
//   h(r) = r^2 / 2 for |r| <= delta, delta (|r| - delta/2) beyond,
//
// quadratic near the fit and linear for outliers. The loss is this program's own, with a
// parameter: a family "huber" whose member "huber:DELTA" the workers make from its name. So
// the program is its own worker program too.
//
// usage: huber_regression DATA.svm L2 DELTA [threads|process] [WORKERS] [MODEL.json]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <nimbus/nimbus.h>

namespace {

class HuberLoss final : public nimbus::CustomLoss {
 public:
  HuberLoss(const std::string& delta_text, double delta)
      : CustomLoss("huber:" + delta_text, /*classification=*/false), delta_(delta) {}
  double Value(double y, double m) const override {
    const double r = std::abs(m - y);
    return r <= delta_ ? 0.5 * r * r : delta_ * (r - 0.5 * delta_);
  }
  // h'(r) = r clipped to [-delta, delta]; h''(r) = 1 inside, 0 beyond.
  void Derivatives(double y, double m, double* first, double* second) const override {
    const double r = m - y;
    *first = std::clamp(r, -delta_, delta_);
    *second = std::abs(r) <= delta_ ? 1.0 : 0.0;
  }

 private:
  double delta_;
};

nimbus::Result<std::shared_ptr<const nimbus::CustomLoss>> MakeHuber(const std::string& delta_text) {
  char* end = nullptr;
  const double delta = std::strtod(delta_text.c_str(), &end);
  if (end == delta_text.c_str() || *end != '\0' || !(delta > 0) || !std::isfinite(delta)) {
    return nimbus::InvalidArgument("huber: delta must be a positive number, got '" + delta_text + "'");
  }
  return std::shared_ptr<const nimbus::CustomLoss>(std::make_shared<HuberLoss>(delta_text, delta));
}

}  // namespace

int main(int argc, char** argv) {
  if (nimbus::Status registered = nimbus::RegisterLossFamily("huber", MakeHuber); !registered.ok()) {
    std::fprintf(stderr, "huber_regression: %s\n", registered.message().c_str());
    return 1;
  }
  if (nimbus::IsWorkerInvocation(argc, argv)) return nimbus::WorkerMain(argc, argv);
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s DATA.svm L2 DELTA [threads|process] [WORKERS] [MODEL.json]\n", argv[0]);
    return 2;
  }
  nimbus::Result<nimbus::Loss> loss = nimbus::ParseLoss(std::string("huber:") + argv[3]);
  if (!loss.ok()) {
    std::fprintf(stderr, "huber_regression: %s\n", loss.status().message().c_str());
    return 2;
  }
  nimbus::SolveOptions options;
  options.loss = *loss;
  options.l2 = std::atof(argv[2]);
  options.intercept = true;
  const nimbus::Result<nimbus::RuntimeKind> runtime = nimbus::ParseChoice<nimbus::RuntimeKind>(argc > 4 ? argv[4] : "threads");
  if (!runtime.ok()) {
    std::fprintf(stderr, "huber_regression: %s\n", runtime.status().message().c_str());
    return 2;
  }
  options.runtime.kind = *runtime;
  options.runtime.workers = argc > 5 ? std::atoi(argv[5]) : 2;
  options.gradient_tolerance = 1e-10;
  const nimbus::Result<nimbus::SolveResult> result = nimbus::Solve(nimbus::TrainingData::LibsvmFile(argv[1]), options);
  if (!result.ok()) {
    std::fprintf(stderr, "huber_regression: %s\n", result.status().message().c_str());
    return 1;
  }
  if (argc > 6) {
    if (nimbus::Status written = nimbus::WriteModel(result->model, nimbus::ModelFormat::kJson, argv[6]); !written.ok()) {
      std::fprintf(stderr, "huber_regression: %s\n", written.message().c_str());
      return 1;
    }
  }
  std::printf("objective %.17g\n%s\n", result->summary.objective, result->summary.BriefReport().c_str());
  return result->summary.ok() ? 0 : 1;
}
