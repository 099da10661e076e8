// The solver's hot kernels alone (core/csr.h, core/vector_ops.h) on a LIBSVM file: the median
// time of each over REPEATS calls, in nanoseconds per nonzero (per entry for the dense ones).
// Built once per instruction-set level, it shows what a level buys in the kernels themselves,
// without the rest of a solve (bench/target_levels.sh times whole solves).
//
// usage: kernels FILE.svm [REPEATS]     (default 30)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "nimbus/core/csr.h"
#include "nimbus/core/vector_ops.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/problem/loss.h"

namespace {

double MedianSeconds(int repeats, const std::function<void()>& kernel) {
  std::vector<double> seconds;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    kernel();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(seconds.begin(), seconds.begin() + repeats / 2, seconds.end());
  return seconds[repeats / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: kernels FILE.svm [REPEATS]\n");
    return 2;
  }
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 30;
  nimbus::LibsvmReadOptions options;
  options.renumber_columns = true;  // as nimbus train reads it
  nimbus::Result<nimbus::Dataset> data = nimbus::ReadLibsvmFile(argv[1], options);
  if (!data.ok()) {
    std::fprintf(stderr, "kernels: %s\n", data.status().ToString().c_str());
    return 1;
  }
  const nimbus::CsrView& a = data->matrix;
  const auto rows = static_cast<std::size_t>(a.rows);
  const auto cols = static_cast<std::size_t>(a.cols);
  // Values like a solve's: margins-sized weights, a model with mixed signs.
  std::vector<double> x(cols), v(cols), out(cols), squares(cols), y(rows), w(rows), d(rows), first(rows),
      second(rows), row_weights(rows);
  for (std::size_t j = 0; j < cols; ++j) x[j] = v[j] = 1e-3 * static_cast<double>(j % 17) - 8e-3;
  for (std::size_t r = 0; r < rows; ++r) {
    w[r] = 0.5 - static_cast<double>(r % 7) / 7;
    d[r] = 0.25 - static_cast<double>(r % 5) / 40;
    row_weights[r] = 0.5 + static_cast<double>(r % 3);
  }
  const std::span<const double> labels = data->labels;
  // Ten classes' blocks (one-vs-rest on Fashion-MNIST's 10 classes), interleaved.
  constexpr std::size_t kClasses = 10;
  std::vector<double> xb(cols * kClasses), outb(cols * kClasses), squaresb(cols * kClasses), yb(rows * kClasses),
      db(rows * kClasses);
  for (std::size_t k = 0; k < xb.size(); ++k) xb[k] = 1e-3 * static_cast<double>(k % 17) - 8e-3;
  for (std::size_t k = 0; k < db.size(); ++k) db[k] = 0.25 - static_cast<double>(k % 5) / 40;
  const double nnz = static_cast<double>(a.nnz());
  double sink = 0;  // results feed this, so no call can be left out
  struct Figure {
    const char* kernel;
    double seconds;
    double per;  // the work unit: nonzeros, or vector entries
  };
  std::vector<Figure> figures = {
      {"MultiplyRows", MedianSeconds(repeats, [&] { nimbus::MultiplyRows(a, x, false, y); sink += y[0]; }), nnz},
      {"AddTransposeProduct", MedianSeconds(repeats, [&] { nimbus::AddTransposeProduct(a, w, false, out); }), nnz},
      {"AddTransposeProductAndSquares",
       MedianSeconds(repeats, [&] { nimbus::AddTransposeProductAndSquares(a, w, d, false, out, squares); }), nnz},
      {"AddNormalProduct", MedianSeconds(repeats, [&] { nimbus::AddNormalProduct(a, d, v, false, out); }), nnz},
      {"MultiplyRowsBlocks (10 classes)",
       MedianSeconds(repeats, [&] { nimbus::MultiplyRowsBlocks(a, kClasses, xb, false, yb); sink += yb[0]; }), nnz},
      {"AddTransposeProductBlocks (10)",
       MedianSeconds(repeats, [&] { nimbus::AddTransposeProductBlocks(a, kClasses, yb, db, false, outb, squaresb); }), nnz},
      {"AddNormalProductBlocks (10)", MedianSeconds(repeats, [&] {
         nimbus::AddNormalProductBlocks(a, kClasses, xb, false, outb, [&](int64_t r, std::span<double> t) {
           const double* dr = db.data() + static_cast<std::size_t>(r) * kClasses;
           for (std::size_t c = 0; c < kClasses; ++c) t[c] *= dr[c];
         });
       }), nnz},
      {"Dot (rows)", MedianSeconds(repeats * 10, [&] { sink += nimbus::Dot(w, d); }), static_cast<double>(rows)},
      {"Axpy (rows)", MedianSeconds(repeats * 10, [&] { nimbus::Axpy(1e-9, d, w); }), static_cast<double>(rows)},
      {"SquaredDistance (rows)", MedianSeconds(repeats * 10, [&] { sink += nimbus::SquaredDistance(w, d); }),
       static_cast<double>(rows)},
      // The loss's sums and derivatives per row at margins w, unweighted and with row weights.
      {"LossDerivatives logistic (rows)",
       MedianSeconds(repeats, [&] { sink += nimbus::LossDerivatives(nimbus::Loss::kLogistic, labels, w, 1.0, first, second); }),
       static_cast<double>(rows)},
      {"... with row weights (rows)", MedianSeconds(repeats, [&] {
         sink += nimbus::LossDerivatives(nimbus::Loss::kLogistic, labels, w, 1.0, first, second, row_weights);
       }), static_cast<double>(rows)},
  };
  sink += out[0] + squares[0];
  std::printf("%s: %zu rows, %zu columns, %.0f nonzeros; median of %d calls (dense ones: %d)\n", argv[1], rows, cols,
              nnz, repeats, repeats * 10);
  for (const Figure& f : figures) {
    std::printf("%-32s %10.3f ms %8.3f ns per %s\n", f.kernel, f.seconds * 1e3, f.seconds * 1e9 / f.per,
                f.per == nnz ? "nonzero" : "entry");
  }
  std::fprintf(stderr, "(checksum %g)\n", sink);
  return 0;
}
