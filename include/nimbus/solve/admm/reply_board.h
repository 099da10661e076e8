// The newest reply of every worker, and the rules for how long the master waits for them:
// a full barrier (everyone answers every round), or a partial one after Zhang & Kwok,
// "Asynchronous Distributed ADMM for Consensus Optimization" (ICML 2014): go on once
// `barrier` workers have answered, reusing the newest w_i of the others, as long as none of
// those is more than `max_staleness` rounds old.
#pragma once

#include <cstdint>
#include <vector>

#include "nimbus/executor/executor.h"

namespace nimbus {

class ReplyBoard {
 public:
  // barrier <= 0 or >= workers means a full barrier.
  ReplyBoard(int workers, int barrier, int max_staleness);

  int barrier() const { return barrier_; }
  // Waits for rounds still out (from partial rounds), then runs `request` on every worker.
  // Returns every reply that arrived.
  std::vector<WorkerReply> Synchronous(Executor& executor, const RoundRequest& request, Deadline deadline);
  // Sends `request` to the idle workers and waits as the partial barrier says. Returns the
  // replies that arrived; a worker that the staleness bound waits for in vain comes back as
  // a kTimedOut reply.
  std::vector<WorkerReply> Partial(Executor& executor, const RoundRequest& request, Deadline deadline);

  // The newest reply of each worker, in worker order (w_i for the z-update).
  const std::vector<WorkerReply>& latest() const { return latest_; }
  // Whether every worker's newest reply answers this round.
  bool AllAnswered(int64_t round) const;
  // Replies used by a z-update of a later round than the one they answered, summed.
  int64_t stale_replies() const { return stale_replies_; }

 private:
  void Record(std::vector<WorkerReply>& arrived, std::vector<WorkerReply> replies);
  std::vector<WorkerReply> Drain(Executor& executor, Deadline deadline);
  // A kTimedOut reply for every worker still out.
  void AppendTimedOut(std::vector<WorkerReply>& arrived) const;
  bool MayProceed(int64_t round, int answered) const;

  int workers_;
  int barrier_;
  int max_staleness_;
  std::vector<WorkerReply> latest_;
  std::vector<int64_t> outstanding_;  // the round a worker is working on, or -1 when idle
  int64_t stale_replies_ = 0;
};

}  // namespace nimbus
