// Runtime "mpi": `mpirun -n K+1 nimbus train --runtime mpi ...`. Rank 0 runs the master,
// ranks 1..K the workers: the star of the other runtimes over MPI point-to-point messages
// that carry the same encoded messages (wire/codec.h): ASSIGN, READY, ROUND, REPLY, BYE.
// Workers load their shards from a store every rank can reach (a shared directory or S3).
// An MPI job ends as a whole when one of its ranks fails, so workers are not replaced here.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nimbus/executor/executor.h"
#include "nimbus/core/status.h"
#include "nimbus/problem/problem.h"
#include "nimbus/runtime/remote_executor.h"
#include "nimbus/transport/transport.h"
#include "nimbus/worker/shard_worker.h"
#include "nimbus/worker/text_part.h"

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
// Sends do not block: a large MPI message waits for its receiver to be ready, and a master
// sending ROUNDs one after the other would wait for each worker in turn, while a blocked
// sender spins on a core others need. Sends complete while the rank waits to receive, and
// at the latest when the transport is destroyed.
class MpiTransport final : public Transport {
 public:
  explicit MpiTransport(uint64_t run_id) : Transport(run_id) {}
  ~MpiTransport() override;

 protected:
  Status SendFrames(const std::string& peer, const std::vector<Frame>& frames) override;
  Result<RawIncoming> ReceiveFrames(Deadline deadline) override;

 private:
  // One message on its way: its header and frames stay alive until MPI is done with them.
  struct PendingSend {
    std::vector<uint64_t> sizes;
    std::vector<Frame> frames;
    std::vector<MPI_Request> requests;
  };
  // Forgets the sends that completed.
  void Progress();
  std::vector<std::unique_ptr<PendingSend>> pending_;
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
  Result<std::vector<TextScanned>> ScanText(Deadline deadline, const ScanObserver& observe) override;
  Status SetTextPlan(const ProblemSpec& spec, std::vector<TextPlanned> parts) override;
  void Dispatch(const RoundRequest& request, std::span<const int> workers) override;
  std::vector<WorkerReply> Collect(int count, Deadline deadline) override;
  void Stop() override;
  void AddCounters(Summary& summary) const override;

 private:
  Status CheckRanks() const;
  Status SendAssignments(double timeout_seconds);
  // The next message from a worker rank at the start (others counted stale); a BYE is the
  // failure it reports; `late` says what did not happen by the deadline.
  Result<std::pair<int, Incoming>> NextFromWorker(Deadline deadline, const std::string& late);
  bool assigned_ = false;  // the ASSIGNs with the plan went out (SetTextPlan)
  std::vector<ShardAssignment> shards_;
  ProblemSpec spec_;
  WorkerOptions worker_options_;
  MpiTransport transport_;
  std::vector<std::optional<int64_t>> awaited_;  // per worker: the round whose reply is due
  std::vector<std::shared_ptr<const std::vector<uint32_t>>> supports_;  // general form
  std::vector<double> sent_wall_;                // when each worker's ROUND went out
  std::vector<int64_t> sent_bytes_;
  std::vector<int64_t> last_evaluated_;          // the last Newton evaluation sent to each worker
  bool started_ = false, stopped_ = false;
};

// `--topology allreduce`: `mpirun -n K nimbus train --runtime mpi --topology allreduce`. Every
// rank is a worker and also runs the master's logic, on numbers all ranks share, so no rank
// carries the others' traffic. The scalars of the stop test reach every rank by MPI_Allgather,
// and z^{k+1} comes from an allreduce of the w_i cut at its middle: MPI_Reduce_scatter leaves
// each rank the sums for its block of coordinates, the rank computes z there, and
// MPI_Allgatherv gives every rank all of z. Each coordinate of z is computed once, so all
// ranks hold the same z bit for bit and make the same decisions. Rank 0 plans the data, hands
// out the shards (rank r loads shard r) and writes the outputs.
class MpiAllreduceExecutor final : public Executor {
 public:
  // Rank 0: sends ranks 1..K-1 their assignments at Start and keeps shard 0.
  MpiAllreduceExecutor(const std::vector<ShardAssignment>& shards, const ProblemSpec& spec,
                       const WorkerOptions& worker_options, uint64_t run_id);
  // Ranks 1..K-1: with the assignment rank 0 sent (ReceiveAllreduceAssignment), and the rows
  // of its part of the text if the rank read them already (AwaitAllreducePlan).
  MpiAllreduceExecutor(int rank, int size, AssignBody assignment, uint64_t run_id,
                       std::optional<TextPartRows> rows = std::nullopt);
  ~MpiAllreduceExecutor() override;

  std::string name() const override { return "mpi-allreduce"; }
  int workers() const override { return size_; }
  Result<std::vector<WorkerReady>> Start(Deadline deadline) override;
  // Runs this rank's worker; every rank dispatches to all workers.
  void Dispatch(const RoundRequest& request, std::span<const int> workers) override;
  // Every worker's reply (this rank's with its w, the others' without), in worker order.
  std::vector<WorkerReply> Collect(int count, Deadline deadline) override;
  void Stop() override {}
  void AddCounters(Summary& summary) const override;

  bool SumsAmongWorkers() const override { return true; }
  Result<ReducedBlock> ReduceScatter(const std::vector<WorkerReply>& replies) override;
  Status AllGather(std::vector<double>& z) override;
  // Rank 0, text: every rank reads its part (rank 0 its own here) and sends rank 0 its scan.
  Result<std::vector<TextScanned>> ScanText(Deadline deadline, const ScanObserver& observe) override;
  Status SetTextPlan(const ProblemSpec& spec, std::vector<TextPlanned> parts) override;

 private:
  // Rank 0: hands ranks 1..K-1 their assignments.
  Status SendAssignments();
  // Loads this rank's shard; *spec becomes the problem its assignment names.
  Result<WorkerReady> LoadShard(ProblemSpec* spec);
  // Rank r's block of the model's n coordinates of z: [r n / K, (r + 1) n / K).
  Status PlanBlocks(std::size_t n);
  void CountRingTraffic();

  int rank_ = 0, size_ = 1;
  std::size_t model_size_ = 0;
  std::vector<AssignBody> assignments_;  // rank 0: everyone's; others: their own alone
  std::vector<ShardAssignment> shards_;  // rank 0: for assignments made anew with the plan
  WorkerOptions worker_options_;
  std::optional<TextPartRows> text_rows_;  // this rank's part of the text, read
  bool assigned_ = false;                  // rank 0: the planned assignments went out
  uint64_t run_id_;
  double process_start_wall_;
  std::unique_ptr<ShardWorker> worker_;
  std::shared_ptr<const std::vector<uint32_t>> support_;  // general form: this rank's
  std::vector<int> block_sizes_, block_starts_;           // the ranks' blocks of z
  std::optional<WorkerReply> reply_;                      // this rank's reply to the round
  std::vector<double> scattered_;                         // w on the model's coordinates
  int64_t bytes_sent_ = 0, bytes_received_ = 0;
  bool started_ = false;
};

// Ranks 1..K-1 of the allreduce topology: the assignment from rank 0.
Result<AssignBody> ReceiveAllreduceAssignment(uint64_t run_id, Deadline deadline);
// For an assignment of text without its plan: reads the part, sends rank 0 its scan, and waits
// for the assignment with the plan (*assignment becomes it); the rows read, or none for a
// shard. A failure is told to rank 0 too.
Result<std::optional<TextPartRows>> AwaitAllreducePlan(int rank, uint64_t run_id, AssignBody* assignment,
                                                       Deadline deadline);

// The body of ranks 1..K: take the ASSIGN, load the shard, say READY, serve rounds until
// BYE. Returns the process's exit code (worker_process.h).
int RunMpiWorker(int rank, uint64_t run_id, double process_start_wall);

// How a job ends on an error rank 0 reports: rank 0 tells every other rank to end (a BYE each,
// as the star's worker `rank - 1` or the allreduce's rank `rank`) and each ends as a job does,
// with MPI_Finalize; the job's exit status is rank 0's. (MPI_Abort raced the ranks already in
// MPI_Finalize, and mpirun itself crashed now and then as it ended the job.)
void TellEveryRankTheJobEnds(uint64_t run_id, int size, bool allreduce, const std::string& why);
// A rank that told rank 0 of its failure waits here for that word (true), at most until the
// deadline (false: the job must be ended by abort).
bool AwaitTheJobsEnd(MpiTransport& transport, Deadline deadline);
// The failure of a rank that rank 0 told to end (its own report is rank 0's to make).
inline constexpr const char* kJobEnded = "rank 0 ended the job";

}  // namespace nimbus
