// The allreduce topology of the mpi runtime (mpi_runtime.h): every rank a worker, z from a
// reduce-scatter and an allgather, the stop test's scalars from an allgather.
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "nimbus/core/clock.h"
#include "nimbus/core/vector_ops.h"
#include "nimbus/mpi/mpi_runtime.h"
#include "nimbus/runtime/worker_process.h"
#include "rank_envelope.h"

namespace nimbus {
namespace {

// Text that crosses ranks in fixed-size records is cut to this.
constexpr std::size_t kErrorText = 240;

Status CollectiveError(const std::string& what, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return Unavailable(what + ": " + std::string(text, static_cast<std::size_t>(length)));
}

void CopyText(const std::string& from, char (&to)[kErrorText]) {
  const std::size_t n = std::min(from.size(), kErrorText - 1);
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
}

// What each rank tells the others once its shard is loaded.
struct ReadyRecord {
  int32_t ok = 0;
  int32_t general_form = 0;
  int64_t rows = 0, cols = 0, nnz = 0;
  int64_t support_size = 0;
  double curvature_trace = 0;
  double load_seconds = 0;
  double process_start_wall = 0;
  double ready_wall = 0;
  char error[kErrorText] = {};
};

// What each rank tells the others of its round: the scalars of the stop test and its timings.
struct ReplyRecord {
  int32_t status = 0;
  int64_t round = 0;
  WorkerScalars scalars;
  WorkerTimings timings;
  char error[kErrorText] = {};
};
static_assert(std::is_trivially_copyable_v<ReadyRecord> && std::is_trivially_copyable_v<ReplyRecord>);

// Every rank's record, in rank order.
template <typename Record>
Result<std::vector<Record>> AllgatherRecords(const Record& own, int size, int64_t* bytes_sent, int64_t* bytes_received) {
  std::vector<Record> all(static_cast<std::size_t>(size));
  if (const int code = MPI_Allgather(&own, sizeof(Record), MPI_BYTE, all.data(), sizeof(Record), MPI_BYTE, MPI_COMM_WORLD);
      code != MPI_SUCCESS) {
    return CollectiveError("MPI_Allgather", code);
  }
  *bytes_sent += static_cast<int64_t>(sizeof(Record));
  *bytes_received += static_cast<int64_t>(sizeof(Record)) * (size - 1);
  return all;
}

// What this rank tells the others of its shard: what it holds once loaded, or why it did not load.
ReadyRecord MakeReadyRecord(const Result<WorkerReady>& ready, double process_start_wall) {
  ReadyRecord record;
  if (ready.ok()) {
    record.ok = 1;
    record.general_form = ready->support != nullptr ? 1 : 0;
    record.rows = ready->rows;
    record.cols = ready->cols;
    record.nnz = ready->nnz;
    record.support_size = ready->support != nullptr ? static_cast<int64_t>(ready->support->size()) : 0;
    record.curvature_trace = ready->curvature_trace;
    record.load_seconds = ready->load_seconds;
  } else {
    CopyText(ready.status().message(), record.error);
  }
  record.process_start_wall = process_start_wall;
  record.ready_wall = WallSeconds();
  return record;
}

Status CheckAllLoaded(const std::vector<ReadyRecord>& records) {
  for (int r = 0; r < static_cast<int>(records.size()); ++r) {
    const ReadyRecord& record = records[static_cast<std::size_t>(r)];
    if (!record.ok) {
      return Unavailable("worker " + std::to_string(r) + " (rank " + std::to_string(r) + ") could not start: " +
                         record.error);
    }
  }
  return Status::Ok();
}

// General form: the supports of all workers, in rank order.
using Supports = std::vector<std::shared_ptr<const std::vector<uint32_t>>>;

// Every rank's support, its size taken from the rank's record.
Result<Supports> AllgatherSupports(const std::vector<uint32_t>& own, const std::vector<ReadyRecord>& records,
                                   int64_t* bytes_sent, int64_t* bytes_received) {
  const int size = static_cast<int>(records.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), starts(static_cast<std::size_t>(size));
  int64_t total = 0;
  for (int r = 0; r < size; ++r) {
    starts[static_cast<std::size_t>(r)] = static_cast<int>(total);
    counts[static_cast<std::size_t>(r)] = static_cast<int>(records[static_cast<std::size_t>(r)].support_size);
    total += records[static_cast<std::size_t>(r)].support_size;
    if (total > std::numeric_limits<int>::max()) {
      return InvalidArgument("the workers' supports hold more than 2^31 coordinates together; use the star topology");
    }
  }
  std::vector<uint32_t> all(static_cast<std::size_t>(total));
  if (const int code = MPI_Allgatherv(own.data(), static_cast<int>(own.size()), MPI_UINT32_T, all.data(),
                                      counts.data(), starts.data(), MPI_UINT32_T, MPI_COMM_WORLD);
      code != MPI_SUCCESS) {
    return CollectiveError("MPI_Allgatherv of the supports", code);
  }
  *bytes_sent += static_cast<int64_t>(own.size() * sizeof(uint32_t));
  *bytes_received += (total - static_cast<int64_t>(own.size())) * static_cast<int64_t>(sizeof(uint32_t));
  Supports supports(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    const auto begin = all.begin() + starts[static_cast<std::size_t>(r)];
    supports[static_cast<std::size_t>(r)] =
        std::make_shared<const std::vector<uint32_t>>(begin, begin + counts[static_cast<std::size_t>(r)]);
  }
  return supports;
}

std::vector<WorkerReady> ReadyFromRecords(const std::vector<ReadyRecord>& records, const Supports& supports) {
  std::vector<WorkerReady> ready;
  for (int r = 0; r < static_cast<int>(records.size()); ++r) {
    const ReadyRecord& record = records[static_cast<std::size_t>(r)];
    WorkerReady w;
    w.worker = r;
    w.rows = record.rows;
    w.cols = record.cols;
    w.nnz = record.nnz;
    w.curvature_trace = record.curvature_trace;
    w.load_seconds = record.load_seconds;
    w.invocation = 1;
    w.process_start_wall = record.process_start_wall;
    w.ready_wall = record.ready_wall;
    w.support = supports[static_cast<std::size_t>(r)];
    ready.push_back(std::move(w));
  }
  return ready;
}

}  // namespace

MpiAllreduceExecutor::MpiAllreduceExecutor(const std::vector<ShardAssignment>& shards, const ProblemSpec& spec,
                                           const WorkerOptions& worker_options, uint64_t run_id)
    : rank_(0), size_(static_cast<int>(shards.size())), shards_(shards), worker_options_(worker_options),
      run_id_(run_id), process_start_wall_(WallSeconds()) {
  for (const ShardAssignment& shard : shards) {
    // The ranks live and die together, so no heartbeats; the timeout only bounds a wait.
    assignments_.push_back(MakeAssignBody(shard, spec, worker_options, /*heartbeat_seconds=*/0,
                                          /*master_timeout_seconds=*/3600));
  }
}

MpiAllreduceExecutor::MpiAllreduceExecutor(int rank, int size, AssignBody assignment, uint64_t run_id,
                                           std::optional<TextPartRows> rows)
    : rank_(rank), size_(size), assignments_{std::move(assignment)}, text_rows_(std::move(rows)), run_id_(run_id),
      process_start_wall_(WallSeconds()) {}

MpiAllreduceExecutor::~MpiAllreduceExecutor() = default;

Result<AssignBody> ReceiveAllreduceAssignment(uint64_t run_id, Deadline deadline) {
  MpiTransport transport(run_id);
  while (true) {
    Result<Incoming> incoming = transport.Receive(deadline);
    if (!incoming.ok()) return incoming.status().WithContext("no assignment from rank 0");
    if (incoming->peer != "0") continue;
    if (incoming->message.envelope.type == MessageType::kBye) return FailedPrecondition(kJobEnded);
    if (incoming->message.envelope.type != MessageType::kAssign) continue;
    return UnpackAssign(incoming->message);
  }
}

Result<std::optional<TextPartRows>> AwaitAllreducePlan(int rank, uint64_t run_id, AssignBody* assignment,
                                                       Deadline deadline) {
  if (!assignment->text || assignment->text->plan) return std::optional<TextPartRows>();
  MpiTransport transport(run_id);
  Result<TextPartRows> read = ReadAssignedText(*assignment);
  if (!read.ok()) {
    (void)transport.Send("0", PackBye(RankEnvelope(rank, MessageType::kBye), {"fatal: " + read.status().message()}));
    // Rank 0 reports it and ends the job; this rank ends with it.
    return AwaitTheJobsEnd(transport, Deadline::After(20)) ? FailedPrecondition(kJobEnded) : read.status();
  }
  NIMBUS_RETURN_IF_ERROR(transport.Send("0", PackScanned(RankEnvelope(rank, MessageType::kScanned), {read->scan})));
  NIMBUS_ASSIGN_OR_RETURN(*assignment, ReceiveAllreduceAssignment(run_id, deadline));
  if (!assignment->text || !assignment->text->plan) return DataLoss("the plan of the text came without the text");
  return std::optional<TextPartRows>(std::move(read).value());
}

Result<std::vector<TextScanned>> MpiAllreduceExecutor::ScanText(Deadline deadline, const ScanObserver& observe) {
  if (rank_ != 0 || started_) return FailedPrecondition("ScanText: rank 0, before the start");
  NIMBUS_RETURN_IF_ERROR(SendAssignments());
  NIMBUS_ASSIGN_OR_RETURN(TextPartRows own, ReadAssignedText(assignments_.front()));
  std::vector<std::optional<TextScanned>> scans(static_cast<std::size_t>(size_));
  scans[0] = own.scan;
  text_rows_ = std::move(own);
  MpiTransport transport(run_id_);
  for (int waiting = size_ - 1; waiting > 0;) {
    Result<Incoming> incoming = transport.Receive(deadline);
    if (!incoming.ok()) return DeadlineExceeded("the ranks did not read their parts of the data before the start deadline");
    const int rank = std::atoi(incoming->peer.c_str());
    if (rank <= 0 || rank >= size_ || scans[static_cast<std::size_t>(rank)]) continue;
    if (incoming->message.envelope.type == MessageType::kBye) {
      Result<ByeBody> bye = UnpackBye(incoming->message);
      const std::string reason = bye.ok() ? bye->reason : bye.status().message();
      const auto bad_data = reason.find(kBadData);
      if (bad_data != std::string::npos) {
        return InvalidArgument(reason.substr(bad_data + std::string(kBadData).size()) + " (rank " +
                               std::to_string(rank) + ")");
      }
      return Unavailable("rank " + std::to_string(rank) + " could not read its part of the data: " + reason);
    }
    Result<ScannedBody> scanned = UnpackScanned(incoming->message);
    if (!scanned.ok()) continue;
    scans[static_cast<std::size_t>(rank)] = std::move(scanned->scan);
    --waiting;
  }
  if (observe) {
    // The ranks tell of their reading when they are done: reported once, all of it.
    ScanProgress progress{0, 0, size_, size_};
    for (const AssignBody& assignment : assignments_) progress.bytes_total += assignment.text ? TextBytes(*assignment.text) : 0;
    progress.bytes_read = progress.bytes_total;
    observe(progress);
  }
  std::vector<TextScanned> all;
  for (std::optional<TextScanned>& scan : scans) all.push_back(std::move(*scan));
  return all;
}

Status MpiAllreduceExecutor::SetTextPlan(const ProblemSpec& spec, std::vector<TextPlanned> parts) {
  if (rank_ != 0 || parts.size() != shards_.size()) return InvalidArgument("SetTextPlan: rank 0, one part per rank");
  assignments_.clear();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    shards_[i].text->plan = std::move(parts[i]);
    assignments_.push_back(MakeAssignBody(shards_[i], spec, worker_options_, /*heartbeat_seconds=*/0,
                                          /*master_timeout_seconds=*/3600));
  }
  NIMBUS_RETURN_IF_ERROR(SendAssignments());
  assigned_ = true;
  return Status::Ok();
}

Status MpiAllreduceExecutor::SendAssignments() {
  MpiTransport transport(run_id_);
  for (int worker = 1; worker < size_; ++worker) {
    NIMBUS_RETURN_IF_ERROR(transport.Send(std::to_string(worker),
                                          PackAssign(RankEnvelope(worker, MessageType::kAssign), assignments_[static_cast<std::size_t>(worker)]))
                               .WithContext("worker " + std::to_string(worker)));
  }
  return Status::Ok();
}

Result<WorkerReady> MpiAllreduceExecutor::LoadShard(ProblemSpec* spec) {
  double load_seconds = 0;
  std::optional<Dataset> rows;
  if (text_rows_) {
    load_seconds = text_rows_->seconds;
    NIMBUS_ASSIGN_OR_RETURN(rows, FinishAssignedText(std::move(*text_rows_), assignments_.front()));
    text_rows_.reset();
  }
  NIMBUS_ASSIGN_OR_RETURN(worker_, MakeAssignedWorker(rank_, assignments_.front(), spec, &load_seconds, std::move(rows)));
  WorkerReady ready = worker_->Ready(load_seconds);
  support_ = ready.support;
  return ready;
}

Status MpiAllreduceExecutor::PlanBlocks(std::size_t n) {
  model_size_ = n;
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    return InvalidArgument("a model of " + std::to_string(n) + " coordinates is more than one MPI message holds");
  }
  block_sizes_.resize(static_cast<std::size_t>(size_));
  block_starts_.resize(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    const auto begin = n * static_cast<std::size_t>(r) / static_cast<std::size_t>(size_);
    const auto end = n * static_cast<std::size_t>(r + 1) / static_cast<std::size_t>(size_);
    block_starts_[static_cast<std::size_t>(r)] = static_cast<int>(begin);
    block_sizes_[static_cast<std::size_t>(r)] = static_cast<int>(end - begin);
  }
  if (support_ != nullptr) scattered_.assign(n, 0.0);
  return Status::Ok();
}

Result<std::vector<WorkerReady>> MpiAllreduceExecutor::Start(Deadline deadline) {
  if (started_) return FailedPrecondition("the mpi runtime was already started");
  started_ = true;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != size_) {
    return InvalidArgument("the allreduce topology needs one rank per worker: mpirun -n " + std::to_string(size_) +
                           ", not " + std::to_string(size));
  }
  if (rank_ == 0 && !assigned_) NIMBUS_RETURN_IF_ERROR(SendAssignments());
  (void)deadline;  // the collectives below wait for every rank; a rank that dies ends the job

  // This rank's shard (its assignment is the first it holds); whether it loaded or not, every
  // rank hears of it.
  ProblemSpec spec;
  const ReadyRecord own = MakeReadyRecord(LoadShard(&spec), process_start_wall_);
  NIMBUS_ASSIGN_OR_RETURN(std::vector<ReadyRecord> records, AllgatherRecords(own, size_, &bytes_sent_, &bytes_received_));
  NIMBUS_RETURN_IF_ERROR(CheckAllLoaded(records));

  // The supports, so that every rank knows how many workers hold each coordinate.
  Supports supports(static_cast<std::size_t>(size_));
  if (own.general_form) {
    NIMBUS_ASSIGN_OR_RETURN(supports, AllgatherSupports(*support_, records, &bytes_sent_, &bytes_received_));
  }
  NIMBUS_RETURN_IF_ERROR(PlanBlocks(spec.model_size()));
  return ReadyFromRecords(records, supports);
}

void MpiAllreduceExecutor::Dispatch(const RoundRequest& request, std::span<const int> /*workers*/) {
  const double receive_wall = WallSeconds();
  reply_ = worker_->Serve(request, 1);
  reply_->timings.receive_wall = receive_wall;
  reply_->timings.send_wall = WallSeconds();
}

std::vector<WorkerReply> MpiAllreduceExecutor::Collect(int /*count*/, Deadline /*deadline*/) {
  std::vector<WorkerReply> replies;
  if (!reply_) return replies;
  ReplyRecord own;
  own.status = static_cast<int32_t>(reply_->status);
  own.round = reply_->round;
  own.scalars = reply_->scalars;
  own.timings = reply_->timings;
  CopyText(reply_->error, own.error);
  Result<std::vector<ReplyRecord>> records = AllgatherRecords(own, size_, &bytes_sent_, &bytes_received_);
  const double arrival_wall = WallSeconds();
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) {
      replies.push_back(std::move(*reply_));
      replies.back().timings.arrival_wall = arrival_wall;
      continue;
    }
    WorkerReply reply;
    reply.worker = r;
    reply.invocation = 1;
    if (!records.ok()) {
      reply.status = ReplyStatus::kFailed;
      reply.error = records.status().message();
      replies.push_back(std::move(reply));
      continue;
    }
    const ReplyRecord& record = (*records)[static_cast<std::size_t>(r)];
    reply.round = record.round;
    reply.status = static_cast<ReplyStatus>(record.status);
    reply.error = record.error;
    reply.scalars = record.scalars;
    reply.timings = record.timings;
    reply.timings.arrival_wall = arrival_wall;
    replies.push_back(std::move(reply));
  }
  reply_.reset();
  return replies;
}

Result<Executor::ReducedBlock> MpiAllreduceExecutor::ReduceScatter(const std::vector<WorkerReply>& replies) {
  const auto own = std::find_if(replies.begin(), replies.end(), [&](const WorkerReply& r) { return r.worker == rank_; });
  if (own == replies.end()) return FailedPrecondition("no reply of this rank's worker to sum");
  // Every rank puts in its w on the model's coordinates (zero where it holds none).
  const double* contribution = own->w.data();
  if (support_ != nullptr) {
    Fill(scattered_, 0.0);
    for (std::size_t k = 0; k < support_->size(); ++k) scattered_[(*support_)[k]] = own->w[k];
    contribution = scattered_.data();
  }
  ReducedBlock block;
  block.begin = static_cast<std::size_t>(block_starts_[static_cast<std::size_t>(rank_)]);
  block.sums.resize(static_cast<std::size_t>(block_sizes_[static_cast<std::size_t>(rank_)]));
  if (const int code = MPI_Reduce_scatter(contribution, block.sums.data(), block_sizes_.data(), MPI_DOUBLE, MPI_SUM,
                                          MPI_COMM_WORLD);
      code != MPI_SUCCESS) {
    return CollectiveError("MPI_Reduce_scatter", code);
  }
  CountRingTraffic();
  return block;
}

Status MpiAllreduceExecutor::AllGather(std::vector<double>& z) {
  if (const int code = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, z.data(), block_sizes_.data(),
                                      block_starts_.data(), MPI_DOUBLE, MPI_COMM_WORLD);
      code != MPI_SUCCESS) {
    return CollectiveError("MPI_Allgatherv of z", code);
  }
  CountRingTraffic();
  return Status::Ok();
}

void MpiAllreduceExecutor::CountRingTraffic() {
  // What a ring algorithm moves through each rank, out and in: every block but its own.
  const auto others = static_cast<int64_t>(model_size_) - block_sizes_[static_cast<std::size_t>(rank_)];
  bytes_sent_ += others * static_cast<int64_t>(sizeof(double));
  bytes_received_ += others * static_cast<int64_t>(sizeof(double));
}

void MpiAllreduceExecutor::AddCounters(Summary& summary) const {
  summary.bytes_sent += bytes_sent_;
  summary.bytes_received += bytes_received_;
}

}  // namespace nimbus
