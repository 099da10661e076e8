// The command-line parser's help text: each option's default once, the help's own where it
// tells it, and required options marked.
#include "nimbus/core/args.h"

#include <gtest/gtest.h>

#include <string>

namespace nimbus {
namespace {

int CountOf(const std::string& text, const std::string& part) {
  int count = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

TEST(ArgParserTest, EachDefaultIsToldOnce) {
  double ratio = 0, rate = 0.5;
  int64_t length = 20;
  std::string data;
  ArgParser parser("path", "--data FILE", "A grid.");
  parser.AddDouble("path-min-ratio", "R", "the grid ends at R x lambda_max (default 1e-3 for l1, 1e-6 for l2)", &ratio);
  parser.AddDouble("rate", "X", "a rate", &rate);
  parser.AddInt("path-length", "N", "points", &length);
  parser.AddString("data", "FILE", "the data", &data);
  parser.Require("data");
  const std::string help = parser.Help();
  EXPECT_NE(help.find("(default 1e-3 for l1, 1e-6 for l2)\n"), std::string::npos) << help;
  EXPECT_EQ(CountOf(help, "(default"), 3) << help;  // the ratio's own, the rate's and the length's
  EXPECT_NE(help.find("a rate (default 0.5)"), std::string::npos) << help;
  EXPECT_NE(help.find("points (default 20)"), std::string::npos) << help;
  EXPECT_NE(help.find("the data (required)"), std::string::npos) << help;
}

}  // namespace
}  // namespace nimbus
