#include "nimbus/data/sample_weights.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <cmath>
#include <fstream>
#include <utility>

namespace nimbus {
namespace {

Status CheckWeight(double weight, const std::string& where) {
  if (!std::isfinite(weight) || weight < 0) {
    return InvalidArgument(where + ": the weight must be a finite number >= 0, got " + std::to_string(weight));
  }
  return Status::Ok();
}

// With every weight 0 no row counts, and every model has the objective 0: a mistake, named.
Status CheckSomeWeightCounts(bool some_positive, const std::string& where) {
  if (some_positive) return Status::Ok();
  return InvalidArgument(where + ": every weight is 0, so no row counts (any model would have the objective 0)");
}

}  // namespace

Result<std::vector<double>> ReadSampleWeights(const std::string& path, int64_t rows) {
  std::ifstream in(path);
  if (!in) return NotFound(path + ": cannot open the sample weights file");
  std::vector<double> weights;
  weights.reserve(static_cast<std::size_t>(std::max<int64_t>(rows, 0)));
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    const std::string where = path + ":" + std::to_string(number);
    const auto first = line.find_first_not_of(" \t\r");
    line = first == std::string::npos ? "" : line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
    double weight = 0;
    const auto [end, error] = std::from_chars(line.data(), line.data() + line.size(), weight);
    if (line.empty() || error != std::errc() || end != line.data() + line.size()) {
      return InvalidArgument(where + ": '" + line + "' is not a number (one weight per line, a line per row)");
    }
    NIMBUS_RETURN_IF_ERROR(CheckWeight(weight, where));
    if (static_cast<int64_t>(weights.size()) == rows) {
      return InvalidArgument(where + ": more weights than the data's " + std::to_string(rows) + " rows");
    }
    weights.push_back(weight);
  }
  if (in.bad()) return DataLoss(path + ": read error");
  if (static_cast<int64_t>(weights.size()) != rows) {
    return InvalidArgument(path + ": " + std::to_string(weights.size()) + " weights for the data's " +
                           std::to_string(rows) + " rows (one weight per line, a line per row)");
  }
  NIMBUS_RETURN_IF_ERROR(CheckSomeWeightCounts(std::any_of(weights.begin(), weights.end(), [](double w) { return w > 0; }), path));
  return weights;
}

Status ReadSampleWeightsInto(const std::string& path, Dataset& data) {
  NIMBUS_ASSIGN_OR_RETURN(std::vector<double> weights, ReadSampleWeights(path, data.rows()));
  data.AdoptWeights(std::move(weights));
  return Status::Ok();
}

Result<SampleWeightReader> SampleWeightReader::Open(const TextFile& file, uint64_t offset, int64_t first_line) {
  SampleWeightReader reader;
  NIMBUS_ASSIGN_OR_RETURN(reader.reader_, file.store->OpenRange(file.key, offset, UINT64_MAX));
  reader.name_ = file.store->Describe(file.key);
  reader.line_ = first_line;
  reader.offset_ = offset;
  reader.buffer_.resize(std::size_t{1} << 16);
  return reader;
}

Result<bool> SampleWeightReader::NextLine(std::string& line) {
  line.clear();
  while (true) {
    if (at_ == end_) {
      NIMBUS_ASSIGN_OR_RETURN(end_, reader_->Read(buffer_));
      at_ = 0;
      if (end_ == 0) return !line.empty();
    }
    const char* begin = buffer_.data() + at_;
    const char* stop = static_cast<const char*>(std::memchr(begin, '\n', end_ - at_));
    if (stop == nullptr) {
      line.append(begin, end_ - at_);
      offset_ += end_ - at_;
      at_ = end_;
      continue;
    }
    line.append(begin, static_cast<std::size_t>(stop - begin));
    offset_ += static_cast<uint64_t>(stop - begin) + 1;
    at_ = static_cast<std::size_t>(stop - buffer_.data()) + 1;
    return true;
  }
}

Status SampleWeightReader::Read(int64_t count, std::vector<double>& weights) {
  weights.clear();
  std::string line;
  for (int64_t i = 0; i < count; ++i) {
    const std::string where = name_ + ":" + std::to_string(line_ + 1);
    NIMBUS_ASSIGN_OR_RETURN(const bool more, NextLine(line));
    if (!more) return InvalidArgument(where + ": the file ends before the data's rows do (one weight per line, a line per row)");
    ++line_;
    const auto first = line.find_first_not_of(" \t\r");
    const std::string text = first == std::string::npos ? "" : line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
    double weight = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), weight);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
      return InvalidArgument(where + ": '" + text + "' is not a number (one weight per line, a line per row)");
    }
    NIMBUS_RETURN_IF_ERROR(CheckWeight(weight, where));
    weights.push_back(weight);
  }
  return Status::Ok();
}

Status SampleWeightReader::ExpectEnd(int64_t rows) {
  std::string line;
  NIMBUS_ASSIGN_OR_RETURN(const bool more, NextLine(line));
  if (more) return InvalidArgument(name_ + ":" + std::to_string(line_ + 1) + ": more weights than the data's " +
                                   std::to_string(rows) + " rows");
  return Status::Ok();
}

Result<std::vector<uint64_t>> SampleWeightOffsets(const TextFile& file, const std::vector<int64_t>& lines, int64_t rows) {
  // One pass that checks every weight as ReadSampleWeights does (the first bad line named
  // first), and notes where the asked-for lines begin.
  NIMBUS_ASSIGN_OR_RETURN(SampleWeightReader reader, SampleWeightReader::Open(file));
  std::vector<uint64_t> offsets;
  std::vector<double> weight;
  std::size_t want = 0;
  bool some_positive = false;
  for (int64_t line = 0; line < rows; ++line) {
    while (want < lines.size() && lines[want] == line) offsets.push_back(reader.offset()), ++want;
    Status read = reader.Read(1, weight);
    if (!read.ok() && read.message().find("the file ends before") != std::string::npos) {
      return InvalidArgument(file.store->Describe(file.key) + ": " + std::to_string(line) + " weights for the data's " +
                             std::to_string(rows) + " rows (one weight per line, a line per row)");
    }
    NIMBUS_RETURN_IF_ERROR(read);
    some_positive = some_positive || weight.front() > 0;
  }
  while (want < lines.size() && lines[want] == rows) offsets.push_back(reader.offset()), ++want;
  NIMBUS_RETURN_IF_ERROR(reader.ExpectEnd(rows));
  NIMBUS_RETURN_IF_ERROR(CheckSomeWeightCounts(some_positive, file.store->Describe(file.key)));
  return offsets;
}

Status CheckSampleWeights(std::span<const double> weights, int64_t rows, const std::string& what) {
  if (static_cast<int64_t>(weights.size()) != rows) {
    return InvalidArgument(what + ": " + std::to_string(weights.size()) + " weights for " + std::to_string(rows) +
                           " rows");
  }
  for (std::size_t r = 0; r < weights.size(); ++r) {
    NIMBUS_RETURN_IF_ERROR(CheckWeight(weights[r], what + "[" + std::to_string(r) + "]"));
  }
  return CheckSomeWeightCounts(std::any_of(weights.begin(), weights.end(), [](double w) { return w > 0; }), what);
}

}  // namespace nimbus
