// A program compiled for x86-64-v3 (tests/CMakeLists.txt gives it -march=x86-64-v3): its loop
// is vectorized with AVX2 and FMA, and its build-target note says x86-64-v3. `nimbus lambda
// package` must refuse it, and the disassembly check of lambda_test.cpp must find its AVX code.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "nimbus/core/build_target.h"

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) + 1 : 1000;
  std::vector<double> a(n, 1.5), b(n, 2.0);
  for (std::size_t i = 0; i < n; ++i) a[i] = a[i] * b[i] + b[i];
  std::printf("%g\n", a[n / 2]);
  return 0;
}
