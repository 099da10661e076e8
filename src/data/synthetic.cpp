#include "nimbus/data/synthetic.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numbers>
#include <optional>

#include "nimbus/core/file_io.h"
#include "nimbus/core/random.h"

namespace nimbus {
namespace {

// `count` distinct values in [0, n), sorted (Floyd's algorithm; `taken` is all false on entry
// and on return).
void SampleDistinct(Random& random, int64_t n, int64_t count, std::vector<bool>& taken, std::vector<int64_t>& out) {
  out.clear();
  for (int64_t j = n - count; j < n; ++j) {
    const int64_t t = static_cast<int64_t>(random.Below(static_cast<uint64_t>(j + 1)));
    const int64_t pick = taken[static_cast<std::size_t>(t)] ? j : t;
    taken[static_cast<std::size_t>(pick)] = true;
    out.push_back(pick);
  }
  for (int64_t v : out) taken[static_cast<std::size_t>(v)] = false;
  std::sort(out.begin(), out.end());
}

// Draws features j = 0..n-1 with probability proportional to (j + 1)^-exponent, by binary
// search in the cumulative weights.
class PowerLawFeatures {
 public:
  PowerLawFeatures(int64_t n, double exponent) : cumulative_(static_cast<std::size_t>(n)) {
    double total = 0;
    for (int64_t j = 0; j < n; ++j) {
      total += std::pow(static_cast<double>(j + 1), -exponent);
      cumulative_[static_cast<std::size_t>(j)] = total;
    }
  }
  double Probability(int64_t j) const {
    const auto i = static_cast<std::size_t>(j);
    return (cumulative_[i] - (i == 0 ? 0.0 : cumulative_[i - 1])) / cumulative_.back();
  }
  int64_t Draw(Random& random) const {
    const double target = random.UniformOpenClosed() * cumulative_.back();
    const auto at = std::lower_bound(cumulative_.begin(), cumulative_.end(), target);
    return std::min<int64_t>(at - cumulative_.begin(), static_cast<int64_t>(cumulative_.size()) - 1);
  }
  // `count` distinct features, sorted. Popular features repeat within a row, so draws are
  // retried; should the power law be too steep for `count` distinct ones in reasonable time,
  // the rest come uniformly from those not yet taken.
  void SampleDistinct(Random& random, int64_t count, std::vector<bool>& taken, std::vector<int64_t>& out) const {
    out.clear();
    const auto n = static_cast<int64_t>(cumulative_.size());
    for (int64_t attempts = 0; static_cast<int64_t>(out.size()) < count && attempts < 64 * count; ++attempts) {
      const int64_t j = Draw(random);
      if (taken[static_cast<std::size_t>(j)]) continue;
      taken[static_cast<std::size_t>(j)] = true;
      out.push_back(j);
    }
    while (static_cast<int64_t>(out.size()) < count) {
      const auto j = static_cast<int64_t>(random.Below(static_cast<uint64_t>(n)));
      if (taken[static_cast<std::size_t>(j)]) continue;
      taken[static_cast<std::size_t>(j)] = true;
      out.push_back(j);
    }
    for (int64_t v : out) taken[static_cast<std::size_t>(v)] = false;
    std::sort(out.begin(), out.end());
  }

 private:
  std::vector<double> cumulative_;
};

void AppendNumber(std::string& line, double value, int precision) {
  char text[40];
  const auto result = std::to_chars(text, text + sizeof text, value, std::chars_format::general, precision);
  line.append(text, result.ptr);
}

void AppendInteger(std::string& line, int64_t value) {
  char text[24];
  const auto result = std::to_chars(text, text + sizeof text, value);
  line.append(text, result.ptr);
}

}  // namespace

Status SyntheticOptions::Validate() const {
  if (rows < 1) return InvalidArgument("rows: must be at least 1, got " + std::to_string(rows));
  if (cols < 1 || cols > 2147483647) return InvalidArgument("cols: must be in [1, 2147483647], got " + std::to_string(cols));
  if (nnz_per_row < 1 || nnz_per_row > cols) {
    return InvalidArgument("nnz_per_row: must be in [1, cols=" + std::to_string(cols) + "], got " +
                           std::to_string(nnz_per_row));
  }
  if (planted_nonzeros < 0 || planted_nonzeros > cols) {
    return InvalidArgument("planted_nonzeros: must be in [0, cols], got " + std::to_string(planted_nonzeros));
  }
  if (!(margin_scale > 0) || !std::isfinite(margin_scale)) {
    return InvalidArgument("margin_scale: must be positive, got " + std::to_string(margin_scale));
  }
  if (!(noise >= 0) || !std::isfinite(noise)) {
    return InvalidArgument("noise: must be non-negative, got " + std::to_string(noise));
  }
  if (!(power_law >= 0 && power_law <= 5)) {
    return InvalidArgument("power_law: must be in [0, 5], got " + std::to_string(power_law));
  }
  return Status::Ok();
}

Result<SyntheticSummary> WriteSyntheticLibsvm(const SyntheticOptions& options, const std::string& path) {
  NIMBUS_RETURN_IF_ERROR(options.Validate());
  Random random(options.seed);
  SyntheticSummary summary;

  // The planted model: dense storage, sparse support.
  const int64_t support = options.planted_nonzeros > 0 ? options.planted_nonzeros : std::max<int64_t>(1, options.cols / 10);
  std::vector<bool> taken(static_cast<std::size_t>(options.cols), false);
  std::vector<int64_t> picks;
  std::optional<PowerLawFeatures> power_law;
  if (options.power_law > 0) power_law.emplace(options.cols, options.power_law);
  // A unit-length row of K features, each drawn with probability p_j, has a margin of
  // variance about sum_j p_j w_j^2 (K p_j chances to hold j, values of square 1/K); weights of
  // variance margin_scale^2 / (the planted features' probability mass) make its std about
  // margin_scale. Drawn uniformly the mass is support/cols. With a power law, the model is
  // planted on features drawn by the same law, as a real model weighs common words.
  double weight_std = 0;
  if (power_law) {
    power_law->SampleDistinct(random, support, taken, picks);
    double planted_mass = 0;
    for (int64_t j : picks) planted_mass += power_law->Probability(j);
    weight_std = options.margin_scale / std::sqrt(planted_mass);
  } else {
    SampleDistinct(random, options.cols, support, taken, picks);
    weight_std = options.margin_scale * std::sqrt(static_cast<double>(options.cols) / support);
  }
  std::vector<double> planted(static_cast<std::size_t>(options.cols), 0.0);
  for (int64_t j : picks) {
    const double w = weight_std * random.Gaussian();
    planted[static_cast<std::size_t>(j)] = w;
    summary.planted.emplace_back(j + 1, w);
  }

  NIMBUS_ASSIGN_OR_RETURN(AtomicFileWriter writer, AtomicFileWriter::Open(path));
  std::string line;
  std::vector<double> values;
  for (int64_t r = 0; r < options.rows; ++r) {
    if (power_law) {
      power_law->SampleDistinct(random, options.nnz_per_row, taken, picks);
    } else {
      SampleDistinct(random, options.cols, options.nnz_per_row, taken, picks);
    }
    values.resize(picks.size());
    double squared_norm = 0;
    for (double& v : values) {
      v = random.UniformOpenClosed();
      squared_norm += v * v;
    }
    const double inverse_norm = 1.0 / std::sqrt(squared_norm);
    line.clear();
    std::string features;
    double margin = 0;
    for (std::size_t k = 0; k < picks.size(); ++k) {
      // Round to the 6 digits written, so the file holds exactly the values the margin used.
      char text[40];
      const auto end = std::to_chars(text, text + sizeof text, values[k] * inverse_norm, std::chars_format::general, 6).ptr;
      double written = 0;
      std::from_chars(text, end, written);
      margin += written * planted[static_cast<std::size_t>(picks[k])];
      features += ' ';
      AppendInteger(features, picks[k] + 1);
      features += ':';
      features.append(text, end);
    }
    if (options.task == SyntheticTask::kClassification) {
      const bool positive = random.UniformOpenClosed() <= 1.0 / (1.0 + std::exp(-margin));
      line += positive ? "+1" : "-1";
      summary.positives += positive ? 1 : 0;
    } else {
      AppendNumber(line, margin + options.noise * random.Gaussian(), 8);
    }
    line += features;
    line += '\n';
    NIMBUS_RETURN_IF_ERROR(writer.Write(line));
    summary.nnz += static_cast<int64_t>(picks.size());
  }
  NIMBUS_RETURN_IF_ERROR(writer.Commit());
  summary.rows = options.rows;
  return summary;
}

}  // namespace nimbus
