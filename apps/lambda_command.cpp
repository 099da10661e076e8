// nimbus lambda package | emulate | bootstrap: workers as AWS Lambda functions.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "cli_common.h"
#include "commands.h"
#include "nimbus/core/subprocess.h"
#include "nimbus/core/build_target.h"
#include "nimbus/core/file_io.h"
#include "nimbus/core/zip_writer.h"
#include "nimbus/runtime/lambda.h"
#include "nimbus/runtime/lambda_emulator.h"
#include "support_paths.h"

namespace nimbus::cli {
namespace {

constexpr char kBootstrapScript[] =
    "#!/bin/sh\n"
    "# nimbus worker for the Lambda provided.al2023 runtime. The binary was built on Debian and\n"
    "# carries its own C library and loader, so it runs on whatever the function's image has.\n"
    "here=\"$(cd \"$(dirname \"$0\")\" && pwd)\"\n"
    "exec \"$here/lib/ld-linux-x86-64.so.2\" --library-path \"$here/lib\" \"$here/bin/nimbus-lambda\" \"$@\"\n";

// The shared libraries `binary` loads, the dynamic loader included, from ldd (run without a
// shell: a path holding quotes or spaces passes as it is).
Result<std::vector<std::string>> SharedLibraries(const std::string& binary) {
  SpawnOptions ldd;
  ldd.argv = {"ldd", binary};
  ldd.search_path = true;
  NIMBUS_ASSIGN_OR_RETURN(const ProgramOutput output, RunAndRead(ldd));
  std::vector<std::string> libraries;
  std::istringstream lines(output.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string first, arrow, path;
    fields >> first >> arrow >> path;
    if (arrow == "=>" && !path.empty() && path[0] == '/') {
      libraries.push_back(path);
    } else if (!first.empty() && first[0] == '/') {
      libraries.push_back(first);  // the loader: "/lib64/ld-linux-x86-64.so.2 (0x...)"
    }
  }
  if (output.status != 0 || libraries.empty()) return IoError("ldd " + binary + " failed");
  return libraries;
}

std::string BaseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// Every Lambda x86_64 host has x86-64-v2 (SSE4.2, POPCNT: any Intel or AMD server CPU since 2011).
// AWS has said since 2020 that the hosts have AVX2, most of v3, but names no level: a package
// asks for v2 at most unless told otherwise (docs/lambda.md, "What the package runs on").
constexpr int kLambdaHostLevel = 2;

// The most any of the program's translation units needs, from its build-target notes.
BuildTarget MostDemanding(const std::vector<BuildTarget>& targets) {
  BuildTarget most;
  for (const BuildTarget& target : targets) {
    most.x86_64_level = std::max(most.x86_64_level, target.x86_64_level);
    most.native = most.native || target.native;
  }
  return most;
}

// Ok when the program's code needs no instruction a Lambda host may lack, as far as its notes
// tell (core/build_target.h); warns of a program without notes or, with `allow_cpu_specific`,
// of one that needs more. `*built_for` says what the notes say.
Status CheckRunsOnLambdaHosts(const std::string& binary, const std::string& executable, bool allow_cpu_specific,
                              std::string* built_for) {
  Result<std::vector<BuildTarget>> targets = ReadBuildTargets(executable);
  if (!targets.ok()) return targets.status().WithContext("--binary " + binary);
  if (targets->empty()) {
    *built_for = "no build target recorded";
    std::fprintf(stderr,
                 "nimbus lambda package: warning: %s records no build target (it links no nimbus code?), so whether "
                 "it runs on every Lambda host's CPU is not checked\n",
                 binary.c_str());
    return Status::Ok();
  }
  const BuildTarget most = MostDemanding(*targets);
  *built_for = "built for " + most.ToString();
  if (most.x86_64_level <= kLambdaHostLevel && !most.native) return Status::Ok();
  const std::string reason = binary + " is built for " + most.ToString() + ": it " +
                             (most.native ? "may use any instruction of the build machine's CPU"
                                          : "uses instructions beyond x86-64-v" + std::to_string(kLambdaHostLevel)) +
                             " and may stop with an illegal instruction on a Lambda host without them";
  if (allow_cpu_specific) {
    std::fprintf(stderr, "nimbus lambda package: warning: %s (packaged anyway: --allow-cpu-specific)\n", reason.c_str());
    return Status::Ok();
  }
  return InvalidArgument("--binary " + reason + ". Build it with -DNIMBUS_NATIVE=OFF (the default) and no -march " +
                         "beyond x86-64-v" + std::to_string(kLambdaHostLevel) +
                         ", or pass --allow-cpu-specific if the function's hosts are known to have those instructions");
}

int RunPackage(int argc, char** argv) {
  std::string out, binary = SiblingExecutable("nimbus-lambda");
  bool allow_cpu_specific = false;
  ArgParser parser("lambda package", "--out FILE.zip",
                   "Builds the deployment package of a provided.al2023 Lambda function that runs nimbus workers:\n"
                   "bootstrap, bin/nimbus-lambda and every shared library it needs (the loader and C library\n"
                   "included). Upload it with aws lambda create-function (see docs/lambda.md). A binary built for\n"
                   "more than x86-64-v2 (-march=native, say) is refused: a Lambda host's CPU may lack its instructions.");
  parser.AddString("out", "FILE.zip", "where to write the package", &out);
  parser.AddString("binary", "PATH", "the program to package as bin/nimbus-lambda: nimbus-lambda, or one's own "
                   "that serves workers (nimbus::WorkerMain)", &binary);
  parser.AddSwitch("allow-cpu-specific", "package a binary built for more than x86-64-v2 (with a warning)",
                   &allow_cpu_specific);
  parser.Require("out");
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code, 3)) return exit_code;
  Result<std::string> executable = ReadFileToString(binary);
  if (!executable.ok()) return ReportError("lambda package", executable.status().WithContext("--binary"));
  std::string built_for;
  if (Status runs = CheckRunsOnLambdaHosts(binary, *executable, allow_cpu_specific, &built_for); !runs.ok()) {
    return ReportError("lambda package", runs);
  }
  Result<std::vector<std::string>> libraries = SharedLibraries(binary);
  if (!libraries.ok()) return ReportError("lambda package", libraries.status());

  ZipWriter zip;
  Status added = zip.Add("bootstrap", kBootstrapScript, 0755);
  if (added.ok()) added = zip.Add("bin/nimbus-lambda", *executable, 0755);
  std::set<std::string> names;
  uint64_t bytes = executable->size();
  for (const std::string& library : *libraries) {
    if (!added.ok()) break;
    if (!names.insert(BaseName(library)).second) continue;
    Result<std::string> contents = ReadFileToString(library);
    if (!contents.ok()) return ReportError("lambda package", contents.status());
    bytes += contents->size();
    added = zip.Add("lib/" + BaseName(library), *contents, BaseName(library).rfind("ld-linux", 0) == 0 ? 0755 : 0644);
  }
  if (!added.ok()) return ReportError("lambda package", added);
  const std::string archive = zip.Finish();
  if (Status written = WriteFileAtomically(out, archive); !written.ok()) return ReportError("lambda package", written);
  std::printf("wrote %s: bootstrap, bin/nimbus-lambda (%s) and %zu libraries, %.1f MB (%.1f MB unpacked)\n",
              out.c_str(), built_for.c_str(), names.size(), archive.size() / 1e6, bytes / 1e6);
  return kExitOk;
}

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

int RunEmulate(int argc, char** argv) {
  LambdaEmulatorOptions options;
  options.bootstrap = SiblingExecutable("nimbus-lambda");
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
  if (subcommand == "bootstrap") return RunLambdaBootstrap();
  std::fprintf(stderr, "nimbus lambda: unknown subcommand '%s'\n%s", subcommand.c_str(), usage.c_str());
  return kExitUsage;
}

}  // namespace nimbus::cli
