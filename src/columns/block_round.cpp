#include "nimbus/columns/block_round.h"

#include <cmath>
#include <string>

namespace nimbus {
namespace {

constexpr std::size_t kHeader = 12;   // the query's fields before x_block
constexpr std::size_t kStepTail = 7;  // the step's figures after A_B delta (and A_B z)

// A field that must be a whole number in [0, most].
bool Whole(double value, double most) { return value >= 0 && value <= most && std::floor(value) == value; }

// v's nonzeros appended as [count, their positions, their values]: an l1 model's x and step are
// mostly zeros, and the rows' vectors, not the block's, should make a round's bytes.
void AppendSparse(std::span<const double> v, std::vector<double>& out) {
  std::vector<double> positions, values;
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (v[k] == 0) continue;
    positions.push_back(static_cast<double>(k));
    values.push_back(v[k]);
  }
  out.push_back(static_cast<double>(positions.size()));
  out.insert(out.end(), positions.begin(), positions.end());
  out.insert(out.end(), values.begin(), values.end());
}

// A vector of `size` from AppendSparse's form at in[at...]; `at` moves past it.
Result<std::vector<double>> ReadSparse(std::span<const double> in, std::size_t& at, std::size_t size,
                                       const std::string& what) {
  if (at >= in.size() || !Whole(in[at], static_cast<double>(size))) {
    return InvalidArgument(what + ": no count of nonzeros");
  }
  const auto count = static_cast<std::size_t>(in[at++]);
  if (in.size() - at < 2 * count) return InvalidArgument(what + ": " + std::to_string(count) + " nonzeros cut short");
  std::vector<double> v(size, 0.0);
  for (std::size_t i = 0; i < count; ++i) {
    const double position = in[at + i];
    if (!Whole(position, static_cast<double>(size) - 1) || (i > 0 && !(position > in[at + i - 1]))) {
      return InvalidArgument(what + ": positions not ascending within its " + std::to_string(size) + " entries");
    }
    v[static_cast<std::size_t>(position)] = in[at + count + i];
  }
  at += 2 * count;
  return v;
}

}  // namespace

std::vector<double> EncodeBlockRound(const BlockRound& round) {
  const BlockModelOptions& m = round.model;
  std::vector<double> query{static_cast<double>(round.block.begin),
                            static_cast<double>(round.block.end),
                            round.block.intercept ? 1.0 : 0.0,
                            round.margins_only ? 1.0 : 0.0,
                            m.l1,
                            m.l2,
                            static_cast<double>(m.max_passes),
                            m.inner_ratio,
                            m.curvature_scale,
                            m.damping,
                            m.centred ? 1.0 : 0.0,
                            round.eligible.empty() ? 0.0 : 1.0};
  AppendSparse(round.x_block, query);
  for (const uint8_t e : round.eligible) query.push_back(e ? 1.0 : 0.0);
  return query;
}

Result<BlockRound> DecodeBlockRound(std::span<const double> query) {
  const auto bad = [](const std::string& what) { return InvalidArgument("a column round's query: " + what); };
  if (query.size() < kHeader) return bad(std::to_string(query.size()) + " values, fewer than its fields");
  constexpr double kMostColumn = 4294967295.0;
  if (!Whole(query[0], kMostColumn) || !Whole(query[1], kMostColumn) || query[0] > query[1]) {
    return bad("columns [" + std::to_string(query[0]) + ", " + std::to_string(query[1]) + ") are not a range");
  }
  if (!Whole(query[2], 1) || !Whole(query[3], 1) || !Whole(query[10], 1) || !Whole(query[11], 1)) {
    return bad("a flag that is not 0 or 1");
  }
  BlockRound round;
  round.block = {static_cast<uint32_t>(query[0]), static_cast<uint32_t>(query[1]), query[2] == 1};
  round.margins_only = query[3] == 1;
  round.model = {query[4], query[5], 0, query[7], query[8], query[9], query[10] == 1};
  if (!Whole(query[6], 1 << 30)) return bad("max passes not a count");
  round.model.max_passes = static_cast<int>(query[6]);
  const std::size_t size = round.block.size();
  std::size_t at = kHeader;
  Result<std::vector<double>> x = ReadSparse(query, at, size, "x on the block");
  if (!x.ok()) return bad(x.status().message());
  round.x_block = std::move(x).value();
  const std::size_t eligible = query[11] == 1 ? size : 0;
  if (query.size() - at != eligible) {
    return bad(std::to_string(query.size() - at) + " values after x for a block of " + std::to_string(size) +
               " coordinates");
  }
  for (const double e : query.subspan(at)) round.eligible.push_back(e != 0 ? 1 : 0);
  return round;
}

std::vector<double> EncodeBlockStep(const BlockStep& step) {
  std::vector<double> w;
  AppendSparse(step.delta, w);
  w.insert(w.end(), step.margin_change.begin(), step.margin_change.end());
  w.insert(w.end(), step.zero_margin_change.begin(), step.zero_margin_change.end());
  w.insert(w.end(), {step.subgradient_squared, step.subgradient_max, static_cast<double>(step.passes),
                     static_cast<double>(step.entries_read), static_cast<double>(step.active), step.intercept_change,
                     step.zero_intercept_change});
  return w;
}

Result<BlockStep> DecodeBlockStep(std::span<const double> w, std::size_t block_size, int64_t rows) {
  const auto n = static_cast<std::size_t>(rows);
  std::size_t at = 0;
  BlockStep step;
  Result<std::vector<double>> delta = ReadSparse(w, at, block_size, "a block's step");
  if (!delta.ok()) return delta.status();
  step.delta = std::move(delta).value();
  const std::size_t after = w.size() - at;
  if (after != n + kStepTail && after != 2 * n + kStepTail) {
    return InvalidArgument("a block's step: " + std::to_string(after) + " values after its delta, expected " +
                           std::to_string(n + kStepTail) + " or " + std::to_string(2 * n + kStepTail) +
                           " (a margin change per row, that of its zeroed weights, and its figures)");
  }
  const auto first = w.begin() + static_cast<std::ptrdiff_t>(at);
  step.margin_change.assign(first, first + static_cast<std::ptrdiff_t>(n));
  if (after == 2 * n + kStepTail) {
    step.zero_margin_change.assign(first + static_cast<std::ptrdiff_t>(n), first + static_cast<std::ptrdiff_t>(2 * n));
  }
  const std::span<const double> tail = w.subspan(w.size() - kStepTail);
  step.subgradient_squared = tail[0];
  step.subgradient_max = tail[1];
  step.passes = static_cast<int>(tail[2]);
  step.entries_read = static_cast<int64_t>(tail[3]);
  step.active = static_cast<std::size_t>(tail[4]);
  step.intercept_change = tail[5];
  step.zero_intercept_change = tail[6];
  return step;
}

}  // namespace nimbus
