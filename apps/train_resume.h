// `nimbus train --checkpoint X --resume`: a run continued from its checkpoint (nimbus.h:
// SavedRun), with the outputs and printing asked for now.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "train_flags.h"

namespace nimbus::cli {

// `nimbus train` itself, given the checkpoint already read (so it is read once).
using TrainFunction = std::function<int(int argc, char** argv, std::optional<SavedRun> loaded)>;

// `--resume` with only `--checkpoint X` (and outputs): the checkpoint's run again, through
// `train`. An exit code when that (or a mistake in it) is what happens; nothing otherwise.
std::optional<int> RerunIfOnlyCheckpoint(const std::vector<std::string>& arguments, bool loaded,
                                         const TrainFunction& train);
// What a checkpoint keeps of the run, and the state a --resume continues from; says on standard
// error (unless --quiet) that the run resumes, or that it replaces an earlier run's checkpoint.
Status SetCheckpointing(const TrainFlags& flags, const std::vector<std::string>& arguments,
                        std::optional<SavedRun> loaded, SolveOptions* options);

}  // namespace nimbus::cli
