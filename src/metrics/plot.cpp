#include "nimbus/metrics/plot.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>

#include "nimbus/core/file_io.h"

extern char** environ;

namespace nimbus {
namespace {

constexpr const char* kTerminals[][2] = {{"pngcairo size 900,540 font ',10'", "png"}, {"svg size 900,540", "svg"}};

// Runs `program script` in `directory` with its standard error in `log` there, without a shell
// (a directory's name may hold quotes or spaces); the program is looked up on PATH. Returns
// its wait status, or the error that kept it from starting (not found: the program; the
// directory exists, the script was just written there).
Result<int> RunInDirectory(const std::string& directory, const std::string& program, const std::string& script,
                           const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, directory.c_str());
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::string program_arg = program, script_arg = script;
  char* argv[] = {program_arg.data(), script_arg.data(), nullptr};
  pid_t pid = -1;
  const int error = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) return Status(error == ENOENT ? StatusCode::kNotFound : StatusCode::kUnavailable, std::strerror(error));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Unavailable(std::string("cannot wait for ") + program + ": " + std::strerror(errno));
  }
  return status;
}

}  // namespace

PlotScript::PlotScript() : script_("set datafile missing 'NaN'\nset key outside right top\nset grid\n") {}

void PlotScript::Add(const std::string& name, const std::string& body) {
  for (const auto& [terminal, extension] : kTerminals) {
    script_ += "set terminal " + std::string(terminal) + "\nset output '" + name + "." + extension + "'\n" + body +
               "\nunset output\n";
  }
  names_.push_back(name);
}

Result<std::vector<std::string>> PlotScript::Render(const std::string& directory, const std::string& script_name,
                                                    const std::string& gnuplot) const {
  NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(directory + "/" + script_name, script_));
  std::vector<std::string> files;
  if (gnuplot.empty()) return files;
  const std::string log = script_name + ".log";
  const Result<int> status = RunInDirectory(directory, gnuplot, script_name, log);
  if (!status.ok() && status.status().code() == StatusCode::kNotFound) {
    return Unavailable("gnuplot not found: install gnuplot-nox (scripts/install-deps does)");
  }
  if (!status.ok()) return Unavailable("cannot run gnuplot in " + directory + ": " + status.status().message());
  if (*status != 0) {
    Result<std::string> text = ReadFileToString(directory + "/" + log);
    return Unavailable("gnuplot failed on " + directory + "/" + script_name + ": " +
                       (text.ok() ? *text : std::string("see ") + log));
  }
  for (const std::string& name : names_) {
    for (const auto& kind : kTerminals) files.push_back(directory + "/" + name + "." + kind[1]);
  }
  return files;
}

}  // namespace nimbus
