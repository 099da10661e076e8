// A gnuplot script that draws every plot twice, as PNG and as SVG, next to the data files it
// reads. Shared by `nimbus report`, `nimbus scale` and `nimbus simulate`.
#pragma once

#include <string>
#include <vector>

#include "nimbus/core/status.h"

namespace nimbus {

class PlotScript {
 public:
  PlotScript();
  // `body` is gnuplot commands ending in a plot; they may change settings, so a body that
  // sets the log scale or a range should unset it again.
  void Add(const std::string& name, const std::string& body);
  // Writes `directory`/`script_name`; then, unless `gnuplot` is empty, runs it there. Returns
  // the files drawn (directory/name.png and .svg), none when gnuplot was not run.
  Result<std::vector<std::string>> Render(const std::string& directory, const std::string& script_name,
                                          const std::string& gnuplot) const;

  // Settings bodies commonly need.
  static constexpr const char* kLogY = "set logscale y\nset format y '10^{%L}'\n";
  static constexpr const char* kLinearY = "unset logscale y\nset format y '%g'\n";

 private:
  std::string script_;
  std::vector<std::string> names_;
};

}  // namespace nimbus
