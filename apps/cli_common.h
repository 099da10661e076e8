// Helpers shared by the subcommands: parsing boilerplate and error printing.
#pragma once

#include <string>
#include <vector>

#include "nimbus/core/args.h"
#include "nimbus/core/status.h"
#include "nimbus/metrics/cost.h"

namespace nimbus::cli {

// Parses; prints help (returns 0 through *exit_code) or the error (returns 2). Returns true
// when the command should go on.
// `first` is where the options begin in argv (2 for "nimbus train ...", 3 for "nimbus lambda emulate ...").
bool ParseOrExit(ArgParser& parser, int argc, char** argv, int* exit_code, int first = 2);

// Prints "nimbus COMMAND: error: ..." to stderr and returns the exit code for the status:
// 2 for bad input (invalid argument, not found, data loss), 1 otherwise.
int ReportError(const std::string& command, const Status& status);
// That exit code, without the message.
int ExitCodeOf(const Status& status);

// Ok when a file could be created at `path`: its directory exists and is writable.
Status CheckWritableLocation(const std::string& path);

// --price-gb-second, --price-request, --price-s3-get, --price-master-hour, --function-memory-mb.
void AddPriceOptions(ArgParser& parser, Prices* prices, double* function_memory_mb);
// After parsing: the prices with the function memory the options gave in MB, checked.
Status FinishPriceOptions(double function_memory_mb, Prices* prices);

// "a,b,,c" -> {"a", "b", "c"}.
std::vector<std::string> SplitList(const std::string& text);
// "1,2,4" or "1e3,1e4": positive whole numbers in [1, max], for the option named `option`;
// with `ascending`, each larger than the one before.
Result<std::vector<int64_t>> ParseCountList(const std::string& text, const std::string& option, int64_t max,
                                            bool ascending = false);

// True when standard error is a terminal (progress lines go there only then).
bool StderrIsTerminal();

}  // namespace nimbus::cli
