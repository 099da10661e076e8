#include "nimbus/metrics/plot.h"

#include <sys/wait.h>

#include "nimbus/core/file_io.h"
#include "nimbus/core/subprocess.h"

namespace nimbus {
namespace {

constexpr const char* kTerminals[][2] = {{"pngcairo size 900,540 font ',10'", "png"}, {"svg size 900,540", "svg"}};

// Runs `program script` in `directory` with its standard error in `log` there, without a shell
// (a directory's name may hold quotes or spaces); the program is looked up on PATH. Returns
// its wait status, or the error that kept it from starting (not found: the program; the
// directory exists, the script was just written there).
Result<int> RunInDirectory(const std::string& directory, const std::string& program, const std::string& script,
                           const std::string& log) {
  SpawnOptions options;
  options.argv = {program, script};
  options.search_path = true;
  options.directory = directory;
  options.stderr_file = log;
  NIMBUS_ASSIGN_OR_RETURN(const pid_t pid, Spawn(options));
  return WaitFor(pid);
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
