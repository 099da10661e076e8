// nimbus report: where a run's time and money went, from its trace.
#include <cstdio>
#include <string>

#include "cli_common.h"
#include "commands.h"

namespace nimbus::cli {

int RunReport(int argc, char** argv) {
  std::string trace_path, out;
  bool no_plots = false;
  int64_t first_round = 1, rounds = 4;
  Prices prices;
  double memory_mb = 0;
  ArgParser parser("report", "TRACE.jsonl [--out DIR]",
                   "Reads the trace of a run (nimbus train --trace) and writes a text summary and an HTML page\n"
                   "with plots drawn by gnuplot (PNG and SVG): residuals and objective against round and time,\n"
                   "compute, communication and waiting per round, a timeline of a few rounds, cold starts,\n"
                   "stragglers, and what the run would cost at Lambda's prices.");
  parser.SetPositional("TRACE.jsonl", "the trace to read", &trace_path);
  parser.AddString("out", "DIR", "where to write (default: TRACE without .jsonl, plus -report)", &out);
  parser.AddSwitch("no-plots", "write the data and the gnuplot script, but do not run gnuplot", &no_plots);
  parser.AddInt("timeline-from", "R", "first round of the timeline", &first_round);
  parser.AddInt("timeline-rounds", "N", "rounds in the timeline", &rounds);
  AddPriceOptions(parser, &prices, &memory_mb);
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code)) return exit_code;
  if (Status valid = FinishPriceOptions(memory_mb, &prices); !valid.ok()) return ReportError("report", valid);
  if (out.empty()) {
    out = trace_path;
    if (out.size() > 6 && out.compare(out.size() - 6, 6, ".jsonl") == 0) out.resize(out.size() - 6);
    out += "-report";
  }
  ReportOptions options;
  options.out_dir = out;
  options.prices = prices;
  options.timeline_first_round = static_cast<int>(first_round);
  options.timeline_rounds = static_cast<int>(rounds);
  if (no_plots) options.gnuplot.clear();
  Result<ReportFiles> files = WriteReport(trace_path, options);
  if (!files.ok()) return ReportError("report", files.status());
  std::fputs(files->summary.c_str(), stdout);
  std::printf("wrote %s and %s (%zu plots)\n", files->text.c_str(), files->html.c_str(), files->plots.size());
  return kExitOk;
}

}  // namespace nimbus::cli
