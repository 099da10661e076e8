#include "cli_common.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <memory>

#include "commands.h"
#include "nimbus/core/clock.h"

namespace nimbus::cli {

Status CheckWritableLocation(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string directory = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (::access(directory.c_str(), W_OK) != 0) return ErrnoError("cannot create " + path, errno);
  return Status::Ok();
}

void AddPriceOptions(ArgParser& parser, Prices* prices, double* function_memory_mb) {
  const std::string as_of = std::string(" (") + Prices::kAsOf + ")";
  parser.AddDouble("price-gb-second", "$", "Lambda price per GB-second" + as_of, &prices->lambda_gb_second);
  parser.AddDouble("price-request", "$", "Lambda price per request", &prices->lambda_request);
  parser.AddDouble("price-s3-get", "$", "S3 price per GET or HEAD request", &prices->s3_get);
  parser.AddDouble("price-master-hour", "$", "the master machine's price per hour", &prices->master_hour);
  *function_memory_mb = prices->function_memory_gb * 1000;
  parser.AddDouble("function-memory-mb", "MB", "the functions' memory, for GB-seconds", function_memory_mb);
}

Status FinishPriceOptions(double function_memory_mb, Prices* prices) {
  prices->function_memory_gb = function_memory_mb / 1000;
  return prices->Validate();
}

Result<std::vector<int64_t>> ParseCountList(const std::string& text, const std::string& option, int64_t max,
                                            bool ascending) {
  std::vector<int64_t> counts;
  for (const std::string& item : SplitList(text)) {
    char* end = nullptr;
    const double value = std::strtod(item.c_str(), &end);
    if (end == item.c_str() || *end != '\0' || !(value >= 1) || value > static_cast<double>(max) ||
        value != std::floor(value)) {
      return InvalidArgument("--" + option + ": '" + item + "' is not a whole number in [1, " + std::to_string(max) + "]");
    }
    if (ascending && !counts.empty() && value <= static_cast<double>(counts.back())) {
      return InvalidArgument("--" + option + ": the counts must ascend, got " + text);
    }
    counts.push_back(static_cast<int64_t>(value));
  }
  if (counts.empty()) return InvalidArgument("--" + option + ": give a comma-separated list, e.g. 1,2,4");
  return counts;
}

bool StderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

std::function<void(const LoadProgress&)> LoadProgressPrinter(const std::string& command) {
  if (!StderrIsTerminal()) return {};
  auto last = std::make_shared<double>(-1);
  return [command, last](const LoadProgress& p) {
    const bool done = p.workers_done == p.workers;
    if (!done && p.seconds - *last < 0.5) return;
    *last = p.seconds;
    const double share = p.bytes_total > 0 ? static_cast<double>(p.bytes_read) / static_cast<double>(p.bytes_total) : 1;
    std::fprintf(stderr, "\r%s: the workers read %.2f of %.2f GB (%.1f%%); %d of %d done; %.1f s%s", command.c_str(),
                 static_cast<double>(p.bytes_read) / 1e9, static_cast<double>(p.bytes_total) / 1e9, 100 * share,
                 p.workers_done, p.workers, p.seconds, done ? "\n" : "");
    std::fflush(stderr);
  };
}

std::function<void(const std::string&, uint64_t, uint64_t)> TerminalProgress(const std::string& command, bool quiet) {
  if (quiet || !StderrIsTerminal()) return {};
  auto last = std::make_shared<double>(0);
  return [command, last](const std::string& pass, uint64_t done, uint64_t total) {
    const double now = MonotonicSeconds();
    if (done < total && now - *last < 0.5) return;
    *last = now;
    std::fprintf(stderr, "\r%s: %s %5.1f%% (%.2f of %.2f GB)%s", command.c_str(), pass.c_str(),
                 100.0 * static_cast<double>(done) / static_cast<double>(total), static_cast<double>(done) / 1e9,
                 static_cast<double>(total) / 1e9, done >= total ? "\n" : "");
  };
}

int FinishGridCommand(const std::string& command, bool json, bool table, const std::string& json_text,
                      const std::string& summary_text, const Summary* last) {
  if (json) std::fputs(json_text.c_str(), stdout);
  if (table) std::fputs(summary_text.c_str(), stdout);
  if (last != nullptr && !last->ok()) return ReportError(command, Unavailable(last->message));
  return kExitOk;
}

}  // namespace nimbus::cli
