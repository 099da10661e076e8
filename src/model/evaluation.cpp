#include "nimbus/model/evaluation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "nimbus/core/json_text.h"
#include "nimbus/data/feature_map.h"
#include "nimbus/problem/data_term.h"

namespace nimbus {

std::vector<double> DecisionValues(const Model& model, const Dataset& data) {
  const std::vector<double> w = model.ColumnWeights(data);
  std::vector<double> scores(static_cast<std::size_t>(data.rows() * model.classes));
  MultiplyRowsBlocks(data.matrix, model.classes, w, model.intercept, scores);
  return scores;
}

std::vector<double> ClassProbabilities(const Model& model, std::span<const double> decision_values) {
  return ClassProbabilities(model.classes, model.multinomial, decision_values);
}

std::vector<double> ClassProbabilities(int64_t classes, bool multinomial, std::span<const double> decision_values) {
  if (classes == 1) return {1.0 / (1.0 + std::exp(-decision_values[0]))};
  std::vector<double> p(decision_values.size());
  if (multinomial) {
    const double top = *std::max_element(decision_values.begin(), decision_values.end());
    for (std::size_t c = 0; c < p.size(); ++c) p[c] = std::exp(decision_values[c] - top);
  } else {
    for (std::size_t c = 0; c < p.size(); ++c) p[c] = 1.0 / (1.0 + std::exp(-decision_values[c]));
  }
  const double sum = std::accumulate(p.begin(), p.end(), 0.0);
  for (double& value : p) value /= sum;
  return p;
}

double PredictedLabel(const Model& model, std::span<const double> decision_values) {
  if (model.classes == 1) return decision_values[0] > 0 ? 1.0 : -1.0;
  const auto best = static_cast<double>(std::max_element(decision_values.begin(), decision_values.end()) -
                                        decision_values.begin());
  // A two-class softmax model's classes are -1 and +1.
  return model.labels.multiclass() ? best : (best > 0 ? 1.0 : -1.0);
}

double AreaUnderRoc(std::span<const double> scores, std::span<const double> labels) {
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
  // Mann-Whitney: the positives' rank sum, with tied scores sharing their mean rank.
  double positive_rank_sum = 0;
  double positives = 0;
  std::size_t i = 0;
  while (i < order.size()) {
    std::size_t j = i;
    while (j < order.size() && scores[order[j]] == scores[order[i]]) ++j;
    const double mean_rank = 0.5 * static_cast<double>(i + 1 + j);  // ranks i+1 .. j
    for (std::size_t k = i; k < j; ++k) {
      if (labels[order[k]] > 0) {
        positive_rank_sum += mean_rank;
        positives += 1;
      }
    }
    i = j;
  }
  const double negatives = static_cast<double>(scores.size()) - positives;
  if (positives == 0 || negatives == 0) return std::nan("");
  return (positive_rank_sum - positives * (positives + 1) / 2) / (positives * negatives);
}

namespace {

// The rows' figures into `sums`, from their C decision values each (`scores`): per row, and the
// data term's loss sums over them (which know the class and row weights).
void AddScoredRows(const Model& model, const CsrView& rows, std::span<const double> labels,
                   std::span<const double> weights, std::span<const double> class_weights,
                   std::span<const double> scores, EvaluationSums& sums) {
  const auto c_count = static_cast<std::size_t>(model.classes);
  for (std::size_t r = 0; r < labels.size(); ++r) sums.AddRow(labels[r], scores.subspan(r * c_count, c_count));
  ProblemSpec spec = model.Spec(rows.rows, rows.cols);
  spec.class_weights.assign(class_weights.begin(), class_weights.end());
  const DataTerm term = DataTerm::ForProblem(spec, rows, labels, weights);
  sums.loss_sum += term.LossSum(scores);
  if (!spec.one_vs_rest()) return;
  const std::vector<double> class_sums = term.ClassLossSums(scores);
  sums.class_loss_sums.resize(class_sums.size(), 0.0);
  for (std::size_t c = 0; c < class_sums.size(); ++c) sums.class_loss_sums[c] += class_sums[c];
}

}  // namespace

Evaluation Evaluate(const Model& model, const Dataset& data, std::span<const double> class_weights) {
  const std::vector<double> scores = DecisionValues(model, data);
  EvaluationSums sums(model.loss, model.classes, model.multinomial);
  AddScoredRows(model, data.matrix, data.labels, data.weights, class_weights, scores, sums);
  Evaluation e = sums.Finish(model);
  if (e.classification && model.classes == 1) e.auc = AreaUnderRoc(scores, data.labels);
  return e;
}

std::string Evaluation::Report() const {
  char text[512];
  if (!classification) {
    std::snprintf(text, sizeof text, "rows %lld\nmse %.8g\nr2 %.6f\nobjective %.12g\n", static_cast<long long>(rows),
                  mean_squared_error, r_squared, objective);
    return text;
  }
  std::snprintf(text, sizeof text, "rows %lld\naccuracy %.6f\nlog_loss %.8g\n", static_cast<long long>(rows), accuracy,
                log_loss);
  std::string report = text;
  if (confusion.empty()) {
    std::snprintf(text, sizeof text, "auc %.6f\n", auc);
    report += text;
  }
  std::snprintf(text, sizeof text, "objective %.12g\n", objective);
  report += text;
  if (confusion.empty()) return report;
  const bool per_class_objective = !class_objectives.empty();
  report += std::string("class      precision  recall     ") + (per_class_objective ? "objective          " : "") +
            "rows  predicted as (one column per class)\n";
  for (std::size_t c = 0; c < confusion.size(); ++c) {
    std::snprintf(text, sizeof text, "%-10s %-10.6f %-10.6f ", FormatLabel(class_values[c]).c_str(), precision[c], recall[c]);
    report += text;
    if (per_class_objective) {
      std::snprintf(text, sizeof text, "%-18.12g ", class_objectives[c]);
      report += text;
    }
    report += std::to_string(std::accumulate(confusion[c].begin(), confusion[c].end(), int64_t{0}));
    for (const int64_t count : confusion[c]) report += " " + std::to_string(count);
    report += "\n";
  }
  return report;
}

std::string Evaluation::ToJson() const {
  OrderedJson json = {{"rows", rows}};
  if (!classification) {
    json["mse"] = mean_squared_error;
    json["r2"] = r_squared;
    json["objective"] = objective;
    return JsonText(json);
  }
  json["accuracy"] = accuracy;
  json["log_loss"] = log_loss;
  if (confusion.empty()) json["auc"] = auc;
  json["objective"] = objective;
  if (confusion.empty()) return JsonText(json);
  json["classes"] = class_values;
  json["precision"] = precision;
  json["recall"] = recall;
  if (!class_objectives.empty()) json["class_objectives"] = class_objectives;
  json["confusion"] = confusion;
  return JsonText(json);
}

// ---- Streaming ----

RowScorer::RowScorer(const Model& model) : model_(model) {
  if (!model.features.empty()) held_ = std::make_shared<const OccurringColumns>(OccurringColumns::FromSorted(model.features, model.cols));
}

void RowScorer::Score(const CsrView& rows, std::vector<double>& scores) const {
  const auto c_count = static_cast<std::size_t>(model_.classes);
  scores.assign(static_cast<std::size_t>(rows.rows) * c_count, 0.0);
  const int64_t held = model_.held();
  for (int64_t r = 0; r < rows.rows; ++r) {
    double* row = scores.data() + static_cast<std::size_t>(r) * c_count;
    for (std::size_t c = 0; c < c_count; ++c) row[c] = model_.bias(static_cast<int64_t>(c));
    for (int64_t k = rows.row_ptr[r]; k < rows.row_ptr[r + 1]; ++k) {
      const auto feature = static_cast<int64_t>(rows.col_idx[k]);
      int64_t at = -1;  // the feature's place among the model's, if it has one
      if (held_) {
        if (feature < model_.cols) at = held_->Find(static_cast<uint32_t>(feature));
      } else if (feature < held) {
        at = feature;
      }
      if (at < 0) continue;
      const double* w = model_.weights.data() + static_cast<std::size_t>(at) * c_count;
      for (std::size_t c = 0; c < c_count; ++c) row[c] += rows.values[k] * w[c];
    }
  }
}

// The two-class AUC's scores and labels: sorted runs of at most the budget, spilled to files,
// merged at the end into the Mann-Whitney rank sum (ties sharing their mean rank), as
// AreaUnderRoc computes it in memory.
class StreamingEvaluation::ScoreRuns {
 public:
  ScoreRuns(std::size_t budget, std::string scratch) : budget_(std::max<std::size_t>(budget, 1)), scratch_(std::move(scratch)) {
    scores_.reserve(std::min<std::size_t>(budget_, std::size_t{1} << 16));
  }
  ~ScoreRuns() {
    for (const std::string& run : runs_) std::remove(run.c_str());
  }

  Status Add(double score, bool positive) {
    // Grown to the budget at once rather than by doubling past it (a copy of it all).
    if (scores_.size() == scores_.capacity() && scores_.size() >= (std::size_t{1} << 16)) scores_.reserve(budget_);
    scores_.push_back({score, positive ? 1.0 : 0.0});
    return scores_.size() >= budget_ ? Spill() : Status::Ok();
  }

  Result<double> Finish() {
    if (runs_.empty()) {
      std::sort(scores_.begin(), scores_.end());
      std::size_t at = 0;
      return Combine([&](Entry* next) {
        if (at == scores_.size()) return false;
        *next = scores_[at++];
        return true;
      });
    }
    NIMBUS_RETURN_IF_ERROR(Spill());
    // Merged kWays at a time (file handles and buffers stay bounded), then the last merge
    // feeds the rank sum.
    while (runs_.size() > kWays) {
      std::vector<std::string> group(runs_.begin(), runs_.begin() + kWays);
      runs_.erase(runs_.begin(), runs_.begin() + kWays);
      NIMBUS_ASSIGN_OR_RETURN(std::string merged, NewRun());
      std::FILE* out = std::fopen(merged.c_str(), "wb");
      if (out == nullptr) return ErrnoError("cannot write " + merged, errno);
      std::vector<Entry> buffer;
      bool written = true;
      Status status = Merge(group, [&](const Entry& entry) {
        buffer.push_back(entry);
        if (buffer.size() == std::size_t{1} << 14) {
          written = written && std::fwrite(buffer.data(), sizeof(Entry), buffer.size(), out) == buffer.size();
          buffer.clear();
        }
      });
      written = written && std::fwrite(buffer.data(), sizeof(Entry), buffer.size(), out) == buffer.size();
      if (std::fclose(out) != 0 || !written) status = IoError("cannot write " + merged);
      for (const std::string& run : group) std::remove(run.c_str());
      runs_.push_back(merged);
      NIMBUS_RETURN_IF_ERROR(status);
    }
    NIMBUS_ASSIGN_OR_RETURN(MergeCursor cursor, MergeCursor::Open(runs_, budget_));
    return Combine([&](Entry* next) { return cursor.Next(next); });
  }

 private:
  using Entry = std::pair<double, double>;  // (score, 1 for a positive)
  static constexpr std::size_t kWays = 64;

  // The entries of sorted runs in ascending order: a heap of their heads, a buffer of each
  // (the budget shared among them).
  class MergeCursor {
   public:
    static Result<MergeCursor> Open(const std::vector<std::string>& runs, std::size_t budget) {
      MergeCursor cursor;
      const std::size_t each = std::max<std::size_t>(256, budget / std::max<std::size_t>(runs.size(), 1));
      for (const std::string& run : runs) {
        std::FILE* file = std::fopen(run.c_str(), "rb");
        if (file == nullptr) return ErrnoError("cannot read back " + run, errno);
        cursor.readers_.push_back({std::shared_ptr<std::FILE>(file, std::fclose), std::vector<Entry>(each)});
      }
      for (std::size_t i = 0; i < cursor.readers_.size(); ++i) {
        Entry entry;
        if (cursor.readers_[i].Next(&entry)) cursor.heads_.emplace_back(entry, i);
      }
      std::make_heap(cursor.heads_.begin(), cursor.heads_.end(), Later);
      return cursor;
    }
    bool Next(Entry* next) {
      if (heads_.empty()) return false;
      std::pop_heap(heads_.begin(), heads_.end(), Later);
      *next = heads_.back().first;
      const std::size_t from = heads_.back().second;
      heads_.pop_back();
      Entry entry;
      if (readers_[from].Next(&entry)) {
        heads_.emplace_back(entry, from);
        std::push_heap(heads_.begin(), heads_.end(), Later);
      }
      return true;
    }

   private:
    struct Reader {
      std::shared_ptr<std::FILE> file;
      std::vector<Entry> buffer;
      std::size_t at = 0, size = 0;
      bool Next(Entry* entry) {
        if (at == size) {
          size = std::fread(buffer.data(), sizeof(Entry), buffer.size(), file.get());
          at = 0;
          if (size == 0) return false;
        }
        *entry = buffer[at++];
        return true;
      }
    };
    using Head = std::pair<Entry, std::size_t>;
    static bool Later(const Head& a, const Head& b) { return b.first < a.first; }
    std::vector<Reader> readers_;
    std::vector<Head> heads_;
  };

  template <typename Consume>
  Status Merge(const std::vector<std::string>& runs, Consume&& consume) {
    NIMBUS_ASSIGN_OR_RETURN(MergeCursor cursor, MergeCursor::Open(runs, budget_));
    Entry entry;
    while (cursor.Next(&entry)) consume(entry);
    return Status::Ok();
  }

  Result<std::string> NewRun() {
    if (scratch_.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      scratch_ = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    }
    std::string path = scratch_ + "/nimbus-auc-XXXXXX";
    const int fd = ::mkstemp(path.data());
    if (fd < 0) return ErrnoError("cannot make a file for the AUC's scores in " + scratch_, errno);
    ::close(fd);
    return path;
  }

  Status Spill() {
    if (scores_.empty()) return Status::Ok();
    std::sort(scores_.begin(), scores_.end());
    NIMBUS_ASSIGN_OR_RETURN(const std::string path, NewRun());
    runs_.push_back(path);
    std::FILE* file = std::fopen(path.c_str(), "wb");
    const bool written = file != nullptr && std::fwrite(scores_.data(), sizeof(Entry), scores_.size(), file) == scores_.size();
    if (file == nullptr || std::fclose(file) != 0 || !written) return IoError("cannot write " + path);
    scores_.clear();
    return Status::Ok();
  }

  // The AUC of the entries in ascending order of score.
  template <typename NextEntry>
  static double Combine(NextEntry&& next_entry) {
    long double positive_rank_sum = 0, positives = 0, count = 0;
    Entry entry;
    bool have = next_entry(&entry);
    while (have) {
      const double score = entry.first;
      long double group = 0, group_positives = 0;
      while (have && entry.first == score) {
        group += 1;
        group_positives += entry.second;
        have = next_entry(&entry);
      }
      positive_rank_sum += group_positives * (count + (group + 1) / 2);  // ranks count+1 .. count+group
      positives += group_positives;
      count += group;
    }
    const long double negatives = count - positives;
    if (positives == 0 || negatives == 0) return std::nan("");
    return static_cast<double>((positive_rank_sum - positives * (positives + 1) / 2) / (positives * negatives));
  }

  std::size_t budget_;
  std::string scratch_;
  std::vector<Entry> scores_;
  std::vector<std::string> runs_;
};

StreamingEvaluation::StreamingEvaluation(const Model& model, std::vector<double> class_weights,
                                         std::size_t auc_budget, std::string scratch_directory)
    : model_(model), class_weights_(std::move(class_weights)), scorer_(model),
      sums_(model.loss, model.classes, model.multinomial) {
  if (IsClassification(model.loss) && model.classes == 1) {
    auc_ = std::make_unique<ScoreRuns>(auc_budget, std::move(scratch_directory));
  }
}

StreamingEvaluation::~StreamingEvaluation() = default;

Status StreamingEvaluation::Add(const CsrView& rows, std::span<const double> labels, std::span<const double> weights) {
  scorer_.Score(rows, scores_);
  AddScoredRows(model_, rows, labels, weights, class_weights_, scores_, sums_);
  if (!auc_) return Status::Ok();
  for (std::size_t r = 0; r < labels.size(); ++r) NIMBUS_RETURN_IF_ERROR(auc_->Add(scores_[r], labels[r] > 0));
  return Status::Ok();
}

Result<Evaluation> StreamingEvaluation::Finish() {
  Evaluation e = sums_.Finish(model_);
  if (auc_) {
    NIMBUS_ASSIGN_OR_RETURN(e.auc, auc_->Finish());
  }
  return e;
}

}  // namespace nimbus
