// `nimbus train --resume`: which of a run's arguments define it (and its checkpoint keeps),
// and the run continued from its checkpoint.
#include "train_resume.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <map>

namespace nimbus::cli {
namespace {

// Options that choose where a run's results go or how much it prints: a resumed run takes
// them from its own command line (falling back on the checkpoint's for the outputs).
const std::vector<std::string> kOutputOptions = {"--out", "--model-format", "--summary-json", "--trace"};
const std::vector<std::string> kPrintingSwitches = {"--quiet", "--verbose", "--resume"};

struct SplitArguments {
  std::vector<std::string> run;                // what defines the run (and the checkpoint keeps)
  std::map<std::string, std::string> outputs;  // --out X, ... as option -> value
  std::vector<std::string> printing;           // --quiet, --verbose (not --resume)
};

SplitArguments Split(const std::vector<std::string>& arguments) {
  SplitArguments split;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const std::string& a = arguments[i];
    const std::string name = a.substr(0, a.find('='));
    if (std::find(kPrintingSwitches.begin(), kPrintingSwitches.end(), a) != kPrintingSwitches.end()) {
      if (a != "--resume") split.printing.push_back(a);
    } else if (std::find(kOutputOptions.begin(), kOutputOptions.end(), name) != kOutputOptions.end()) {
      if (name != a) {
        split.outputs[name] = a.substr(name.size() + 1);
      } else if (i + 1 < arguments.size()) {
        split.outputs[name] = arguments[++i];
      }
    } else {
      split.run.push_back(a);
    }
  }
  return split;
}

std::vector<std::string> Joined(const SplitArguments& split) {
  std::vector<std::string> arguments = split.run;
  for (const auto& [name, value] : split.outputs) arguments.insert(arguments.end(), {name, value});
  arguments.insert(arguments.end(), split.printing.begin(), split.printing.end());
  return arguments;
}

std::string Text(const std::vector<std::string>& arguments) {
  std::string text;
  for (const std::string& a : arguments) text += (text.empty() ? "" : " ") + a;
  return text;
}

// The checkpoint a --resume continues from; errors say where it was looked for.
Result<SavedRun> LoadCheckpoint(const std::string& location) {
  Result<SavedRun> saved = ReadSavedRun(location);
  if (!saved.ok()) return saved.status().WithContext("--resume");
  return saved;
}

// `nimbus train --checkpoint X --resume [outputs]`: the run's own arguments, from its
// checkpoint, run again from the directory they were given in, with the outputs and printing
// asked for now in place of the checkpoint's. The checkpoint goes along, so it is read once.
int RerunFromCheckpoint(SavedRun checkpoint, const SplitArguments& now, const TrainFunction& train) {
  if (!checkpoint.working_directory.empty() && ::chdir(checkpoint.working_directory.c_str()) != 0) {
    return ReportError("train", ErrnoError("--resume: cannot enter " + checkpoint.working_directory +
                                           ", where the run started", errno));
  }
  SplitArguments rerun = Split(checkpoint.arguments);
  for (const auto& [name, value] : now.outputs) rerun.outputs[name] = value;
  rerun.printing = now.printing;
  std::vector<std::string> arguments{"nimbus", "train"};
  for (const std::string& a : Joined(rerun)) arguments.push_back(a);
  arguments.push_back("--resume");
  std::vector<char*> argv;
  for (std::string& a : arguments) argv.push_back(a.data());
  argv.push_back(nullptr);
  return train(static_cast<int>(arguments.size()), argv.data(), std::move(checkpoint));
}

// With --resume, the checkpoint (`loaded`, or read); the run's arguments must be its, outputs aside.
Result<std::optional<SavedRun>> ResumeState(const TrainFlags& flags, const std::vector<std::string>& arguments,
                                            std::optional<SavedRun> loaded) {
  if (!flags.resume) return std::optional<SavedRun>();
  NIMBUS_ASSIGN_OR_RETURN(SavedRun checkpoint,
                          loaded ? Result<SavedRun>(std::move(*loaded))
                                 : LoadCheckpoint(flags.problem.options.checkpoint.location));
  if (Split(arguments).run != Split(checkpoint.arguments).run) {
    return InvalidArgument("--resume: give only --checkpoint, or the run's own arguments; the checkpoint's run is: "
                           "nimbus train " + Text(checkpoint.arguments));
  }
  return std::optional<SavedRun>(std::move(checkpoint));
}

// On standard error: that the run resumes, or that it replaces an earlier run's checkpoint.
void PrintCheckpointNotes(const std::string& location, const std::optional<SavedRun>& resumed) {
  if (resumed) {
    std::fprintf(stderr, "nimbus train: resuming from %s at round %lld\n", location.c_str(),
                 static_cast<long long>(resumed->next_round));
  } else if (!location.empty()) {
    Result<SavedRun> earlier = ReadSavedRun(location);
    if (earlier.ok()) {
      std::fprintf(stderr, "nimbus train: %s holds the checkpoint of an earlier run (at round %lld); this run "
                   "replaces it (to continue that run instead: --checkpoint %s --resume)\n", location.c_str(),
                   static_cast<long long>(earlier->next_round), location.c_str());
    }
  }
}

}  // namespace

std::optional<int> RerunIfOnlyCheckpoint(const std::vector<std::string>& arguments, bool loaded,
                                         const TrainFunction& train) {
  const SplitArguments given = Split(arguments);
  const bool resume = std::find(arguments.begin(), arguments.end(), "--resume") != arguments.end();
  const bool only_checkpoint = (given.run.size() == 2 && given.run[0] == "--checkpoint") ||
                               (given.run.size() == 1 && given.run[0].rfind("--checkpoint=", 0) == 0);
  const bool has_checkpoint = std::any_of(given.run.begin(), given.run.end(), [](const std::string& a) {
    return a == "--checkpoint" || a.rfind("--checkpoint=", 0) == 0;
  });
  if (resume && !has_checkpoint) {
    return ReportError("train", InvalidArgument("--resume: needs --checkpoint DIR|s3://BUCKET/PREFIX, where the run "
                                                "wrote its checkpoints"));
  }
  if (!resume || !only_checkpoint || loaded) return std::nullopt;
  Result<SavedRun> checkpoint = LoadCheckpoint(given.run.size() == 2 ? given.run[1] : given.run[0].substr(13));
  if (!checkpoint.ok()) return ReportError("train", checkpoint.status());
  return RerunFromCheckpoint(std::move(checkpoint).value(), given, train);
}

Status SetCheckpointing(const TrainFlags& flags, const std::vector<std::string>& arguments,
                        std::optional<SavedRun> loaded, SolveOptions* options) {
  NIMBUS_ASSIGN_OR_RETURN(const std::optional<SavedRun> resumed, ResumeState(flags, arguments, std::move(loaded)));
  if (resumed) options->checkpoint.resume = resumed->state;
  if (!flags.quiet) PrintCheckpointNotes(options->checkpoint.location, resumed);
  const SplitArguments given = Split(arguments);
  options->checkpoint.run_arguments = Joined({given.run, given.outputs, {}});
  std::error_code no_directory;
  options->checkpoint.working_directory = std::filesystem::current_path(no_directory).string();
  return Status::Ok();
}

}  // namespace nimbus::cli
