// State kept outside the workers. The master keeps, for every worker, the last two rounds it
// was sent (z, rho, alpha) and its replies w = xh + u to them. From these it rebuilds the
// state the worker held before its next round (RebuildResumeState in executor/executor.h), for a
// replacement that must carry on as the original would have.
//
// With many workers and features the replies are spilled to a local directory instead of
// being held in memory.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nimbus/core/file_io.h"
#include "nimbus/core/status.h"
#include "nimbus/wire/messages.h"

namespace nimbus {

class StateKeeper {
 public:
  // Keeps replies in memory while 2 * workers * model_size doubles (an upper bound in the
  // general form) fit in `memory_limit_bytes`; beyond that, with `may_spill`, in files of a
  // temporary directory made at the first reply kept (so a master killed before it spills
  // leaves nothing behind), else in memory all the same.
  StateKeeper(int workers, std::size_t model_size, int64_t memory_limit_bytes, bool may_spill);
  ~StateKeeper();

  // A round was answered by `worker`: `request` is what it was sent, `w` its reply (in the
  // general form both on the worker's support).
  Status Record(int worker, const RoundRequest& request, const SharedVector& w);
  // A resumed run: `worker`'s answers before the master was restarted, as a checkpoint kept
  // them. Replaces whatever was kept.
  Status Restore(int worker, const WorkerHistory& history);
  // What a replacement of `worker` needs before its next round; null if it has answered no
  // round yet (it starts from zero).
  Result<std::shared_ptr<const ResumeState>> ResumeFor(int worker) const;

  bool spilling() const { return spill_; }
  // The spilled replies' directory: empty until the first is kept, and removed with the keeper.
  std::string spill_directory() const { return spill_files_ ? spill_files_->path() : std::string(); }
  int64_t bytes_in_memory() const;

 private:
  struct Kept {
    std::optional<KeptAnswer> last;      // w: the reply as it arrived (no copy); empty when spilled
    std::optional<KeptAnswer> previous;
    int64_t answers = 0;
  };
  std::string SpillPath(int worker, int64_t answer) const;
  // Keeps `answer` as the newest of `worker`'s (in a file when spilling).
  Status Keep(int worker, KeptAnswer answer);
  Result<SharedVector> ReplyOf(int worker, const KeptAnswer& answer, int64_t index) const;

  bool spill_;
  std::optional<TemporaryDirectory> spill_files_;
  std::vector<Kept> kept_;
};

}  // namespace nimbus
