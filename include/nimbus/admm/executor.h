// The seam between the ADMM master and the workers, wherever they run: threads in this
// process, local processes, Lambda functions or MPI ranks. Rounds go out, replies come back;
// every wait has a deadline; a failed worker is a reply with a status, never an exception or
// a crash of the master.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "nimbus/admm/summary.h"
#include "nimbus/core/clock.h"
#include "nimbus/core/status.h"
#include "nimbus/wire/messages.h"

namespace nimbus {

class Executor {
 public:
  virtual ~Executor() = default;
  // "threads", "process", ...
  virtual std::string name() const = 0;
  virtual int workers() const = 0;
  // Starts the workers and waits until each has loaded its shard (its cold start). Fails
  // with a message naming the worker if one cannot start before the deadline.
  virtual Result<std::vector<WorkerReady>> Start(Deadline deadline) = 0;
  // Sends the round to these workers; each must have replied to its previous round.
  virtual void Dispatch(const RoundRequest& request, std::span<const int> workers) = 0;
  // Waits until `count` replies to dispatched rounds are in (or every dispatched round has
  // replied) or the deadline passes, and returns the replies that came. A worker the runtime
  // could not keep alive comes back as a reply with status kFailed and the reason.
  virtual std::vector<WorkerReply> Collect(int count, Deadline deadline) = 0;
  // Releases the workers. Safe to call more than once.
  virtual void Stop() = 0;
  // Adds the runtime's own counters (restarts, bytes, dropped messages) to a summary.
  virtual void AddCounters(Summary& /*summary*/) const {}

  // One synchronous round: dispatch to every worker and collect every reply, in worker
  // order; a worker that did not reply by the deadline gets a kTimedOut reply.
  std::vector<WorkerReply> RunRound(const RoundRequest& request, Deadline deadline);
};

}  // namespace nimbus
