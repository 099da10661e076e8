// The facade's Lambda parts (nimbus/nimbus.h): the deployment package of the worker function,
// and the function's runtime loop.
#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "nimbus/core/build_target.h"
#include "nimbus/core/file_io.h"
#include "nimbus/core/subprocess.h"
#include "nimbus/core/zip_writer.h"
#include "nimbus/nimbus.h"
#include "nimbus/runtime/launcher.h"
#ifdef NIMBUS_HAVE_AWS
#include "nimbus/runtime/lambda.h"
#endif

namespace nimbus {
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
Status CheckRunsOnLambdaHosts(const std::string& binary, const std::string& executable,
                              const LambdaPackageOptions& options, std::string* built_for) {
  const auto warn = [&](const std::string& warning) {
    if (options.on_warning) options.on_warning(warning);
  };
  Result<std::vector<BuildTarget>> targets = ReadBuildTargets(executable);
  if (!targets.ok()) return targets.status().WithContext("--binary " + binary);
  if (targets->empty()) {
    *built_for = "no build target recorded";
    warn(binary + " records no build target (it links no nimbus code?), so whether it runs on every Lambda host's "
         "CPU is not checked");
    return Status::Ok();
  }
  const BuildTarget most = MostDemanding(*targets);
  *built_for = "built for " + most.ToString();
  if (most.x86_64_level <= kLambdaHostLevel && !most.native) return Status::Ok();
  const std::string reason = binary + " is built for " + most.ToString() + ": it " +
                             (most.native ? "may use any instruction of the build machine's CPU"
                                          : "uses instructions beyond x86-64-v" + std::to_string(kLambdaHostLevel)) +
                             " and may stop with an illegal instruction on a Lambda host without them";
  if (options.allow_cpu_specific) {
    warn(reason + " (packaged anyway: --allow-cpu-specific)");
    return Status::Ok();
  }
  return InvalidArgument("--binary " + reason + ". Build it with -DNIMBUS_NATIVE=OFF (the default) and no -march " +
                         "beyond x86-64-v" + std::to_string(kLambdaHostLevel) +
                         ", or pass --allow-cpu-specific if the function's hosts are known to have those instructions");
}

}  // namespace

std::string SiblingProgram(const std::string& name) {
  const std::string self = CurrentExecutable();
  const auto slash = self.rfind('/');
  return (slash == std::string::npos ? std::string(".") : self.substr(0, slash)) + "/" + name;
}

Result<LambdaPackage> WriteLambdaPackage(const std::string& out, const LambdaPackageOptions& options) {
  const std::string binary = options.binary.empty() ? SiblingProgram("nimbus-lambda") : options.binary;
  Result<std::string> executable = ReadFileToString(binary);
  if (!executable.ok()) return executable.status().WithContext("--binary");
  LambdaPackage package;
  NIMBUS_RETURN_IF_ERROR(CheckRunsOnLambdaHosts(binary, *executable, options, &package.built_for));
  NIMBUS_ASSIGN_OR_RETURN(const std::vector<std::string> libraries, SharedLibraries(binary));

  ZipWriter zip;
  Status added = zip.Add("bootstrap", kBootstrapScript, 0755);
  if (added.ok()) added = zip.Add("bin/nimbus-lambda", *executable, 0755);
  std::set<std::string> names;
  uint64_t bytes = executable->size();
  for (const std::string& library : libraries) {
    if (!added.ok()) break;
    if (!names.insert(BaseName(library)).second) continue;
    Result<std::string> contents = ReadFileToString(library);
    if (!contents.ok()) return contents.status();
    bytes += contents->size();
    added = zip.Add("lib/" + BaseName(library), *contents, BaseName(library).rfind("ld-linux", 0) == 0 ? 0755 : 0644);
  }
  NIMBUS_RETURN_IF_ERROR(added);
  const std::string archive = zip.Finish();
  NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(out, archive));
  package.libraries = names.size();
  package.zipped_bytes = archive.size();
  package.unpacked_bytes = bytes;
  return package;
}

int LambdaBootstrapMain() {
#ifdef NIMBUS_HAVE_AWS
  return RunLambdaBootstrap();
#else
  std::fputs("nimbus-lambda: this build has no Lambda runtime (NIMBUS_WITH_AWS=OFF)\n", stderr);
  return 1;
#endif
}

}  // namespace nimbus
