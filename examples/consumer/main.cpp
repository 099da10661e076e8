// solve_file DATA.svm [L1]: L1-regularized logistic regression on a LIBSVM file through the
// nimbus facade, on two worker threads; prints the objective F at the model.
#include <cstdio>
#include <cstdlib>

#include <nimbus/nimbus.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DATA.svm [L1]\n", argv[0]);
    return 2;
  }
  nimbus::SolveOptions options;
  options.l1 = argc > 2 ? std::atof(argv[2]) : 0.01;
  options.runtime.workers = 2;
  options.gradient_tolerance = 1e-8;
  const nimbus::Result<nimbus::SolveResult> result = nimbus::Solve(nimbus::TrainingData::LibsvmFile(argv[1]), options);
  if (!result.ok()) {
    std::fprintf(stderr, "solve_file: %s\n", result.status().message().c_str());
    return 1;
  }
  std::printf("objective %.12g\n", result->summary.objective);
  return result->summary.ok() ? 0 : 1;
}
