// Programs started without a shell: arguments with quotes and spaces pass as they are, output
// read back through a pipe, a working directory and a log file, an environment of the
// caller's, a process group of its own; a missing program is NotFound.
#include "nimbus/core/subprocess.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "support/test_support.h"

namespace nimbus {
namespace {

TEST(SubprocessTest, ArgumentsPassAsTheyAreAndTheOutputComesBack) {
  SpawnOptions echo;
  echo.argv = {"printf", "%s|", "it's \"quoted\"", "two  spaces", "$HOME"};
  echo.search_path = true;
  const Result<ProgramOutput> output = RunAndRead(echo);
  ASSERT_TRUE(output.ok()) << output.status().ToString();
  EXPECT_EQ(output->status, 0);
  EXPECT_EQ(output->out, "it's \"quoted\"|two  spaces|$HOME|");
}

TEST(SubprocessTest, ItRunsWhereItIsToldWithItsErrorsInAFile) {
  testing::TempDir dir;
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "pwd; echo oops >&2; exit 3"};
  options.directory = dir.path();
  options.stderr_file = "errors.log";  // in its directory
  const Result<ProgramOutput> output = RunAndRead(options);
  ASSERT_TRUE(output.ok()) << output.status().ToString();
  EXPECT_TRUE(WIFEXITED(output->status));
  EXPECT_EQ(WEXITSTATUS(output->status), 3);
  EXPECT_EQ(output->out, dir.path() + "\n");
  EXPECT_EQ(testing::ReadTextFile(dir.File("errors.log")), "oops\n");
}

TEST(SubprocessTest, AnEnvironmentOfTheCallersAndAGroupOfItsOwn) {
  SpawnOptions env;
  env.argv = {"/usr/bin/env"};
  env.environment = std::vector<std::string>{"ONLY=this"};
  const Result<ProgramOutput> output = RunAndRead(env);
  ASSERT_TRUE(output.ok()) << output.status().ToString();
  EXPECT_EQ(output->out, "ONLY=this\n");

  SpawnOptions sleeper;
  sleeper.argv = {"/bin/sleep", "0.2"};
  sleeper.own_group = true;
  const Result<pid_t> pid = Spawn(sleeper);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  EXPECT_EQ(::getpgid(*pid), *pid);
  const Result<int> status = WaitFor(*pid);
  ASSERT_TRUE(status.ok());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
}

TEST(SubprocessTest, AMissingProgramIsNotFound) {
  SpawnOptions missing;
  missing.argv = {"/no/such/program"};
  EXPECT_EQ(Spawn(missing).status().code(), StatusCode::kNotFound);
  missing.argv = {"no-such-program-on-path"};
  missing.search_path = true;
  EXPECT_EQ(RunAndRead(missing).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace nimbus
