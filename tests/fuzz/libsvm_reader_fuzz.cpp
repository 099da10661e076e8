// The LIBSVM reader on any bytes, as a file (in memory: memfd), in both label modes. An
// accepted file must give a well-formed dataset; anything else must be a clean error.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "nimbus/data/libsvm_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("nimbus-fuzz.svm", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  FUZZ_CHECK(fd >= 0);
  FUZZ_CHECK(ftruncate(fd, 0) == 0);
  FUZZ_CHECK(pwrite(fd, data, size, 0) == static_cast<ssize_t>(size));
  for (const nimbus::LabelMode mode : {nimbus::LabelMode::kClassification, nimbus::LabelMode::kRegression}) {
    nimbus::LibsvmReadOptions options;
    options.label_mode = mode;
    nimbus::Result<nimbus::Dataset> parsed = nimbus::ReadLibsvmFile(path, options);
    if (!parsed.ok()) {
      // Errors name the file and line.
      FUZZ_CHECK(parsed.status().message().rfind(path, 0) == 0);
      continue;
    }
    nimbus::fuzz::CheckDataset(*parsed);
    if (mode == nimbus::LabelMode::kClassification) {
      // Two classes are -1/+1; more are class indices into the ascending class values.
      const std::vector<double>& classes = parsed->encoding.classes;
      FUZZ_CHECK(classes.empty() || (classes.size() >= 3 && classes.size() <= nimbus::kMaxClasses));
      for (std::size_t k = 1; k < classes.size(); ++k) FUZZ_CHECK(classes[k - 1] < classes[k]);
      for (const double label : parsed->labels) {
        if (classes.empty()) {
          FUZZ_CHECK(label == 1.0 || label == -1.0);
        } else {
          FUZZ_CHECK(label >= 0 && label < static_cast<double>(classes.size()) && label == static_cast<int>(label));
        }
      }
    }
  }
  return 0;
}
