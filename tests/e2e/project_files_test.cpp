// What the README and the Makefile promise, checked against the source tree: the layout table
// names every module and folder, the README's Lambda rehearsal sets what docs/lambda.md sets,
// and `make demo` builds only what the demo runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace nimbus::testing {
namespace {

const std::string kSource = NIMBUS_SOURCE_DIR;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The folders directly under `path`, hidden ones and build directories left out.
std::set<std::string> Folders(const std::string& path) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(path)) {
    const std::string name = entry.path().filename();
    if (entry.is_directory() && name[0] != '.' && !name.starts_with("build")) names.insert(name);
  }
  return names;
}

TEST(Readme, LayoutTableNamesEveryModuleAndFolder) {
  const std::vector<std::string> readme = Lines(ReadTextFile(kSource + "/README.md"));
  const auto modules_row = std::find_if(readme.begin(), readme.end(), [](const std::string& line) {
    return line.starts_with("| `include/nimbus/<module>/`, `src/<module>/` |");
  });
  ASSERT_NE(modules_row, readme.end());
  // "the modules: core, data, ... (one CMake library each)"
  const std::string& row = *modules_row;
  const auto begin = row.find("the modules: ");
  const auto end = row.find(" (", begin);
  ASSERT_NE(begin, std::string::npos) << row;
  std::set<std::string> listed;
  std::istringstream names(row.substr(begin + 13, end - begin - 13));
  for (std::string name; std::getline(names, name, ',');) listed.insert(name.substr(name.find_first_not_of(' ')));
  EXPECT_EQ(listed, Folders(kSource + "/src"));
  std::set<std::string> folders_in_table{"include", "src"};
  for (const std::string& line : readme) {
    if (line.starts_with("| `") && line.find("/` |") != std::string::npos) {
      folders_in_table.insert(line.substr(3, line.find('/') - 3));
    }
  }
  EXPECT_EQ(folders_in_table, Folders(kSource));
}

// The VARIABLE=value words of an `export` line.
std::set<std::string> Exports(const std::string& line) {
  std::set<std::string> words;
  std::istringstream in(line.substr(0, line.find('#')));
  for (std::string word; in >> word;) {
    if (word.find('=') != std::string::npos) words.insert(word);
  }
  return words;
}

TEST(Readme, LambdaRehearsalSetsWhatDocsLambdaSetsAndNeedsNoCloud) {
  std::set<std::string> needed;
  for (const std::string& line : Lines(ReadTextFile(kSource + "/docs/lambda.md"))) {
    if (line.starts_with("export AWS_")) needed = Exports(line);
  }
  ASSERT_FALSE(needed.empty()) << "docs/lambda.md exports no AWS_ variables";
  // The README's code block that starts the emulator: what it exports before it does.
  std::set<std::string> exported;
  std::vector<std::string> block;
  bool in_block = false, emulated = false;
  for (const std::string& line : Lines(ReadTextFile(kSource + "/README.md"))) {
    if (line.starts_with("```")) {
      if (in_block && emulated) break;
      in_block = !in_block;
      block.clear();
      exported.clear();
      continue;
    }
    if (!in_block) continue;
    block.push_back(line);
    if (line.starts_with("export ")) exported.merge(Exports(line));
    if (line.find("lambda emulate") != std::string::npos) {
      emulated = true;
      EXPECT_TRUE(std::includes(exported.begin(), exported.end(), needed.begin(), needed.end()))
          << "the README starts the emulator before it exports what docs/lambda.md does";
    }
  }
  ASSERT_TRUE(emulated) << "no README block starts the emulator";
  for (const std::string& line : block) {
    EXPECT_EQ(line.find("s3://"), std::string::npos) << "the rehearsal needs a bucket: " << line;
    if (line.find("http") != std::string::npos) {
      EXPECT_NE(line.find("http://127.0.0.1:"), std::string::npos) << line;
    }
  }
}

// The `cmake --build` lines `make TARGET` would run.
std::vector<std::string> BuildCommands(const std::string& target) {
  const CommandResult make = RunCommand({"make", "-n", "-C", kSource, target, "BUILD_DIR=/nonexistent/b"});
  EXPECT_EQ(make.exit_code, 0) << make.err;
  std::vector<std::string> builds;
  for (const std::string& line : Lines(make.out)) {
    if (line.find("cmake --build") != std::string::npos) builds.push_back(line);
  }
  EXPECT_FALSE(builds.empty()) << make.out;
  return builds;
}

TEST(Makefile, DemoBuildsOnlyTheNimbusBinaryAndTestBuildsEverything) {
  for (const std::string& line : BuildCommands("demo")) {
    EXPECT_NE(line.find("--target nimbus "), std::string::npos) << line;
  }
  const CommandResult demo = RunCommand({"make", "-n", "-C", kSource, "demo", "BUILD_DIR=/nonexistent/b"});
  EXPECT_NE(demo.out.find("scripts/demo /nonexistent/b/apps/nimbus\n"), std::string::npos) << demo.out;
  for (const char* target : {"build", "test"}) {
    for (const std::string& line : BuildCommands(target)) {
      EXPECT_EQ(line.find("--target"), std::string::npos) << target << ": " << line;
    }
  }
}

}  // namespace
}  // namespace nimbus::testing
