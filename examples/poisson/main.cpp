// Poisson regression with nimbus: counts y_r >= 0 with a log link, mean exp(a_r . x + b),
//
//   minimize (1/N) sum_r [exp(m_r) - y_r m_r] + (alpha/2) ||x||^2,   m_r = a_r . x + b,
//
// which is scikit-learn's PoissonRegressor(alpha) (its half mean deviance differs by a
// constant). The loss is this program's own, so the program is its own worker program too.
//
// usage: poisson_regression DATA.svm ALPHA [threads|process|lambda:FUNCTION@ENDPOINT] [WORKERS] [MODEL.json]
//
// With Lambda the functions run this program too: `nimbus lambda package --binary
// poisson_regression` makes their package, and in a function WorkerMain serves invocations.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <nimbus/nimbus.h>

namespace {

class PoissonLoss final : public nimbus::CustomLoss {
 public:
  PoissonLoss() : CustomLoss("poisson", /*classification=*/false) {}
  double Value(double y, double m) const override { return std::exp(m) - y * m; }
  void Derivatives(double y, double m, double* first, double* second) const override {
    const double mean = std::exp(m);
    *first = mean - y;
    *second = mean;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (nimbus::Status registered = nimbus::RegisterLoss(std::make_shared<PoissonLoss>()); !registered.ok()) {
    std::fprintf(stderr, "poisson_regression: %s\n", registered.message().c_str());
    return 1;
  }
  if (nimbus::IsWorkerInvocation(argc, argv)) return nimbus::WorkerMain(argc, argv);
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s DATA.svm ALPHA [threads|process|lambda:FUNCTION@ENDPOINT] [WORKERS] [MODEL.json]\n",
                 argv[0]);
    return 2;
  }
  nimbus::SolveOptions options;
  options.loss = nimbus::ParseLoss("poisson").value();
  options.l2 = std::atof(argv[2]);
  options.intercept = true;
  const std::string runtime = argc > 3 ? argv[3] : "threads";
  const bool lambda = runtime.rfind("lambda:", 0) == 0;
  const nimbus::Result<nimbus::RuntimeKind> kind =
      lambda ? nimbus::RuntimeKind::kLambda : nimbus::ParseChoice<nimbus::RuntimeKind>(runtime);
  if (!kind.ok()) {
    std::fprintf(stderr, "poisson_regression: %s\n", kind.status().message().c_str());
    return 2;
  }
  options.runtime.kind = *kind;
  if (lambda) {  // lambda:FUNCTION@ENDPOINT
    const std::size_t at = runtime.find('@');
    options.runtime.lambda_function = runtime.substr(7, at == std::string::npos ? std::string::npos : at - 7);
    if (at != std::string::npos) options.runtime.lambda_endpoint = runtime.substr(at + 1);
  }
  options.runtime.workers = argc > 4 ? std::atoi(argv[4]) : 2;
  options.gradient_tolerance = 1e-10;
  const nimbus::Result<nimbus::SolveResult> result = nimbus::Solve(nimbus::TrainingData::LibsvmFile(argv[1]), options);
  if (!result.ok()) {
    std::fprintf(stderr, "poisson_regression: %s\n", result.status().message().c_str());
    return 1;
  }
  if (argc > 5) {
    if (nimbus::Status written = nimbus::WriteModel(result->model, nimbus::ModelFormat::kJson, argv[5]); !written.ok()) {
      std::fprintf(stderr, "poisson_regression: %s\n", written.message().c_str());
      return 1;
    }
  }
  std::printf("objective %.17g\n%s\n", result->summary.objective, result->summary.BriefReport().c_str());
  return result->summary.ok() ? 0 : 1;
}
