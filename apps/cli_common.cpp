#include "cli_common.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "commands.h"

namespace nimbus::cli {

bool ParseOrExit(ArgParser& parser, int argc, char** argv, int* exit_code, int first) {
  const Status status = parser.Parse(argc, argv, first);
  if (!status.ok()) {
    std::fprintf(stderr, "nimbus %s: %s\n", parser.command().c_str(), status.message().c_str());
    *exit_code = kExitUsage;
    return false;
  }
  if (parser.help_requested()) {
    std::fputs(parser.Help().c_str(), stdout);
    *exit_code = kExitOk;
    return false;
  }
  return true;
}

int ReportError(const std::string& command, const Status& status) {
  std::fprintf(stderr, "nimbus %s: error: %s\n", command.c_str(), status.message().c_str());
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kDataLoss:
      return kExitUsage;
    default:
      return kExitFailure;
  }
}

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

bool StderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

}  // namespace nimbus::cli
