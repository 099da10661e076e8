// The facade's checkpoints read back, whole-file writes and the test-only fault seam
// (nimbus/nimbus.h).
#include <utility>

#include "api/testing.h"
#include "nimbus/checkpoint/checkpoint.h"
#include "nimbus/cloud/s3.h"
#include "nimbus/core/file_io.h"
#include "nimbus/nimbus.h"

namespace nimbus {

Result<SavedRun> ReadSavedRun(const std::string& location) {
  Result<std::unique_ptr<Store>> store = OpenAnyStore(location, /*create=*/false);
  if (!store.ok()) return store.status().WithContext("cannot open " + location);
  Result<Checkpoint> checkpoint = ReadCheckpoint(**store);
  if (checkpoint.status().code() == StatusCode::kNotFound) {
    return NotFound("no checkpoint in " + location + " (" + (*store)->Describe(kCheckpointKey) + " does not exist)");
  }
  if (!checkpoint.ok()) return checkpoint.status();
  SavedRun saved;
  saved.next_round = checkpoint->state.next_round;
  saved.state = std::make_shared<const MasterState>(std::move(checkpoint->state));
  saved.arguments = std::move(checkpoint->arguments);
  saved.working_directory = std::move(checkpoint->working_directory);
  return saved;
}

Status WriteTextFile(const std::string& path, std::string_view text) { return WriteFileAtomically(path, text); }

Status InjectFaultsForTests(const FaultSpecs& specs, SolveOptions* options) {
  FaultInjection faults;
  faults.seed = specs.seed;
  if (!specs.crash.empty()) NIMBUS_RETURN_IF_ERROR(ParseCrashSpec(specs.crash, &faults));
  if (!specs.delay.empty()) NIMBUS_RETURN_IF_ERROR(ParseDelaySpec(specs.delay, &faults));
  if (!specs.slow.empty()) NIMBUS_RETURN_IF_ERROR(ParseSlowSpec(specs.slow, &faults));
  InjectFaults(*options, std::move(faults));
  return Status::Ok();
}

}  // namespace nimbus
