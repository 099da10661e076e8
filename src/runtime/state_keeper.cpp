#include "nimbus/runtime/state_keeper.h"

#include "nimbus/executor/executor.h"

#include <cstring>
#include <filesystem>

#include "nimbus/core/file_io.h"

namespace nimbus {

StateKeeper::StateKeeper(int workers, std::size_t model_size, int64_t memory_limit_bytes, bool may_spill)
    : spill_(may_spill && static_cast<double>(workers) * 2.0 * static_cast<double>(model_size) * sizeof(double) >
                              static_cast<double>(memory_limit_bytes)),
      kept_(static_cast<std::size_t>(workers)) {}

// (The spilled files go with their directory.)
StateKeeper::~StateKeeper() = default;

std::string StateKeeper::SpillPath(int worker, int64_t answer) const {
  // Two files per worker, reused in turn.
  return spill_directory() + "/worker-" + std::to_string(worker) + "-w" + std::to_string(answer % 2) + ".bin";
}

Status StateKeeper::Record(int worker, const RoundRequest& request, const SharedVector& w) {
  return Keep(worker, KeptAnswer{request.z, request.rho, request.relaxation, w});
}

Status StateKeeper::Restore(int worker, const WorkerHistory& history) {
  if (worker < 0 || worker >= static_cast<int>(kept_.size())) return InvalidArgument("no such worker to restore");
  kept_[static_cast<std::size_t>(worker)] = Kept{};
  if (history.previous) {
    NIMBUS_RETURN_IF_ERROR(Keep(worker, *history.previous));
  }
  return Keep(worker, history.last);
}

Status StateKeeper::Keep(int worker, KeptAnswer answer) {
  if (answer.w.size() != answer.z.size()) return InvalidArgument("reply of the wrong size for the kept state");
  Kept& kept = kept_[static_cast<std::size_t>(worker)];
  if (spill_) {
    if (!spill_files_) {
      NIMBUS_ASSIGN_OR_RETURN(spill_files_, TemporaryDirectory::Create("nimbus-state"));
    }
    NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(
        SpillPath(worker, kept.answers),
        std::string_view(reinterpret_cast<const char*>(answer.w.data()), answer.w.size() * sizeof(double))));
    answer.w = SharedVector();
  }
  kept.previous = std::move(kept.last);
  kept.last = std::move(answer);
  ++kept.answers;
  return Status::Ok();
}

Result<SharedVector> StateKeeper::ReplyOf(int worker, const KeptAnswer& answer, int64_t index) const {
  if (!spill_) return answer.w;
  NIMBUS_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(SpillPath(worker, index)));
  const std::size_t size = answer.z.size();
  if (bytes.size() != size * sizeof(double)) return DataLoss("spilled worker state has the wrong size");
  std::vector<double> w(size);
  std::memcpy(w.data(), bytes.data(), bytes.size());
  return SharedVector(std::move(w));
}

Result<std::shared_ptr<const ResumeState>> StateKeeper::ResumeFor(int worker) const {
  const Kept& kept = kept_[static_cast<std::size_t>(worker)];
  if (!kept.last) return std::shared_ptr<const ResumeState>();
  KeptAnswer last = *kept.last;
  NIMBUS_ASSIGN_OR_RETURN(last.w, ReplyOf(worker, last, kept.answers - 1));
  std::optional<KeptAnswer> previous = kept.previous;
  if (previous) {
    NIMBUS_ASSIGN_OR_RETURN(previous->w, ReplyOf(worker, *previous, kept.answers - 2));
  }
  return std::make_shared<const ResumeState>(RebuildResumeState(previous ? &*previous : nullptr, last));
}

int64_t StateKeeper::bytes_in_memory() const {
  int64_t bytes = 0;
  for (const Kept& kept : kept_) {
    for (const auto* answer : {&kept.last, &kept.previous}) {
      if (*answer) bytes += static_cast<int64_t>((*answer)->w.size() * sizeof(double));
    }
  }
  return bytes;
}

}  // namespace nimbus
