// Runtime "mpi": `mpirun -n K+1 nimbus train --runtime mpi ...`. Rank 0 runs the master,
// ranks 1..K the workers: the star of the other runtimes over MPI point-to-point messages
// that carry the same encoded messages (wire/codec.h): ASSIGN, READY, ROUND, REPLY, BYE.
// Workers load their shards from a store every rank can reach (a shared directory or S3).
// An MPI job ends as a whole when one of its ranks fails, so workers are not replaced here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nimbus/admm/executor.h"
#include "nimbus/core/status.h"
#include "nimbus/problem/problem.h"
#include "nimbus/runtime/remote_executor.h"
#include "nimbus/transport/transport.h"
#include "nimbus/worker/shard_worker.h"

namespace nimbus {

// MPI for this process: initialized on Start; on destruction finalized after EndNormally(),
// and otherwise the whole job is aborted (a rank that left early would leave the others
// waiting for it forever). Only the thread that started it calls MPI.
class MpiSession {
 public:
  static Result<std::unique_ptr<MpiSession>> Start(int* argc, char*** argv);
  ~MpiSession();
  void EndNormally() { normal_end_ = true; }
  bool ended_normally() const { return normal_end_; }
  // Ends every rank of the job now, with this exit status.
  [[noreturn]] void Abort(int exit_code);
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  // The run id every rank uses: rank 0 draws it and sends it to the others.
  uint64_t ShareRunId() const;

 private:
  MpiSession() = default;
  int rank_ = 0;
  int size_ = 1;
  bool normal_end_ = false;
};

// Messages to and from the other ranks of MPI_COMM_WORLD; a peer is a rank's number as text.
class MpiTransport final : public Transport {
 public:
  explicit MpiTransport(uint64_t run_id) : Transport(run_id) {}

 protected:
  Status SendFrames(const std::string& peer, const std::vector<Frame>& frames) override;
  Result<RawIncoming> ReceiveFrames(Deadline deadline) override;
};

// The master's side, on rank 0: worker i is rank i + 1.
class MpiExecutor final : public Executor {
 public:
  MpiExecutor(std::vector<ShardAssignment> shards, const ProblemSpec& spec, const WorkerOptions& worker_options,
              uint64_t run_id);
  ~MpiExecutor() override;

  std::string name() const override { return "mpi"; }
  int workers() const override { return static_cast<int>(shards_.size()); }
  Result<std::vector<WorkerReady>> Start(Deadline deadline) override;
  void Dispatch(const RoundRequest& request, std::span<const int> workers) override;
  std::vector<WorkerReply> Collect(int count, Deadline deadline) override;
  void Stop() override;
  void AddCounters(Summary& summary) const override;

 private:
  Envelope EnvelopeFor(int worker, MessageType type, int64_t round = -1) const;

  std::vector<ShardAssignment> shards_;
  ProblemSpec spec_;
  WorkerOptions worker_options_;
  MpiTransport transport_;
  std::vector<std::optional<int64_t>> awaited_;  // per worker: the round whose reply is due
  std::vector<std::shared_ptr<const std::vector<uint32_t>>> supports_;  // general form
  std::vector<double> sent_wall_;                // when each worker's ROUND went out
  std::vector<int64_t> sent_bytes_;
  bool started_ = false, stopped_ = false;
};

// The body of ranks 1..K: take the ASSIGN, load the shard, say READY, serve rounds until
// BYE. Returns the process's exit code (worker_process.h).
int RunMpiWorker(int rank, uint64_t run_id, double process_start_wall);

}  // namespace nimbus
