#include "nimbus/data/dataset.h"

#include <cstdio>
#include <memory>
#include <utility>

namespace nimbus {

std::string FormatLabel(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  // Prefer the shortest text that reads back to the same value.
  for (int precision = 1; precision < 17; ++precision) {
    char shorter[32];
    std::snprintf(shorter, sizeof shorter, "%.*g", precision, value);
    if (std::strtod(shorter, nullptr) == value) return shorter;
  }
  return text;
}

std::string LabelEncoding::Describe() const {
  if (!binary) return "real-valued targets";
  return "labels " + FormatLabel(positive) + " (+1) and " + FormatLabel(negative) + " (-1)";
}

void Dataset::AdoptWeights(std::vector<double> row_weights) {
  auto owned = std::make_shared<const std::vector<double>>(std::move(row_weights));
  weights = *owned;
  storage = std::make_shared<const std::pair<std::shared_ptr<const void>, std::shared_ptr<const void>>>(
      std::move(storage), std::move(owned));
}

Dataset Dataset::Rows(int64_t begin, int64_t end) const {
  Dataset part = *this;
  part.matrix = matrix.RowRange(begin, end);
  part.labels = labels.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin));
  if (!weights.empty()) part.weights = weights.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin));
  return part;
}

uint64_t Dataset::MemoryBytes() const {
  const uint64_t map = columns.renumbered() ? columns.features->size() * sizeof(uint32_t) : 0;
  return static_cast<uint64_t>(nnz()) * (sizeof(uint32_t) + sizeof(double)) +
         static_cast<uint64_t>(rows() + 1) * sizeof(int64_t) + static_cast<uint64_t>(rows()) * sizeof(double) + weights.size() * sizeof(double) + map;
}

}  // namespace nimbus
