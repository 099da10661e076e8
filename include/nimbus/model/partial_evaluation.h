// Evaluate's figures (evaluation.h) of rows that are held in parts, each part scored where it
// is: cross-validation's held-out rows, each worker scoring its own with its fold's model.
// The parts send sums that add up, and for the two-class AUC counts of their scores' digits,
// which the master refines round by round to the exact AUC. No part sends a row or a score.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "nimbus/core/status.h"
#include "nimbus/model/model.h"

namespace nimbus {

struct Evaluation;  // evaluation.h

// Evaluate's figures as sums over rows.
struct EvaluationSums {
  // What the figures depend on: the loss, the decision values per row (C), the softmax.
  Loss loss = Loss::kLogistic;
  int64_t classes = 1;
  bool multinomial = false;

  int64_t rows = 0;
  double correct = 0;                   // two classes (more: the confusion's diagonal)
  double log_loss = 0;                  // sum of -log p(the row's class): logistic models
  double squared_error = 0;             // regression
  double label_mean = 0, label_m2 = 0;  // regression: Welford's, merged by Chan et al.'s rule
  std::vector<int64_t> confusion;       // C > 1: C x C, rows of class t predicted p at t C + p
  // The caller's (from the data term, which knows the class and row weights): the sum of
  // c_r loss_r, the objective's data part, and for one-vs-rest each class's own problem's.
  double loss_sum = 0;
  std::vector<double> class_loss_sums;

  EvaluationSums() = default;
  EvaluationSums(const Loss& loss, int64_t classes, bool multinomial);
  // A row: its label as encoded (-1/+1, a class index, or a target) and its C decision values.
  void AddRow(double label, std::span<const double> decision_values);
  void Merge(const EvaluationSums& other);
  // The figures of `model` on the rows (its penalty in the objective); the AUC is NaN here.
  Evaluation Finish(const Model& model) const;

  // As doubles, to travel (a count is exact in a double up to 2^53).
  void AppendTo(std::vector<double>& out) const;
  // Reads what AppendTo wrote into this (whose loss, classes and kind are set), consuming it.
  Status ReadFrom(std::span<const double>& in);
};

// A double's place in the order of doubles, as an unsigned integer: a < b exactly when
// OrderKey(a) < OrderKey(b), and -0 and +0 have one key. (Not for NaN.)
uint64_t OrderKey(double score);

// The keys' digits, most significant first.
inline constexpr int kAucDigitBits = 16;
inline constexpr int kAucLevels = 64 / kAucDigitBits;

// A part's answer to one round of an AucRefinement, from its positives' and negatives' keys
// (each sorted): for each prefix (of `level` digits), the number of distinct next digits its
// keys have there, then each such digit with its positives and negatives.
void AppendDigitCounts(std::span<const uint64_t> positives, std::span<const uint64_t> negatives, int level,
                       std::span<const uint64_t> prefixes, std::vector<double>& out);

// The two-class AUC (Mann-Whitney: the share of (positive, negative) pairs in which the
// positive scores higher, ties counting one half) of scores held in parts, exact. Each round
// the parts count their keys' next digit under each open prefix; a pair whose digits differ
// is decided there, and a digit that both classes share becomes a prefix of the next round.
// At most kAucLevels rounds; a round's messages grow with the open prefixes only, which is
// where the two classes' scores come close.
class AucRefinement {
 public:
  int level() const { return level_; }
  // The prefixes (of level() digits) whose pairs are still undecided; none: done.
  const std::vector<uint64_t>& open() const { return open_; }
  bool done() const { return open_.empty(); }
  // A part's counts for open(), as AppendDigitCounts wrote them; consumes them from `in`.
  Status Add(std::span<const double>& in);
  // Decides the pairs this round's counts decide, and opens the next level's prefixes.
  void Advance();
  // NaN without rows of both classes.
  double Auc() const;

 private:
  int level_ = 0;
  std::vector<uint64_t> open_{0};
  // Per open prefix: each next digit's (positives, negatives) over the parts so far.
  std::vector<std::map<uint32_t, std::pair<int64_t, int64_t>>> counts_{1};
  // Pairs decided: the positive higher, or equal (whole numbers, exact in a long double below 2^64).
  long double higher_ = 0, ties_ = 0;
  int64_t positives_ = 0, negatives_ = 0;
};

}  // namespace nimbus
