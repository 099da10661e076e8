#include "nimbus/admm/executor.h"

#include <numeric>

namespace nimbus {

std::vector<WorkerReply> Executor::RunRound(const RoundRequest& request, Deadline deadline) {
  std::vector<int> everyone(static_cast<std::size_t>(workers()));
  std::iota(everyone.begin(), everyone.end(), 0);
  Dispatch(request, everyone);
  std::vector<WorkerReply> replies(everyone.size());
  std::vector<bool> replied(everyone.size(), false);
  for (WorkerReply& reply : Collect(workers(), deadline)) {
    const auto worker = static_cast<std::size_t>(reply.worker);
    if (worker < replies.size() && reply.round == request.round) {
      replied[worker] = true;
      replies[worker] = std::move(reply);
    }
  }
  for (std::size_t i = 0; i < replies.size(); ++i) {
    if (replied[i]) continue;
    replies[i].worker = static_cast<int>(i);
    replies[i].round = request.round;
    replies[i].status = ReplyStatus::kTimedOut;
    replies[i].error = "no reply before the round deadline";
  }
  return replies;
}

}  // namespace nimbus
