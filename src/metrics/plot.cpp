#include "nimbus/metrics/plot.h"

#include <sys/wait.h>

#include <cstdlib>

#include "nimbus/core/file_io.h"

namespace nimbus {
namespace {

constexpr const char* kTerminals[][2] = {{"pngcairo size 900,540 font ',10'", "png"}, {"svg size 900,540", "svg"}};

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
  const std::string command = "cd '" + directory + "' && " + gnuplot + " '" + script_name + "' 2> '" + log + "'";
  const int status = std::system(command.c_str());
  if (status != 0) {
    Result<std::string> text = ReadFileToString(directory + "/" + log);
    const bool missing = WIFEXITED(status) && WEXITSTATUS(status) == 127;
    return Unavailable(missing ? "gnuplot not found: install gnuplot-nox (scripts/install-deps does)"
                               : "gnuplot failed on " + directory + "/" + script_name + ": " +
                                     (text.ok() ? *text : std::string("see ") + log));
  }
  for (const std::string& name : names_) {
    for (const auto& kind : kTerminals) files.push_back(directory + "/" + name + "." + kind[1]);
  }
  return files;
}

}  // namespace nimbus
