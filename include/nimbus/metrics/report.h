// `nimbus report`: a run's trace as a text summary and an HTML page with plots drawn by
// gnuplot (PNG and SVG): convergence against round and time, the per-round breakdown of
// compute, communication and waiting, a timeline of a few rounds per worker, the cold starts,
// and the stragglers; with the data behind every plot as .dat files.
#pragma once

#include <string>
#include <vector>

#include "nimbus/core/status.h"
#include "nimbus/metrics/cost.h"

namespace nimbus {

struct Trace;  // metrics/trace_reader.h

struct ReportOptions {
  std::string out_dir;
  int timeline_first_round = 1;
  int timeline_rounds = 4;
  Prices prices;
  std::string gnuplot = "gnuplot";  // the program that draws; "" writes data and scripts only
};

struct ReportFiles {
  std::string summary;  // ReportText, what `nimbus report` prints
  std::string text;  // report.txt
  std::string html;  // index.html
  std::vector<std::string> plots;  // the PNG and SVG files
};

// The text summary alone (what `nimbus report` prints).
std::string ReportText(const Trace& trace, const Prices& prices);

// The cost of the run in the trace at Lambda's prices: one invocation per worker start, each
// lasting from its launch to the end of the run (or to its replacement), shard loads as S3
// requests, the master for the whole run.
Cost CostOfTrace(const Trace& trace, const Prices& prices);

Result<ReportFiles> WriteReport(const Trace& trace, const ReportOptions& options);
// The same of the trace file at `trace_path` (errors name its line).
Result<ReportFiles> WriteReport(const std::string& trace_path, const ReportOptions& options);

}  // namespace nimbus
