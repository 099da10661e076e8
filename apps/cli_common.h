// Helpers shared by the subcommands: parsing boilerplate and error printing.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "nimbus/executor/summary.h"
#include "nimbus/core/args.h"
#include "nimbus/core/status.h"
#include "nimbus/metrics/cost.h"
#include "nimbus/nimbus.h"

namespace nimbus::cli {



// Ok when a file could be created at `path`: its directory exists and is writable.
Status CheckWritableLocation(const std::string& path);

// --price-gb-second, --price-request, --price-s3-get, --price-master-hour, --function-memory-mb.
void AddPriceOptions(ArgParser& parser, Prices* prices, double* function_memory_mb);
// After parsing: the prices with the function memory the options gave in MB, checked.
Status FinishPriceOptions(double function_memory_mb, Prices* prices);

// "1,2,4" or "1e3,1e4": positive whole numbers in [1, max], for the option named `option`;
// with `ascending`, each larger than the one before.
Result<std::vector<int64_t>> ParseCountList(const std::string& text, const std::string& option, int64_t max,
                                            bool ascending = false);

// The end of a command that solves along a grid (path, cv), its outputs written: the JSON
// (--json) or the heading, footer and the files written (the table), then the exit code, a
// failure if the last point's workers failed (`last`; null when there were no points).
int FinishGridCommand(const std::string& command, bool json, bool table, const std::string& json_text,
                      const std::string& summary_text, const Summary* last);

// True when standard error is a terminal (progress lines go there only then).
bool StderrIsTerminal();

// The workers' reading of LIBSVM text (SolveOptions::on_load) as a line on standard error that
// overwrites itself, at most every half second; for a terminal only (null otherwise).
std::function<void(const LoadProgress&)> LoadProgressPrinter(const std::string& command);

// The streaming commands' progress (split, predict, eval): a line on standard error that
// overwrites itself; for a terminal only, and not with --quiet (null then).
std::function<void(const std::string& pass, uint64_t done, uint64_t total)> TerminalProgress(const std::string& command,
                                                                                             bool quiet);

}  // namespace nimbus::cli
