#include "nimbus/executor/executor.h"

#include <numeric>

namespace nimbus {

std::vector<WorkerReply> Executor::RunRound(const RoundRequest& request, Deadline deadline) {
  std::vector<int> everyone(static_cast<std::size_t>(workers()));
  std::iota(everyone.begin(), everyone.end(), 0);
  Dispatch(request, everyone);
  return CollectRound(request.round, deadline);
}

std::vector<WorkerReply> Executor::RunRound(std::span<const RoundRequest> requests, Deadline deadline) {
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const int worker = static_cast<int>(i);
    Dispatch(requests[i], std::span(&worker, 1));
  }
  return CollectRound(requests.empty() ? 0 : requests.front().round, deadline);
}

std::vector<WorkerReply> Executor::CollectRound(int64_t round, Deadline deadline) {
  std::vector<WorkerReply> replies(static_cast<std::size_t>(workers()));
  std::vector<bool> replied(replies.size(), false);
  for (WorkerReply& reply : Collect(workers(), deadline)) {
    const auto worker = static_cast<std::size_t>(reply.worker);
    if (worker < replies.size() && reply.round == round) {
      replied[worker] = true;
      replies[worker] = std::move(reply);
    }
  }
  for (std::size_t i = 0; i < replies.size(); ++i) {
    if (replied[i]) continue;
    replies[i].worker = static_cast<int>(i);
    replies[i].round = round;
    replies[i].status = ReplyStatus::kTimedOut;
    replies[i].error = "no reply before the round deadline";
  }
  return replies;
}

ResumeState RebuildResumeState(const KeptAnswer* previous, const KeptAnswer& last) {
  const std::size_t n = last.z.size();
  ResumeState state;
  state.u.assign(n, 0.0);
  if (previous != nullptr) {
    const double rescale = previous->rho / last.rho;
    for (std::size_t j = 0; j < n; ++j) state.u[j] = (previous->w[j] - last.z[j]) * rescale;
  }
  state.x_relaxed.resize(n);
  state.x.resize(n);
  for (std::size_t j = 0; j < n; ++j) {
    state.x_relaxed[j] = last.w[j] - state.u[j];
    state.x[j] = (state.x_relaxed[j] - (1.0 - last.alpha) * last.z[j]) / last.alpha;
  }
  state.rho_of_u = last.rho;
  return state;
}

}  // namespace nimbus
