// gnuplot runs without a shell: directory names are data, whatever characters they hold.
#include "nimbus/metrics/plot.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "support/test_support.h"

namespace nimbus {
namespace {

using testing::TempDir;

// Whether `program` is an executable file in a directory of PATH.
bool OnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream directories(path != nullptr ? path : "");
  std::string directory;
  while (std::getline(directories, directory, ':')) {
    if (!directory.empty() && ::access((directory + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

PlotScript OneLine() {
  PlotScript plots;
  plots.Add("line", "plot 'line.dat' u 1:2 w lp t 'a line'");
  return plots;
}

TEST(Plot, DrawsInADirectoryWhoseNameHoldsAQuoteAndASpace) {
  if (!OnPath("gnuplot")) GTEST_SKIP() << "gnuplot is not installed";
  TempDir dir;
  const std::string odd = dir.File("it's a plot");
  ASSERT_EQ(::mkdir(odd.c_str(), 0755), 0);
  testing::WriteTextFile(odd + "/line.dat", "1 1\n2 4\n3 9\n");
  Result<std::vector<std::string>> drawn = OneLine().Render(odd, "line.gp", "gnuplot");
  ASSERT_TRUE(drawn.ok()) << drawn.status().ToString();
  ASSERT_EQ(drawn->size(), 2u);
  EXPECT_EQ((*drawn)[0], odd + "/line.png");
  EXPECT_EQ((*drawn)[1], odd + "/line.svg");
  const std::string png = testing::ReadTextFile(odd + "/line.png");
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(png.substr(1, 3), "PNG");  // the signature: \x89 P N G
  EXPECT_NE(testing::ReadTextFile(odd + "/line.svg").find("<svg"), std::string::npos);
  // Nothing was written outside it.
  EXPECT_EQ(testing::ListDirectory(dir.path()), std::vector<std::string>{"it's a plot"});
}

TEST(Plot, GnuplotsErrorsComeBackFromItsLog) {
  if (!OnPath("gnuplot")) GTEST_SKIP() << "gnuplot is not installed";
  TempDir dir;
  const std::string odd = dir.File("a 'quoted' dir");
  ASSERT_EQ(::mkdir(odd.c_str(), 0755), 0);
  // No line.dat: gnuplot stops on the plot and says which file it could not read.
  Result<std::vector<std::string>> drawn = OneLine().Render(odd, "line.gp", "gnuplot");
  ASSERT_FALSE(drawn.ok());
  EXPECT_NE(drawn.status().message().find("gnuplot failed on " + odd + "/line.gp"), std::string::npos)
      << drawn.status().message();
  EXPECT_NE(drawn.status().message().find("line.dat"), std::string::npos) << drawn.status().message();
}

TEST(Plot, AMissingProgramIsNamedAndNoPlotIsClaimed) {
  TempDir dir;
  Result<std::vector<std::string>> drawn = OneLine().Render(dir.path(), "line.gp", "nimbus-no-such-gnuplot");
  ASSERT_FALSE(drawn.ok());
  EXPECT_EQ(drawn.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(drawn.status().message().find("gnuplot not found"), std::string::npos) << drawn.status().message();
  // The script is written all the same, for whoever draws it later.
  EXPECT_NE(testing::ReadTextFile(dir.File("line.gp")).find("set output 'line.png'"), std::string::npos);
}

TEST(Plot, NoProgramWritesTheScriptOnly) {
  TempDir dir;
  Result<std::vector<std::string>> drawn = OneLine().Render(dir.path(), "line.gp", "");
  ASSERT_TRUE(drawn.ok()) << drawn.status().ToString();
  EXPECT_TRUE(drawn->empty());
  EXPECT_EQ(testing::ListDirectory(dir.path()), std::vector<std::string>{"line.gp"});
}

}  // namespace
}  // namespace nimbus
