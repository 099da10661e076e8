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

bool StderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

}  // namespace nimbus::cli
