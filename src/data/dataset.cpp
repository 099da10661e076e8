#include "nimbus/data/dataset.h"

#include <cstdio>

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

Dataset Dataset::Rows(int64_t begin, int64_t end) const {
  Dataset part = *this;
  part.matrix = matrix.RowRange(begin, end);
  part.labels = labels.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin));
  return part;
}

uint64_t Dataset::MemoryBytes() const {
  const uint64_t map = columns.renumbered() ? columns.features->size() * sizeof(uint32_t) : 0;
  return static_cast<uint64_t>(nnz()) * (sizeof(uint32_t) + sizeof(double)) +
         static_cast<uint64_t>(rows() + 1) * sizeof(int64_t) + static_cast<uint64_t>(rows()) * sizeof(double) + map;
}

}  // namespace nimbus
