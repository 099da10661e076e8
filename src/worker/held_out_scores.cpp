#include "nimbus/worker/held_out_scores.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "nimbus/core/csr.h"
#include "nimbus/problem/data_term.h"

namespace nimbus {

std::vector<double> ScoreQuery::Pack() const {
  std::vector<double> packed{static_cast<double>(model_round), static_cast<double>(level)};
  for (const auto& [fold, prefix] : prefixes) {
    packed.push_back(static_cast<double>(fold));
    packed.push_back(static_cast<double>(prefix));
  }
  return packed;
}

Result<ScoreQuery> ScoreQuery::Parse(std::span<const double> packed, int64_t folds) {
  const auto whole_below = [](double value, double limit) {
    return value >= 0 && value < limit && value == std::floor(value);
  };
  if (packed.size() < 2 || packed.size() % 2 != 0 || !whole_below(packed[0], 0x1p53) ||
      !whole_below(packed[1], kAucLevels)) {
    return InvalidArgument("a score query that is not [model round, level, (fold, prefix)...]");
  }
  ScoreQuery query;
  query.model_round = static_cast<int64_t>(packed[0]);
  query.level = static_cast<int>(packed[1]);
  const double prefixes_below = std::ldexp(1.0, kAucDigitBits * query.level);
  for (std::size_t i = 2; i < packed.size(); i += 2) {
    if (!whole_below(packed[i], static_cast<double>(folds)) || !whole_below(packed[i + 1], prefixes_below)) {
      return InvalidArgument("a score query's fold or prefix out of range");
    }
    const auto fold = static_cast<int64_t>(packed[i]);
    if (!query.prefixes.empty() && fold < query.prefixes.back().first) {
      return InvalidArgument("a score query whose folds do not ascend");
    }
    query.prefixes.emplace_back(fold, static_cast<uint64_t>(packed[i + 1]));
  }
  return query;
}

HeldOutScores::HeldOutScores(const Dataset& shard, const ProblemSpec& spec) : shard_(shard), spec_(spec) {}

std::vector<double> HeldOutScores::DecisionValues(std::span<const double> model, bool whole) const {
  const auto c_count = static_cast<std::size_t>(spec_.classes);
  std::vector<std::vector<double>> models;
  for (int64_t k = whole ? folds() : 0; k <= folds(); ++k) models.push_back(CopyOfModel(spec_, model, k));
  // Row by row, with the kernel (and so the arithmetic) that scores a model's rows anywhere.
  std::vector<double> values(static_cast<std::size_t>(shard_.rows()) * c_count);
  for (int64_t r = 0; r < shard_.rows(); ++r) {
    MultiplyRowsBlocks(shard_.matrix.RowRange(r, r + 1), spec_.classes, models[whole ? 0 : shard_.folds[r]],
                       spec_.intercept, std::span<double>(values).subspan(static_cast<std::size_t>(r) * c_count, c_count));
  }
  return values;
}

std::vector<double> HeldOutScores::RowLosses(std::span<const double> values, std::size_t* per_row) const {
  ProblemSpec one = spec_;
  one.copies = 1;
  one.copy_scales.clear();
  const DataTerm term = DataTerm::ForProblem(one, shard_.matrix, shard_.labels, shard_.weights);
  std::vector<double> losses(term.group_count());
  term.GroupLosses(values, losses);
  *per_row = shard_.rows() > 0 ? losses.size() / static_cast<std::size_t>(shard_.rows()) : 1;
  return losses;
}

void HeldOutScores::Score(std::span<const double> model) {
  const auto c_count = static_cast<std::size_t>(spec_.classes);
  sums_.assign(static_cast<std::size_t>(folds()) + 1, EvaluationSums(spec_.loss, spec_.classes, spec_.multinomial));
  if (spec_.one_vs_rest()) {
    for (EvaluationSums& sums : sums_) sums.class_loss_sums.assign(c_count, 0.0);
  }
  const bool two_classes = IsClassification(spec_.loss) && spec_.classes == 1;
  positives_.assign(two_classes ? static_cast<std::size_t>(folds()) : 0, {});
  negatives_.assign(two_classes ? static_cast<std::size_t>(folds()) : 0, {});
  AddScored(model, /*whole=*/false);
  AddScored(model, /*whole=*/true);
  for (std::vector<uint64_t>& keys : positives_) std::sort(keys.begin(), keys.end());
  for (std::vector<uint64_t>& keys : negatives_) std::sort(keys.begin(), keys.end());
}

void HeldOutScores::AddScored(std::span<const double> model, bool whole) {
  const auto c_count = static_cast<std::size_t>(spec_.classes);
  const std::vector<double> values = DecisionValues(model, whole);
  std::size_t per_row = 1;
  const std::vector<double> losses = RowLosses(values, &per_row);
  for (std::size_t r = 0; r < static_cast<std::size_t>(shard_.rows()); ++r) {
    const std::size_t k = whole ? static_cast<std::size_t>(folds()) : shard_.folds[r];
    EvaluationSums& sums = sums_[k];
    const std::span<const double> row = std::span<const double>(values).subspan(r * c_count, c_count);
    sums.AddRow(shard_.labels[r], row);
    for (std::size_t g = 0; g < per_row; ++g) {
      sums.loss_sum += losses[r * per_row + g];
      if (!sums.class_loss_sums.empty()) sums.class_loss_sums[g] += losses[r * per_row + g];
    }
    if (!whole && !positives_.empty()) (shard_.labels[r] > 0 ? positives_ : negatives_)[k].push_back(OrderKey(row[0]));
  }
}

void HeldOutScores::Answer(const ScoreQuery& query, std::vector<double>& out) const {
  if (query.level == 0) {
    for (const EvaluationSums& sums : sums_) sums.AppendTo(out);
  }
  static const std::vector<uint64_t> kNone;
  // The prefixes of each fold together (the query lists its folds in order).
  std::size_t i = 0;
  while (i < query.prefixes.size()) {
    const auto fold = static_cast<std::size_t>(query.prefixes[i].first);
    std::vector<uint64_t> prefixes;
    for (; i < query.prefixes.size() && static_cast<std::size_t>(query.prefixes[i].first) == fold; ++i) {
      prefixes.push_back(query.prefixes[i].second);
    }
    const bool held = fold < positives_.size();
    AppendDigitCounts(held ? positives_[fold] : kNone, held ? negatives_[fold] : kNone, query.level, prefixes, out);
  }
}

}  // namespace nimbus
