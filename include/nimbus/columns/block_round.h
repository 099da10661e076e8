// A block's round as it travels to the worker that holds the block's columns and back
// (RoundKind::kColumnStep, wire/messages.h): the master's question in RoundRequest::query (the
// rows' derivatives in z), the worker's answer in WorkerReply::w. Both are plain doubles, so
// every runtime carries them as it carries a score round's figures.
//
// A worker keeps nothing between these rounds: x on its block comes with each, so a worker
// that replaces a lost one answers the round exactly as the lost one would have.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "nimbus/columns/column_block.h"
#include "nimbus/core/status.h"

namespace nimbus {

struct BlockRound {
  BlockRange block;
  // A step of the block's model at x (MinimizeBlockModel), or the margins A_B v of v = x_block.
  bool margins_only = false;
  BlockModelOptions model;
  std::vector<double> x_block;    // x (or v) on the block's coordinates
  std::vector<uint8_t> eligible;  // the strong rules' (empty: every coordinate)
};

// query = [begin, end, intercept, margins only, l1, l2, max passes, inner ratio, curvature scale,
//          damping, centred, eligible given, x_block's nonzeros: their count k, k positions, k values,
//          then eligible (one per coordinate) if given]
// (An l1 model's x and step are mostly zeros: their nonzeros alone travel, so that the rows'
// vectors, not the block's, make a round's bytes.)
std::vector<double> EncodeBlockRound(const BlockRound& round);
// Refuses a query that is not what EncodeBlockRound writes.
Result<BlockRound> DecodeBlockRound(std::span<const double> query);

// w = [delta's nonzeros (count k, k positions, k values), A_B delta (one per row), subgradient
//      squared, subgradient max, passes, entries read, active, intercept change]
std::vector<double> EncodeBlockStep(const BlockStep& step);
Result<BlockStep> DecodeBlockStep(std::span<const double> w, std::size_t block_size, int64_t rows);

}  // namespace nimbus
