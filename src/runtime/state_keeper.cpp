#include "nimbus/runtime/state_keeper.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "nimbus/core/file_io.h"

namespace nimbus {

StateKeeper::StateKeeper(int workers, std::size_t model_size, int64_t memory_limit_bytes, std::string spill_directory)
    : spill_(static_cast<double>(workers) * 2.0 * static_cast<double>(model_size) * sizeof(double) >
                 static_cast<double>(memory_limit_bytes) &&
             !spill_directory.empty()),
      spill_directory_(std::move(spill_directory)),
      kept_(static_cast<std::size_t>(workers)) {}

StateKeeper::~StateKeeper() {
  if (!spill_) return;
  for (std::size_t i = 0; i < kept_.size(); ++i) {
    for (int64_t a = std::max<int64_t>(0, kept_[i].answers - 2); a < kept_[i].answers; ++a) {
      ::unlink(SpillPath(static_cast<int>(i), a).c_str());
    }
  }
}

std::string StateKeeper::SpillPath(int worker, int64_t answer) const {
  // Two files per worker, reused in turn.
  return spill_directory_ + "/worker-" + std::to_string(worker) + "-w" + std::to_string(answer % 2) + ".bin";
}

Status StateKeeper::Record(int worker, const RoundRequest& request, const SharedVector& w) {
  if (w.size() != request.z.size()) return InvalidArgument("reply of the wrong size for the kept state");
  Kept& kept = kept_[static_cast<std::size_t>(worker)];
  Answer answer{request.z, request.rho, request.relaxation, {}};
  if (spill_) {
    NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(
        SpillPath(worker, kept.answers),
        std::string_view(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(double))));
  } else {
    answer.w = w;
  }
  kept.previous = std::move(kept.last);
  kept.last = std::move(answer);
  ++kept.answers;
  return Status::Ok();
}

Result<SharedVector> StateKeeper::ReplyOf(int worker, const Answer& answer, int64_t index) const {
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
  const Answer& last = *kept.last;
  NIMBUS_ASSIGN_OR_RETURN(const SharedVector w_last, ReplyOf(worker, last, kept.answers - 1));
  const std::size_t n = last.z.size();
  auto state = std::make_shared<ResumeState>();
  state->u.assign(n, 0.0);
  if (kept.previous) {
    const Answer& previous = *kept.previous;
    NIMBUS_ASSIGN_OR_RETURN(const SharedVector w_previous, ReplyOf(worker, previous, kept.answers - 2));
    const double rescale = previous.rho / last.rho;
    for (std::size_t j = 0; j < n; ++j) state->u[j] = (w_previous[j] - last.z[j]) * rescale;
  }
  state->x_relaxed.resize(n);
  state->x.resize(n);
  for (std::size_t j = 0; j < n; ++j) {
    state->x_relaxed[j] = w_last[j] - state->u[j];
    state->x[j] = (state->x_relaxed[j] - (1.0 - last.alpha) * last.z[j]) / last.alpha;
  }
  state->rho_of_u = last.rho;
  return std::shared_ptr<const ResumeState>(std::move(state));
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
