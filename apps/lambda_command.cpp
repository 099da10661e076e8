// nimbus lambda package | emulate | bootstrap: workers as AWS Lambda functions.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "cli_common.h"
#include "commands.h"

namespace nimbus::cli {
namespace {

int RunPackage(int argc, char** argv) {
  std::string out;
  LambdaPackageOptions options;
  options.binary = SiblingProgram("nimbus-lambda");  // (the library's default, shown in the help)
  ArgParser parser("lambda package", "--out FILE.zip",
                   "Builds the deployment package of a provided.al2023 Lambda function that runs nimbus workers:\n"
                   "bootstrap, bin/nimbus-lambda and every shared library it needs (the loader and C library\n"
                   "included). Upload it with aws lambda create-function (see docs/lambda.md). A binary built for\n"
                   "more than x86-64-v2 (-march=native, say) is refused: a Lambda host's CPU may lack its instructions.");
  parser.AddString("out", "FILE.zip", "where to write the package", &out);
  parser.AddString("binary", "PATH", "the program to package as bin/nimbus-lambda: nimbus-lambda, or one's own "
                   "that serves workers (nimbus::WorkerMain)", &options.binary);
  parser.AddSwitch("allow-cpu-specific", "package a binary built for more than x86-64-v2 (with a warning)",
                   &options.allow_cpu_specific);
  parser.Require("out");
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code, 3)) return exit_code;
  options.on_warning = [](const std::string& warning) {
    std::fprintf(stderr, "nimbus lambda package: warning: %s\n", warning.c_str());
  };
  Result<LambdaPackage> package = WriteLambdaPackage(out, options);
  if (!package.ok()) return ReportError("lambda package", package.status());
  std::printf("wrote %s: bootstrap, bin/nimbus-lambda (%s) and %zu libraries, %.1f MB (%.1f MB unpacked)\n",
              out.c_str(), package->built_for.c_str(), package->libraries, package->zipped_bytes / 1e6,
              package->unpacked_bytes / 1e6);
  return kExitOk;
}

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

int RunEmulate(int argc, char** argv) {
  LambdaEmulatorOptions options;
  options.bootstrap = SiblingProgram("nimbus-lambda");
  int64_t port = 0, concurrency = options.concurrency, memory = options.memory_mb, retries = options.retries;
  bool no_signature = false;
  ArgParser parser("lambda emulate", "--port P [--function NAME] [--bootstrap PATH]",
                   "A local stand-in for the Lambda service: answers Invoke API requests on 127.0.0.1:P and runs\n"
                   "each invocation in an instance of the bootstrap, whose AWS_LAMBDA_RUNTIME_API points at the\n"
                   "instance's own Runtime API endpoint. One instance per concurrent invocation; idle instances\n"
                   "are reused (warm starts); an invocation past its timeout is ended; failed Event invocations\n"
                   "are retried. Then: nimbus train --runtime lambda --lambda-endpoint http://127.0.0.1:P ...\n"
                   "Runs until interrupted.");
  parser.AddInt("port", "P", "port of the Invoke API on 127.0.0.1 (0: any free port)", &port);
  parser.AddString("function", "NAME", "the function's name", &options.function);
  parser.AddString("bootstrap", "PATH", "what an instance runs: nimbus-lambda, or an unpacked package's bootstrap",
                   &options.bootstrap);
  parser.AddInt("concurrency", "N", "instances at most", &concurrency);
  parser.AddDouble("timeout", "SECONDS", "the function's timeout", &options.timeout_seconds);
  parser.AddInt("memory", "MB", "the function's memory size (AWS_LAMBDA_FUNCTION_MEMORY_SIZE)", &memory);
  parser.AddInt("retries", "N", "retries of a failed Event invocation", &retries);
  parser.AddSwitch("no-signature", "accept Invoke requests without a SigV4 Authorization header", &no_signature);
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code, 3)) return exit_code;
  options.port = static_cast<int>(port);
  options.concurrency = static_cast<int>(concurrency);
  options.memory_mb = static_cast<int>(memory);
  options.retries = static_cast<int>(retries);
  options.require_signature = !no_signature;
  if (::access(options.bootstrap.c_str(), X_OK) != 0) {
    return ReportError("lambda emulate", InvalidArgument("--bootstrap: " + options.bootstrap + " is not an executable"));
  }
  LambdaEmulator emulator(options);
  if (Status started = emulator.Start(); !started.ok()) return ReportError("lambda emulate", started);
  std::printf("nimbus lambda emulate: function %s, Invoke API at http://%s:%d\n", options.function.c_str(),
              options.host.c_str(), emulator.port());
  std::fflush(stdout);
  ::signal(SIGINT, OnSignal);
  ::signal(SIGTERM, OnSignal);
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  emulator.Stop();
  const LambdaEmulatorStats s = emulator.stats();
  std::printf("nimbus lambda emulate: %lld invocations, %lld cold starts, %lld warm starts, %lld timeouts, "
              "%lld crashes, %lld retries\n",
              static_cast<long long>(s.invocations), static_cast<long long>(s.cold_starts),
              static_cast<long long>(s.warm_starts), static_cast<long long>(s.timeouts),
              static_cast<long long>(s.crashes), static_cast<long long>(s.retries));
  return kExitOk;
}

}  // namespace

int RunLambda(int argc, char** argv) {
  const std::string usage =
      "usage: nimbus lambda package|emulate|bootstrap [options]   ('nimbus lambda SUBCOMMAND --help')\n"
      "  package    build the deployment zip of the worker function\n"
      "  emulate    run a local stand-in for the Lambda service\n"
      "  bootstrap  the function's runtime loop (what nimbus-lambda runs inside Lambda)\n";
  if (argc < 3 || std::string(argv[2]) == "--help") {
    std::fputs(usage.c_str(), argc < 3 ? stderr : stdout);
    return argc < 3 ? kExitUsage : kExitOk;
  }
  const std::string subcommand = argv[2];
  if (subcommand == "package") return RunPackage(argc, argv);
  if (subcommand == "emulate") return RunEmulate(argc, argv);
  if (subcommand == "bootstrap") return LambdaBootstrapMain();
  std::fprintf(stderr, "nimbus lambda: unknown subcommand '%s'\n%s", subcommand.c_str(), usage.c_str());
  return kExitUsage;
}

}  // namespace nimbus::cli
