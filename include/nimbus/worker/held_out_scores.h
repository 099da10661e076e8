// Cross-validation's scoring where the rows are: a worker scores each of its rows with the
// model of the fold the row is held out in, and answers score rounds (RoundKind::kScore) with
// each fold's figures as sums (model/partial_evaluation.h) and, for two classes, the counts of
// its scores' digits that the master's AucRefinement asks for. No row and no score leaves the
// worker.
//
//   query (RoundRequest::query)  [model round, level, fold, prefix, fold, prefix, ...]
//   answer (WorkerReply::w)      at level 0 each fold's EvaluationSums (AppendTo) and the
//                                whole's (every row by the model on all the data: its
//                                objective), then for each (fold, prefix) its digit counts
//                                (AppendDigitCounts)
//
// The model round names the model (z) the question is about: a worker scores a model once
// and answers the AUC's later rounds from what it kept; a replacement that missed the first
// round scores the z that every round carries.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "nimbus/core/status.h"
#include "nimbus/data/dataset.h"
#include "nimbus/model/partial_evaluation.h"
#include "nimbus/problem/problem.h"

namespace nimbus {

struct ScoreQuery {
  int64_t model_round = 0;
  int level = 0;  // of the AUC's refinement: 0 asks for the sums too
  std::vector<std::pair<int64_t, uint64_t>> prefixes;  // (fold, prefix of `level` digits), folds ascending

  std::vector<double> Pack() const;
  // Checked against the problem's `folds` (the query comes off the wire).
  static Result<ScoreQuery> Parse(std::span<const double> packed, int64_t folds);
};

class HeldOutScores {
 public:
  // `shard` (with its rows' folds, a view that shares its arrays); `spec` is the worker's own, whose
  // copies are the folds' problems and the whole's.
  HeldOutScores(const Dataset& shard, const ProblemSpec& spec);
  int64_t folds() const { return spec_.copies - 1; }
  // Scores every row with its fold's copy of `model` (in the worker's columns), and with the
  // copy on all the data.
  void Score(std::span<const double> model);
  // The answer to `query` about the last model scored.
  void Answer(const ScoreQuery& query, std::vector<double>& out) const;

 private:
  // Each row's decision values (C per row) by its fold's model, or by the whole's, into the
  // sums of its fold (or the whole's) with its loss.
  void AddScored(std::span<const double> model, bool whole);
  std::vector<double> DecisionValues(std::span<const double> model, bool whole) const;
  // Each row's c_r loss_r at those values, the copy-less problem's terms (C per row for
  // one-vs-rest, else one).
  std::vector<double> RowLosses(std::span<const double> values, std::size_t* per_row) const;

  Dataset shard_;
  ProblemSpec spec_;
  std::vector<EvaluationSums> sums_;                     // per fold, then the whole's
  std::vector<std::vector<uint64_t>> positives_, negatives_;  // per fold, two classes: sorted score keys
};

}  // namespace nimbus
