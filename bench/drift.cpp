// How much this machine's speed drifts for a solve's own work: one process, the same memory,
// the same passes over a LIBSVM file's rows (a product with the rows and one with their
// transpose, as a round makes), timed again every INTERVAL milliseconds for SECONDS seconds.
// The spread it prints is what two measurements of one solve, taken apart, can disagree by
// without either being wrong: the floor under `nimbus simulate --validate`'s errors.
//
// usage: drift FILE.svm [SECONDS] [INTERVAL_MS] [PASSES]    (default 20 s, 250 ms, 10 passes)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "nimbus/core/csr.h"
#include "nimbus/data/libsvm_reader.h"

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double Quantile(std::vector<double> values, double q) {
  const auto at = static_cast<std::ptrdiff_t>(q * static_cast<double>(values.size() - 1));
  std::nth_element(values.begin(), values.begin() + at, values.end());
  return values[static_cast<std::size_t>(at)];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: drift FILE.svm [SECONDS] [INTERVAL_MS] [PASSES]\n");
    return 2;
  }
  const double seconds = argc > 2 ? std::max(1.0, std::atof(argv[2])) : 20;
  const double interval = (argc > 3 ? std::max(1.0, std::atof(argv[3])) : 250) / 1e3;
  const int passes = argc > 4 ? std::max(1, std::atoi(argv[4])) : 10;
  nimbus::LibsvmReadOptions options;
  options.renumber_columns = true;  // as nimbus train reads it
  nimbus::Result<nimbus::Dataset> data = nimbus::ReadLibsvmFile(argv[1], options);
  if (!data.ok()) {
    std::fprintf(stderr, "drift: %s\n", data.status().ToString().c_str());
    return 1;
  }
  const nimbus::CsrView& a = data->matrix;
  std::vector<double> x(static_cast<std::size_t>(a.cols)), out(x.size()), margins(static_cast<std::size_t>(a.rows));
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = 1e-3 * static_cast<double>(j % 17) - 8e-3;
  double sink = 0;  // results feed this, so no pass can be left out
  std::vector<double> samples;
  const Clock::time_point start = Clock::now();
  while (SecondsSince(start) < seconds) {
    const Clock::time_point began = Clock::now();
    for (int p = 0; p < passes; ++p) {
      nimbus::MultiplyRows(a, x, false, margins);
      nimbus::AddTransposeProduct(a, margins, false, out);
      x[0] = 1e-12 * out[0];
    }
    sink += out[0];
    samples.push_back(SecondsSince(began));
    std::printf("%8.3f s  %8.3f ms\n", SecondsSince(start), 1e3 * samples.back());
    std::this_thread::sleep_until(began + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(interval)));
  }
  const double fastest = Quantile(samples, 0), median = Quantile(samples, 0.5), slowest = Quantile(samples, 1);
  std::printf("%zu samples of %d passes over %lld nonzeros: fastest %.3f ms, median %.3f, slowest %.3f "
              "(+%.0f%% over the fastest; the median +%.0f%%)\n",
              samples.size(), passes, static_cast<long long>(a.nnz()), 1e3 * fastest, 1e3 * median, 1e3 * slowest,
              100 * (slowest / fastest - 1), 100 * (median / fastest - 1));
  std::fprintf(stderr, "(checksum %g)\n", sink);
  return 0;
}
