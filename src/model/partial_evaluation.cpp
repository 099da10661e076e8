#include "nimbus/model/partial_evaluation.h"

#include "nimbus/model/evaluation.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

namespace nimbus {

EvaluationSums::EvaluationSums(const Loss& loss_of, int64_t classes_of, bool multinomial_of)
    : loss(loss_of), classes(classes_of), multinomial(multinomial_of) {
  if (IsClassification(loss) && classes > 1) confusion.assign(static_cast<std::size_t>(classes * classes), 0);
}

void EvaluationSums::AddRow(double label, std::span<const double> row) {
  ++rows;
  if (!IsClassification(loss)) {
    squared_error += (row[0] - label) * (row[0] - label);
    const double delta = label - label_mean;
    label_mean += delta / static_cast<double>(rows);
    label_m2 += delta * (label - label_mean);
    return;
  }
  if (classes == 1) {
    correct += (row[0] > 0 ? 1.0 : -1.0) == label ? 1 : 0;
    log_loss += LogOnePlusExpMinus(label * row[0]);
    return;
  }
  const std::size_t truth = ClassIndex(label);
  const auto predicted = static_cast<std::size_t>(std::max_element(row.begin(), row.end()) - row.begin());
  ++confusion[truth * static_cast<std::size_t>(classes) + predicted];
  if (loss == Loss::kLogistic) {
    log_loss -= std::log(std::max(ClassProbabilities(classes, multinomial, row)[truth], 1e-300));
  }
}

void EvaluationSums::Merge(const EvaluationSums& other) {
  // Chan, Golub and LeVeque's pairwise rule for the labels' mean and squared deviations.
  const auto n = static_cast<double>(rows + other.rows);
  if (n > 0) {
    const double delta = other.label_mean - label_mean;
    label_m2 += other.label_m2 + delta * delta * static_cast<double>(rows) * static_cast<double>(other.rows) / n;
    label_mean += delta * static_cast<double>(other.rows) / n;
  }
  rows += other.rows;
  correct += other.correct;
  log_loss += other.log_loss;
  squared_error += other.squared_error;
  loss_sum += other.loss_sum;
  for (std::size_t k = 0; k < confusion.size() && k < other.confusion.size(); ++k) confusion[k] += other.confusion[k];
  class_loss_sums.resize(std::max(class_loss_sums.size(), other.class_loss_sums.size()), 0.0);
  for (std::size_t c = 0; c < other.class_loss_sums.size(); ++c) class_loss_sums[c] += other.class_loss_sums[c];
}

namespace {

// Precision and recall per class, and the accuracy, from the confusion matrix.
void ClassFigures(const EvaluationSums& sums, Evaluation* e) {
  const auto c_count = static_cast<std::size_t>(sums.classes);
  e->confusion.assign(c_count, std::vector<int64_t>(c_count, 0));
  for (std::size_t t = 0; t < c_count; ++t) {
    for (std::size_t p = 0; p < c_count; ++p) e->confusion[t][p] = sums.confusion[t * c_count + p];
  }
  double correct = 0;
  for (std::size_t c = 0; c < c_count; ++c) {
    int64_t predicted = 0, present = 0;
    for (std::size_t other = 0; other < c_count; ++other) {
      predicted += e->confusion[other][c];
      present += e->confusion[c][other];
    }
    const auto hits = static_cast<double>(e->confusion[c][c]);
    correct += hits;
    e->precision.push_back(predicted > 0 ? hits / static_cast<double>(predicted) : std::nan(""));
    e->recall.push_back(present > 0 ? hits / static_cast<double>(present) : std::nan(""));
  }
  e->accuracy = correct / static_cast<double>(sums.rows);
}

}  // namespace

Evaluation EvaluationSums::Finish(const Model& model) const {
  Evaluation e;
  e.rows = rows;
  e.classification = IsClassification(loss);
  const auto n = static_cast<double>(rows);
  if (!e.classification) {
    e.mean_squared_error = squared_error / n;
    e.r_squared = label_m2 > 0 ? 1.0 - squared_error / label_m2 : std::nan("");
  } else {
    e.auc = std::nan("");  // the caller's, for two classes
    if (classes > 1) {
      e.class_values = model.labels.ClassValues();
      ClassFigures(*this, &e);
    } else {
      e.accuracy = correct / n;
    }
    e.log_loss = loss == Loss::kLogistic ? log_loss / n : std::nan("");
  }
  e.objective = loss_sum / n + model.Penalty();
  if (!class_loss_sums.empty()) {
    // Each class's F: its own problem's loss over N, and the penalty on its weights.
    const auto c_count = static_cast<std::size_t>(model.classes);
    const auto held = static_cast<std::size_t>(model.held());
    e.class_objectives.assign(c_count, 0.0);
    for (std::size_t c = 0; c < c_count; ++c) {
      e.class_objectives[c] = class_loss_sums[c] / n;
      for (std::size_t k = 0; k < held; ++k) {
        const double w = model.weights[k * c_count + c];
        e.class_objectives[c] += model.regularizer.l1 * std::abs(w) + 0.5 * model.regularizer.l2 * w * w;
      }
    }
  }
  return e;
}

void EvaluationSums::AppendTo(std::vector<double>& out) const {
  out.insert(out.end(), {static_cast<double>(rows), correct, log_loss, squared_error, label_mean, label_m2, loss_sum,
                         static_cast<double>(class_loss_sums.size())});
  out.insert(out.end(), class_loss_sums.begin(), class_loss_sums.end());
  for (const int64_t count : confusion) out.push_back(static_cast<double>(count));
}

namespace {

// A count as a double carries it: a whole number in [0, 2^53].
bool IsCount(double value) { return value >= 0 && value <= 0x1p53 && value == std::floor(value); }

}  // namespace

Status EvaluationSums::ReadFrom(std::span<const double>& in) {
  constexpr std::size_t kFixed = 8;
  if (in.size() < kFixed || !IsCount(in[0]) || !IsCount(in[7])) return InvalidArgument("malformed evaluation sums");
  const auto class_losses = static_cast<std::size_t>(in[7]);
  if (class_losses != 0 && class_losses != static_cast<std::size_t>(classes)) {
    return InvalidArgument("evaluation sums of " + std::to_string(class_losses) + " classes, expected " +
                           std::to_string(classes));
  }
  if (in.size() < kFixed + class_losses + confusion.size()) return InvalidArgument("evaluation sums cut short");
  rows = static_cast<int64_t>(in[0]);
  correct = in[1];
  log_loss = in[2];
  squared_error = in[3];
  label_mean = in[4];
  label_m2 = in[5];
  loss_sum = in[6];
  class_loss_sums.assign(in.begin() + kFixed, in.begin() + static_cast<std::ptrdiff_t>(kFixed + class_losses));
  in = in.subspan(kFixed + class_losses);
  for (int64_t& count : confusion) {
    if (!IsCount(in[0])) return InvalidArgument("evaluation sums: a confusion count that is not a count");
    count = static_cast<int64_t>(in[0]);
    in = in.subspan(1);
  }
  return Status::Ok();
}

uint64_t OrderKey(double score) {
  const uint64_t bits = std::bit_cast<uint64_t>(score == 0 ? 0.0 : score);
  // Negative doubles order backwards as integers: flip them all; positive ones go above them.
  return (bits >> 63) != 0 ? ~bits : bits | (uint64_t{1} << 63);
}

void AppendDigitCounts(std::span<const uint64_t> positives, std::span<const uint64_t> negatives, int level,
                       std::span<const uint64_t> prefixes, std::vector<double>& out) {
  const int known = kAucDigitBits * level;
  const int shift = 64 - known - kAucDigitBits;
  const uint64_t below = known == 0 ? ~uint64_t{0} : (uint64_t{1} << (64 - known)) - 1;
  for (const uint64_t prefix : prefixes) {
    const uint64_t low = known == 0 ? 0 : prefix << (64 - known), high = low | below;
    auto range = [&](std::span<const uint64_t> keys) {
      return std::span<const uint64_t>(std::lower_bound(keys.begin(), keys.end(), low),
                                       std::upper_bound(keys.begin(), keys.end(), high));
    };
    const std::span<const uint64_t> p = range(positives), n = range(negatives);
    const std::size_t count_at = out.size();
    out.push_back(0);
    std::size_t i = 0, j = 0;
    while (i < p.size() || j < n.size()) {
      const uint64_t digit = std::min(i < p.size() ? p[i] >> shift : UINT64_MAX, j < n.size() ? n[j] >> shift : UINT64_MAX);
      std::size_t pi = i, nj = j;
      while (i < p.size() && p[i] >> shift == digit) ++i;
      while (j < n.size() && n[j] >> shift == digit) ++j;
      out.insert(out.end(), {static_cast<double>(digit & 0xffff), static_cast<double>(i - pi), static_cast<double>(j - nj)});
      out[count_at] += 1;
    }
  }
}

Status AucRefinement::Add(std::span<const double>& in) {
  for (std::size_t o = 0; o < open_.size(); ++o) {
    if (in.empty() || !IsCount(in[0]) || in.size() < 1 + 3 * static_cast<std::size_t>(in[0])) {
      return InvalidArgument("the AUC's digit counts are cut short");
    }
    const auto digits = static_cast<std::size_t>(in[0]);
    for (std::size_t d = 0; d < digits; ++d) {
      const double digit = in[1 + 3 * d], positives = in[2 + 3 * d], negatives = in[3 + 3 * d];
      if (!IsCount(digit) || digit > 0xffff || !IsCount(positives) || !IsCount(negatives)) {
        return InvalidArgument("the AUC's digit counts: not a digit and two counts");
      }
      auto& [p, n] = counts_[o][static_cast<uint32_t>(digit)];
      p += static_cast<int64_t>(positives);
      n += static_cast<int64_t>(negatives);
    }
    in = in.subspan(1 + 3 * digits);
  }
  return Status::Ok();
}

void AucRefinement::Advance() {
  std::vector<uint64_t> next;
  const bool last = level_ + 1 == kAucLevels;
  for (std::size_t o = 0; o < open_.size(); ++o) {
    long double negatives_below = 0;
    for (const auto& [digit, count] : counts_[o]) {
      const auto [p, n] = count;
      higher_ += static_cast<long double>(p) * negatives_below;
      negatives_below += static_cast<long double>(n);
      if (level_ == 0) {
        positives_ += p;
        negatives_ += n;
      }
      if (p == 0 || n == 0) continue;
      // Both classes share this digit: equal keys at the last one, else a prefix to refine.
      if (last) {
        ties_ += static_cast<long double>(p) * static_cast<long double>(n);
      } else {
        next.push_back(open_[o] << kAucDigitBits | digit);
      }
    }
  }
  ++level_;
  open_ = std::move(next);
  counts_.assign(open_.size(), {});
}

double AucRefinement::Auc() const {
  if (positives_ == 0 || negatives_ == 0) return std::nan("");
  const long double pairs = static_cast<long double>(positives_) * static_cast<long double>(negatives_);
  return static_cast<double>((higher_ + 0.5L * ties_) / pairs);
}

}  // namespace nimbus
