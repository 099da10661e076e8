// The seam between the ADMM master and the workers, wherever they run: threads in this
// process, local processes, Lambda functions or MPI ranks. Rounds go out, replies come back;
// every wait has a deadline; a failed worker is a reply with a status, never an exception or
// a crash of the master.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "nimbus/executor/summary.h"
#include "nimbus/core/clock.h"
#include "nimbus/core/status.h"
#include "nimbus/problem/problem.h"
#include "nimbus/wire/messages.h"

namespace nimbus {

// The state a worker held after answering `last` (with `previous` the round before):
//
//   u  = (w_prev - z_last) * rho_prev / rho_last    (the dual after round `last`)
//   xh = w_last - u                                  (w_last = xh + u)
//   x  = (xh - (1 - alpha) z_last) / alpha
//
// (without `previous`, u = 0: the dual starts at zero.) A worker given this state runs its
// next round as the original would have, up to rounding in the subtraction.
ResumeState RebuildResumeState(const KeptAnswer* previous, const KeptAnswer& last);

// How far the workers' reading of their text has come, for ScanText's observer.
struct ScanProgress {
  uint64_t bytes_read = 0, bytes_total = 0;  // from the store (a compressed file's bytes as stored)
  int scanned = 0, workers = 0;              // the workers done reading, of all
};
using ScanObserver = std::function<void(const ScanProgress&)>;

class Executor {
 public:
  virtual ~Executor() = default;
  // "threads", "process", ...
  virtual std::string name() const = 0;
  virtual int workers() const = 0;
  // Starts the workers and waits until each has loaded its shard (its cold start). Fails
  // with a message naming the worker if one cannot start before the deadline.
  virtual Result<std::vector<WorkerReady>> Start(Deadline deadline) = 0;
  // Text the workers read themselves (wire/messages.h: TextPart): starts them, each reads and
  // scans its own part, and returns every scan in worker order; the workers hold their rows
  // until SetTextPlan tells them what the whole is. A bad line fails it, named by its file
  // and line. `observe` (if set) hears how far the reading has come, about once a second
  // where the runtime can tell (else as workers finish), and once when all are done.
  virtual Result<std::vector<TextScanned>> ScanText(Deadline /*deadline*/, const ScanObserver& /*observe*/) {
    return FailedPrecondition("the " + name() + " runtime does not read text itself");
  }
  // After ScanText, before Start: the problem the scans made (rows, columns, classes) and each
  // worker's part of the plan.
  virtual Status SetTextPlan(const ProblemSpec& /*spec*/, std::vector<TextPlanned> /*parts*/) {
    return FailedPrecondition("the " + name() + " runtime does not read text itself");
  }
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

  // Where the w_i are summed for the z-update. By default the master sums the replies it
  // collected. A runtime whose processes are all workers, each running the master's logic on
  // the same numbers (MPI allreduce), sums among them instead: ReduceScatter gives this
  // process the sums for its block of coordinates, it computes z there, and AllGather hands
  // every process the whole z.
  virtual bool SumsAmongWorkers() const { return false; }
  struct ReducedBlock {
    std::size_t begin = 0;      // the block's first coordinate
    std::vector<double> sums;   // sum over the workers holding coordinate begin + j of their w
  };
  // `replies` are the round's; the process's own carries its w.
  virtual Result<ReducedBlock> ReduceScatter(const std::vector<WorkerReply>& /*replies*/) {
    return FailedPrecondition(name() + " workers do not sum among themselves");
  }
  // z arrives with this process's block filled in; returns with all of it.
  virtual Status AllGather(std::vector<double>& /*z*/) { return FailedPrecondition(name() + " has no AllGather"); }

  // A resumed run: called after Start and before the first round with each worker's last
  // two answers before the master was lost (from a checkpoint); each worker's next round
  // starts from the state they imply (RebuildResumeState), as a replacement worker's would.
  virtual Status Restore(const std::vector<WorkerHistory>& /*histories*/) {
    return FailedPrecondition("the " + name() + " runtime cannot resume a run from a checkpoint");
  }

  // One synchronous round: dispatch to every worker and collect every reply, in worker
  // order; a worker that did not reply by the deadline gets a kTimedOut reply.
  std::vector<WorkerReply> RunRound(const RoundRequest& request, Deadline deadline);
  // The same with a question of its own for each worker: requests[i] to worker i, all of one
  // round (the column method's blocks).
  std::vector<WorkerReply> RunRound(std::span<const RoundRequest> requests, Deadline deadline);

 private:
  // Every worker's reply to `round`, in worker order, kTimedOut for those not in by the deadline.
  std::vector<WorkerReply> CollectRound(int64_t round, Deadline deadline);
};

}  // namespace nimbus
