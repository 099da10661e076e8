// The seam between the ADMM master and the workers, wherever they run: threads in this
// process, local processes, Lambda functions or MPI ranks. A round goes in, one reply per
// worker comes out; every wait has a deadline; a failed worker is a reply with a status,
// never an exception or a crash of the master.
#pragma once

#include <string>
#include <vector>

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
  // Runs one round on every worker; returns the replies in worker order. A worker that
  // failed or missed the deadline has status kFailed or kTimedOut and an error text.
  virtual std::vector<WorkerReply> RunRound(const RoundRequest& request, Deadline deadline) = 0;
  // Releases the workers. Safe to call more than once.
  virtual void Stop() = 0;
};

}  // namespace nimbus
