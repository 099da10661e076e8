#include "nimbus/columns/block_round.h"

#include <cmath>
#include <string>

namespace nimbus {
namespace {

constexpr std::size_t kHeader = 11;   // the query's fields before x_block
constexpr std::size_t kStepTail = 5;  // the step's figures after A_B delta

// A field that must be a whole number in [0, most].
bool Whole(double value, double most) { return value >= 0 && value <= most && std::floor(value) == value; }

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
                            round.eligible.empty() ? 0.0 : 1.0};
  query.insert(query.end(), round.x_block.begin(), round.x_block.end());
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
  if (!Whole(query[2], 1) || !Whole(query[3], 1) || !Whole(query[10], 1)) return bad("a flag that is not 0 or 1");
  BlockRound round;
  round.block = {static_cast<uint32_t>(query[0]), static_cast<uint32_t>(query[1]), query[2] == 1};
  round.margins_only = query[3] == 1;
  round.model = {query[4], query[5], 0, query[7], query[8], query[9]};
  if (!Whole(query[6], 1 << 30)) return bad("max passes not a count");
  round.model.max_passes = static_cast<int>(query[6]);
  const bool eligible = query[10] == 1;
  const std::size_t size = round.block.size();
  if (query.size() != kHeader + size * (eligible ? 2 : 1)) {
    return bad(std::to_string(query.size()) + " values for a block of " + std::to_string(size) + " coordinates");
  }
  round.x_block.assign(query.begin() + kHeader, query.begin() + static_cast<std::ptrdiff_t>(kHeader + size));
  if (eligible) {
    for (const double e : query.subspan(kHeader + size)) round.eligible.push_back(e != 0 ? 1 : 0);
  }
  return round;
}

std::vector<double> EncodeBlockStep(const BlockStep& step) {
  std::vector<double> w = step.delta;
  w.insert(w.end(), step.margin_change.begin(), step.margin_change.end());
  w.insert(w.end(), {step.subgradient_squared, step.subgradient_max, static_cast<double>(step.passes),
                     static_cast<double>(step.entries_read), static_cast<double>(step.active)});
  return w;
}

Result<BlockStep> DecodeBlockStep(std::span<const double> w, std::size_t block_size, int64_t rows) {
  const std::size_t n = static_cast<std::size_t>(rows);
  if (w.size() != block_size + n + kStepTail) {
    return InvalidArgument("a block's step of " + std::to_string(w.size()) + " values, expected " +
                           std::to_string(block_size + n + kStepTail));
  }
  BlockStep step;
  step.delta.assign(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(block_size));
  step.margin_change.assign(w.begin() + static_cast<std::ptrdiff_t>(block_size),
                            w.begin() + static_cast<std::ptrdiff_t>(block_size + n));
  const std::span<const double> tail = w.subspan(block_size + n);
  step.subgradient_squared = tail[0];
  step.subgradient_max = tail[1];
  step.passes = static_cast<int>(tail[2]);
  step.entries_read = static_cast<int64_t>(tail[3]);
  step.active = static_cast<std::size_t>(tail[4]);
  return step;
}

}  // namespace nimbus
