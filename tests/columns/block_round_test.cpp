#include "nimbus/columns/block_round.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace nimbus {
namespace {

BlockRound ARound() {
  BlockRound round;
  round.block = {3, 6, true};
  round.model = {0.01, 0.5, 7, 0.25, 2, 1e-6, /*centred=*/true};
  round.x_block = {0.5, 0, -1.25, 3};  // three columns and the intercept
  return round;
}

// The query holds its fields in the order its comment in block_round.h gives.
TEST(BlockRound, TheQueryHoldsItsFieldsInTheDocumentedOrder) {
  const std::vector<double> query = EncodeBlockRound(ARound());
  // x's three nonzeros: at 0, 2 and 3 (the intercept), then their values.
  const std::vector<double> expected{3, 6, 1, 0, 0.01, 0.5, 7, 0.25, 2, 1e-6, 1, 0, 3, 0, 2, 3, 0.5, -1.25, 3};
  EXPECT_EQ(query, expected);
  const BlockRound back = DecodeBlockRound(query).value();
  EXPECT_EQ(back.block, (BlockRange{3, 6, true}));
  EXPECT_FALSE(back.margins_only);
  EXPECT_EQ(back.model.max_passes, 7);
  EXPECT_EQ(back.model.curvature_scale, 2);
  EXPECT_TRUE(back.model.centred);
  EXPECT_EQ(back.x_block, ARound().x_block);
  EXPECT_TRUE(back.eligible.empty());
}

TEST(BlockRound, CarriesTheStrongRulesEligibleSet) {
  BlockRound round = ARound();
  round.margins_only = true;
  round.eligible = {1, 0, 0, 1};
  const BlockRound back = DecodeBlockRound(EncodeBlockRound(round)).value();
  EXPECT_TRUE(back.margins_only);
  EXPECT_EQ(back.eligible, round.eligible);
}

TEST(BlockRound, RefusesAQueryThatIsNotOne) {
  std::vector<double> query = EncodeBlockRound(ARound());
  EXPECT_FALSE(DecodeBlockRound(std::vector<double>(query.begin(), query.end() - 1)).ok());  // x cut short
  std::vector<double> unordered = query;
  std::swap(unordered[13], unordered[14]);  // positions 2, 0: not ascending
  EXPECT_FALSE(DecodeBlockRound(unordered).ok());
  std::vector<double> outside = query;
  outside[14] = 4;  // position 4 of a block of 4
  EXPECT_FALSE(DecodeBlockRound(outside).ok());
  query[0] = 7;  // begin after end
  EXPECT_FALSE(DecodeBlockRound(query).ok());
  query[0] = 2.5;  // not a column
  EXPECT_FALSE(DecodeBlockRound(query).ok());
  query[0] = 3;
  query[2] = 2;  // a flag that is not 0 or 1
  EXPECT_FALSE(DecodeBlockRound(query).ok());
  query[2] = 1;
  query[10] = 0.5;  // centred: neither
  EXPECT_FALSE(DecodeBlockRound(query).ok());
  EXPECT_FALSE(DecodeBlockRound(std::vector<double>{1, 2}).ok());
}

TEST(BlockRound, AStepTravelsAsDeltaMarginsAndItsFigures) {
  BlockStep step;
  step.delta = {0.5, -0.5};
  step.margin_change = {1, 2, 3};
  step.subgradient_squared = 4;
  step.subgradient_max = 1.5;
  step.passes = 3;
  step.entries_read = 120;
  step.active = 2;
  step.intercept_change = -0.25;
  const std::vector<double> w = EncodeBlockStep(step);
  EXPECT_EQ(w, (std::vector<double>{2, 0, 1, 0.5, -0.5, 1, 2, 3, 4, 1.5, 3, 120, 2, -0.25, 0}));
  const BlockStep back = DecodeBlockStep(w, 2, 3).value();
  EXPECT_EQ(back.delta, step.delta);
  EXPECT_EQ(back.margin_change, step.margin_change);
  EXPECT_EQ(back.entries_read, 120);
  EXPECT_EQ(back.active, 2u);
  EXPECT_EQ(back.intercept_change, -0.25);
  EXPECT_FALSE(DecodeBlockStep(w, 2, 4).ok());  // a row short
}

// A step that sets weights to zero carries their margins' change after its own, a value a row.
TEST(BlockRound, AStepThatZeroesWeightsCarriesTheirMarginsToo) {
  BlockStep step;
  step.delta = {0.5, -0.5};
  step.margin_change = {1, 2, 3};
  step.zero_margin_change = {-0.5, 0, 0.25};
  step.passes = 3;
  step.entries_read = 120;
  step.zero_intercept_change = -0.125;
  const std::vector<double> w = EncodeBlockStep(step);
  EXPECT_EQ(w, (std::vector<double>{2, 0, 1, 0.5, -0.5, 1, 2, 3, -0.5, 0, 0.25, 0, 0, 3, 120, 0, 0, -0.125}));
  const BlockStep back = DecodeBlockStep(w, 2, 3).value();
  EXPECT_EQ(back.margin_change, step.margin_change);
  EXPECT_EQ(back.zero_margin_change, step.zero_margin_change);
  EXPECT_EQ(back.entries_read, 120);
  EXPECT_EQ(back.zero_intercept_change, -0.125);
  EXPECT_FALSE(DecodeBlockStep(std::span<const double>(w).first(w.size() - 1), 2, 3).ok());  // cut short
}

}  // namespace
}  // namespace nimbus
