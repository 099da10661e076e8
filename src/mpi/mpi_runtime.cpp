#include "nimbus/mpi/mpi_runtime.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <thread>

#include "nimbus/core/clock.h"
#include "nimbus/runtime/worker_process.h"
#include "rank_envelope.h"

namespace nimbus {
namespace {

// A message is a header (its frames' sizes) and then each frame as a message of its own, so
// a model-sized frame goes out from where it lies, without a copy. MPI keeps the messages of
// one sender and tag in order.
constexpr int kHeaderTag = 7101;
constexpr int kFrameTag = 7102;

Status MpiError(const std::string& what, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return Unavailable(what + ": " + std::string(text, static_cast<std::size_t>(length)));
}

Result<int> RankOf(const std::string& peer) {
  char* end = nullptr;
  const long rank = std::strtol(peer.c_str(), &end, 10);
  if (peer.empty() || *end != '\0' || rank < 0) return InvalidArgument("'" + peer + "' is not a rank");
  return static_cast<int>(rank);
}

}  // namespace

Result<std::unique_ptr<MpiSession>> MpiSession::Start(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return FailedPrecondition("MPI was already started in this process");
  int provided = 0;
  if (const int code = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided); code != MPI_SUCCESS) {
    return MpiError("cannot start MPI", code);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  std::unique_ptr<MpiSession> session(new MpiSession());
  MPI_Comm_rank(MPI_COMM_WORLD, &session->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &session->size_);
  return session;
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (!normal_end_ && size_ > 1) Abort(1);
  MPI_Finalize();
}

void MpiSession::Abort(int exit_code) {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

uint64_t MpiSession::ShareRunId() const {
  uint64_t run_id = 0;
  if (rank_ == 0) {
    std::random_device device;
    while (run_id == 0) run_id = (static_cast<uint64_t>(device()) << 32) ^ device();
  }
  MPI_Bcast(&run_id, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return run_id;
}

MpiTransport::~MpiTransport() {
  for (const std::unique_ptr<PendingSend>& send : pending_) {
    MPI_Waitall(static_cast<int>(send->requests.size()), send->requests.data(), MPI_STATUSES_IGNORE);
  }
}

void MpiTransport::Progress() {
  std::erase_if(pending_, [](const std::unique_ptr<PendingSend>& send) {
    int done = 0;
    MPI_Testall(static_cast<int>(send->requests.size()), send->requests.data(), &done, MPI_STATUSES_IGNORE);
    return done != 0;
  });
}

Status MpiTransport::SendFrames(const std::string& peer, const std::vector<Frame>& frames) {
  NIMBUS_ASSIGN_OR_RETURN(const int rank, RankOf(peer));
  auto send = std::make_unique<PendingSend>();
  send->frames = frames;
  for (const Frame& frame : frames) {
    if (frame.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
      return InvalidArgument("a frame of " + std::to_string(frame.size()) + " bytes is more than one MPI message holds");
    }
    send->sizes.push_back(frame.size());
  }
  auto post = [&](const void* data, int count, MPI_Datatype type, int tag) {
    MPI_Request request = MPI_REQUEST_NULL;
    const int code = MPI_Isend(data, count, type, rank, tag, MPI_COMM_WORLD, &request);
    if (code == MPI_SUCCESS) send->requests.push_back(request);
    return code;
  };
  int code = post(send->sizes.data(), static_cast<int>(send->sizes.size()), MPI_UINT64_T, kHeaderTag);
  for (std::size_t i = 0; code == MPI_SUCCESS && i < send->frames.size(); ++i) {
    const Frame& frame = send->frames[i];
    if (frame.size() > 0) code = post(frame.data(), static_cast<int>(frame.size()), MPI_BYTE, kFrameTag);
  }
  if (code != MPI_SUCCESS) {
    // What was posted must finish before its buffers go.
    MPI_Waitall(static_cast<int>(send->requests.size()), send->requests.data(), MPI_STATUSES_IGNORE);
    return MpiError("cannot send to rank " + peer, code);
  }
  pending_.push_back(std::move(send));
  Progress();
  return Status::Ok();
}

Result<Transport::RawIncoming> MpiTransport::ReceiveFrames(Deadline deadline) {
  MPI_Status status;
  // Poll, yielding at first and then sleeping, longer the longer the wait (50 us to 1 ms), so
  // that waiting ranks leave the cores to the ranks that compute: with more ranks than cores,
  // ranks that wake often slow the others more than a late wake-up costs.
  auto pause = std::chrono::microseconds(50);
  for (int polls = 0;; ++polls) {
    Progress();
    int flag = 0;
    if (const int code = MPI_Iprobe(MPI_ANY_SOURCE, kHeaderTag, MPI_COMM_WORLD, &flag, &status); code != MPI_SUCCESS) {
      return MpiError("cannot receive", code);
    }
    if (flag) break;
    if (deadline.Expired()) return DeadlineExceeded("no message before the deadline");
    if (polls < 200) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(pause);
      pause = std::min(2 * pause, std::chrono::microseconds(1000));
    }
  }
  const int source = status.MPI_SOURCE;
  int count = 0;
  MPI_Get_count(&status, MPI_UINT64_T, &count);
  std::vector<uint64_t> sizes(static_cast<std::size_t>(std::max(count, 0)));
  if (const int code = MPI_Recv(sizes.data(), count, MPI_UINT64_T, source, kHeaderTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      code != MPI_SUCCESS) {
    return MpiError("cannot receive from rank " + std::to_string(source), code);
  }
  RawIncoming raw;
  raw.peer = std::to_string(source);
  for (const uint64_t size : sizes) {
    std::string bytes(size, '\0');
    if (size > 0) {
      if (const int code = MPI_Recv(bytes.data(), static_cast<int>(size), MPI_BYTE, source, kFrameTag, MPI_COMM_WORLD,
                                    MPI_STATUS_IGNORE);
          code != MPI_SUCCESS) {
        return MpiError("cannot receive from rank " + raw.peer, code);
      }
    }
    raw.frames.push_back(Frame::Adopt(std::move(bytes)));
  }
  return raw;
}

MpiExecutor::MpiExecutor(std::vector<ShardAssignment> shards, const ProblemSpec& spec,
                         const WorkerOptions& worker_options, uint64_t run_id)
    : shards_(std::move(shards)),
      spec_(spec),
      worker_options_(worker_options),
      transport_(run_id),
      awaited_(shards_.size()),
      supports_(shards_.size()),
      sent_wall_(shards_.size(), 0),
      sent_bytes_(shards_.size(), 0),
      last_evaluated_(shards_.size(), -1) {}

MpiExecutor::~MpiExecutor() { Stop(); }

Status MpiExecutor::CheckRanks() const {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != workers() + 1) {
    return InvalidArgument("the mpi runtime needs one rank per worker and one for the master: mpirun -n " +
                           std::to_string(workers() + 1) + ", not " + std::to_string(size));
  }
  return Status::Ok();
}

Status MpiExecutor::SendAssignments(double timeout_seconds) {
  for (int worker = 0; worker < workers(); ++worker) {
    // Ranks do not fail alone under MPI, so the liveness settings only bound a worker's wait.
    const AssignBody body = MakeAssignBody(shards_[static_cast<std::size_t>(worker)], spec_, worker_options_,
                                           /*heartbeat_seconds=*/0, /*master_timeout_seconds=*/timeout_seconds);
    NIMBUS_RETURN_IF_ERROR(transport_.Send(std::to_string(worker + 1), PackAssign(RankEnvelope(worker, MessageType::kAssign), body))
                               .WithContext("worker " + std::to_string(worker)));
  }
  return Status::Ok();
}

namespace {

// A worker's BYE at its start as the master reports it: a line of the data it could not read
// is the data's fault.
Status StartFailure(int worker, const std::string& reason) {
  const auto bad_data = reason.find(kBadData);
  if (bad_data != std::string::npos) {
    return InvalidArgument(reason.substr(bad_data + std::string(kBadData).size()) + " (worker " +
                           std::to_string(worker) + ")");
  }
  return Unavailable("worker " + std::to_string(worker) + " could not start: " + reason);
}

}  // namespace

Result<std::pair<int, Incoming>> MpiExecutor::NextFromWorker(Deadline deadline, const std::string& late) {
  while (true) {
    Result<Incoming> incoming = transport_.Receive(deadline);
    if (!incoming.ok()) return DeadlineExceeded(late + ": " + incoming.status().message());
    const int worker = static_cast<int>(incoming->message.envelope.worker);
    if (worker < 0 || worker >= workers() || incoming->peer != std::to_string(worker + 1)) {
      transport_.CountStale("a message from a rank that is not its worker");
      continue;
    }
    if (incoming->message.envelope.type == MessageType::kBye) {
      Result<ByeBody> bye = UnpackBye(incoming->message);
      return StartFailure(worker, bye.ok() ? bye->reason : bye.status().message());
    }
    return std::make_pair(worker, std::move(incoming).value());
  }
}

Result<std::vector<TextScanned>> MpiExecutor::ScanText(Deadline deadline, const ScanObserver& observe) {
  if (started_) return FailedPrecondition("the mpi runtime was already started");
  started_ = true;
  NIMBUS_RETURN_IF_ERROR(CheckRanks());
  NIMBUS_RETURN_IF_ERROR(SendAssignments(deadline.RemainingSeconds()));
  ScanProgress progress{0, 0, 0, workers()};
  for (const ShardAssignment& shard : shards_) progress.bytes_total += shard.text ? TextBytes(*shard.text) : 0;
  std::vector<std::optional<TextScanned>> scans(shards_.size());
  for (int waiting = workers(); waiting > 0;) {
    NIMBUS_ASSIGN_OR_RETURN(auto from, NextFromWorker(
        deadline, "the workers did not read their parts of the data before the start deadline"));
    auto& [worker, incoming] = from;
    Result<ScannedBody> scanned = UnpackScanned(incoming.message);
    if (!scanned.ok() || scans[static_cast<std::size_t>(worker)]) {
      transport_.CountStale(scanned.ok() ? "a second SCANNED" : scanned.status().message());
      continue;
    }
    scans[static_cast<std::size_t>(worker)] = std::move(scanned->scan);
    --waiting;
    // A rank tells of its reading when it is done: its part counts whole.
    const ShardAssignment& shard = shards_[static_cast<std::size_t>(worker)];
    progress.bytes_read += shard.text ? TextBytes(*shard.text) : 0;
    ++progress.scanned;
    if (observe) observe(progress);
  }
  std::vector<TextScanned> all;
  for (std::optional<TextScanned>& scan : scans) all.push_back(std::move(*scan));
  return all;
}

Status MpiExecutor::SetTextPlan(const ProblemSpec& spec, std::vector<TextPlanned> parts) {
  if (parts.size() != shards_.size()) return InvalidArgument("SetTextPlan: one part per worker");
  spec_ = spec;
  for (std::size_t i = 0; i < parts.size(); ++i) shards_[i].text->plan = std::move(parts[i]);
  NIMBUS_RETURN_IF_ERROR(SendAssignments(3600));
  assigned_ = true;
  return Status::Ok();
}

Result<std::vector<WorkerReady>> MpiExecutor::Start(Deadline deadline) {
  if (started_ && !assigned_) return FailedPrecondition("the mpi runtime was already started");
  const double start_wall = WallSeconds();
  if (!assigned_) {
    started_ = true;
    NIMBUS_RETURN_IF_ERROR(CheckRanks());
    NIMBUS_RETURN_IF_ERROR(SendAssignments(deadline.RemainingSeconds()));
  }
  std::vector<std::optional<WorkerReady>> ready(shards_.size());
  int waiting = workers();
  while (waiting > 0) {
    std::size_t late = 0;
    while (late < ready.size() && ready[late]) ++late;
    NIMBUS_ASSIGN_OR_RETURN(auto from, NextFromWorker(deadline, "worker " + std::to_string(late) + " (rank " +
                                                                    std::to_string(late + 1) +
                                                                    ") did not load its shard before the start deadline"));
    auto& [worker, incoming] = from;
    Result<ReadyBody> body = UnpackReady(incoming.message);
    if (!body.ok() || ready[static_cast<std::size_t>(worker)]) {
      transport_.CountStale(body.ok() ? "a second READY" : body.status().message());
      continue;
    }
    WorkerReady r = body->ready;
    r.worker = worker;
    r.invocation = 1;
    r.invoke_wall = start_wall;
    r.ready_wall = WallSeconds();
    ready[static_cast<std::size_t>(worker)] = r;
    supports_[static_cast<std::size_t>(worker)] = r.support;
    --waiting;
  }
  std::vector<WorkerReady> all;
  for (const std::optional<WorkerReady>& r : ready) all.push_back(*r);
  return all;
}

void MpiExecutor::Dispatch(const RoundRequest& request, std::span<const int> workers) {
  for (const int worker : workers) {
    const auto i = static_cast<std::size_t>(worker);
    awaited_[i] = request.round;
    sent_wall_[i] = WallSeconds();
    uint64_t bytes = 0;
    RoundRequest sent = request;
    if (supports_[i] != nullptr) sent.z = Gather(request.z, *supports_[i]);  // general form: its support alone
    // Ranks are never replaced: a product's point travels only after a rejected trial.
    if (request.kind == RoundKind::kEvaluate) last_evaluated_[i] = request.round;
    if (request.kind == RoundKind::kHessianVector) {
      sent.point = PointFor(request, last_evaluated_[i], supports_[i].get());
    }
    if (!transport_.Send(std::to_string(worker + 1), PackRound(RankEnvelope(worker, MessageType::kRound, request.round), sent),
                         &bytes)
             .ok()) {
      awaited_[i].reset();  // Collect reports it as failed
    }
    sent_bytes_[i] = static_cast<int64_t>(bytes);
  }
}

std::vector<WorkerReply> MpiExecutor::Collect(int count, Deadline deadline) {
  std::vector<WorkerReply> replies;
  auto outstanding = [&] {
    int n = 0;
    for (const auto& round : awaited_) n += round.has_value() ? 1 : 0;
    return n;
  };
  while (static_cast<int>(replies.size()) < count && outstanding() > 0) {
    Result<Incoming> incoming = transport_.Receive(deadline);
    if (!incoming.ok()) break;  // the deadline: the caller makes timed-out replies
    const Envelope& envelope = incoming->message.envelope;
    const int worker = static_cast<int>(envelope.worker);
    if (worker < 0 || worker >= workers() || incoming->peer != std::to_string(worker + 1) ||
        !awaited_[static_cast<std::size_t>(worker)]) {
      transport_.CountStale("a message from a rank that owes no reply");
      continue;
    }
    const auto i = static_cast<std::size_t>(worker);
    WorkerReply reply;
    if (envelope.type == MessageType::kBye) {
      Result<ByeBody> bye = UnpackBye(incoming->message);
      reply.worker = worker;
      reply.round = *awaited_[i];
      reply.status = ReplyStatus::kFailed;
      reply.error = "worker left: " + (bye.ok() ? bye->reason : bye.status().message());
    } else {
      Result<WorkerReply> unpacked =
          UnpackReply(incoming->message, supports_[i] != nullptr ? supports_[i]->size() : spec_.model_size());
      if (!unpacked.ok() || unpacked->round != *awaited_[i]) {
        transport_.CountStale(unpacked.ok() ? "a reply to another round" : unpacked.status().message());
        continue;
      }
      reply = std::move(unpacked).value();
      reply.worker = worker;
      reply.timings.arrival_wall = WallSeconds();
      reply.timings.bytes_in = sent_bytes_[i];
      reply.timings.bytes_out = static_cast<int64_t>(incoming->bytes);
    }
    awaited_[i].reset();
    replies.push_back(std::move(reply));
  }
  return replies;
}

void MpiExecutor::Stop() {
  if (!started_ || stopped_) return;
  stopped_ = true;
  for (int worker = 0; worker < workers(); ++worker) {
    (void)transport_.Send(std::to_string(worker + 1), PackBye(RankEnvelope(worker, MessageType::kBye), {"the run is over"}));
  }
}

void MpiExecutor::AddCounters(Summary& summary) const {
  summary.bytes_sent += static_cast<int64_t>(transport_.stats().bytes_sent);
  summary.bytes_received += static_cast<int64_t>(transport_.stats().bytes_received);
  summary.messages_dropped += static_cast<int64_t>(transport_.stats().dropped_malformed +
                                                   transport_.stats().dropped_foreign + transport_.stats().dropped_stale);
}

void TellEveryRankTheJobEnds(uint64_t run_id, int size, bool allreduce, const std::string& why) {
  MpiTransport transport(run_id);
  for (int rank = 1; rank < size; ++rank) {
    (void)transport.Send(std::to_string(rank),
                         PackBye(RankEnvelope(allreduce ? rank : rank - 1, MessageType::kBye), {"the job ends: " + why}));
  }
}

bool AwaitTheJobsEnd(MpiTransport& transport, Deadline deadline) {
  while (!deadline.Expired()) {
    Result<Incoming> incoming = transport.Receive(deadline);
    if (incoming.ok() && incoming->peer == "0" && incoming->message.envelope.type == MessageType::kBye) return true;
  }
  return false;
}

int RunMpiWorker(int rank, uint64_t run_id, double process_start_wall) {
  const int worker = rank - 1;
  const std::string name = "nimbus mpi worker " + std::to_string(worker) + " (rank " + std::to_string(rank) + ")";
  MpiTransport transport(run_id);
  auto error = [&](const std::string& message) {
    std::fprintf(stderr, "%s: error: %s\n", name.c_str(), message.c_str());
    return kWorkerError;
  };
  // Waits for the master's next message; ends the worker on BYE or silence.
  double master_timeout = 3600;
  auto next = [&](double timeout) -> Result<WireMessage> {
    while (true) {
      NIMBUS_ASSIGN_OR_RETURN(Incoming incoming, transport.Receive(Deadline::After(timeout)));
      if (incoming.peer != "0" || incoming.message.envelope.worker != static_cast<uint32_t>(worker)) continue;
      return std::move(incoming.message);
    }
  };
  Result<WireMessage> assign = next(master_timeout);
  if (!assign.ok()) return error("no assignment from the master: " + assign.status().message());
  if (assign->envelope.type == MessageType::kBye) return kWorkerDone;
  Result<AssignBody> body = UnpackAssign(*assign);
  if (!body.ok()) return error("bad assignment: " + body.status().message());
  if (body->master_timeout_seconds > 0) master_timeout = body->master_timeout_seconds;
  // Rank 0 reports a worker that cannot start and ends the job with the exit status it
  // calls for (2 for bad data): this rank waits for that rather than end the job first.
  auto fatal = [&](const Status& status) {
    (void)transport.Send("0", PackBye(RankEnvelope(worker, MessageType::kBye), {"fatal: " + status.message()}));
    const int code = error(status.message());
    return AwaitTheJobsEnd(transport, Deadline::After(20)) ? kWorkerDone : code;
  };
  // Its part of the text, read, scanned and (once the master's plan comes) made its shard.
  Stopwatch load_watch;
  std::optional<Dataset> rows;
  if (body->text) {
    Result<TextPartRows> read = ReadAssignedText(*body);
    if (!read.ok()) return fatal(read.status());
    while (!body->text->plan) {
      if (Status sent = transport.Send("0", PackScanned(RankEnvelope(worker, MessageType::kScanned), {read->scan}));
          !sent.ok()) {
        return error("cannot say SCANNED: " + sent.message());
      }
      assign = next(3600);
      if (!assign.ok()) return error("no plan from the master: " + assign.status().message());
      if (assign->envelope.type == MessageType::kBye) return kWorkerDone;
      body = UnpackAssign(*assign);
      if (!body.ok()) return error("bad assignment: " + body.status().message());
      if (!body->text) return fatal(InvalidArgument("the plan of the text came without the text"));
    }
    Result<Dataset> finished = FinishAssignedText(std::move(read).value(), *body);
    if (!finished.ok()) return fatal(finished.status());
    rows = std::move(finished).value();
  }
  ProblemSpec spec;
  double load_seconds = load_watch.ElapsedSeconds();
  Result<std::unique_ptr<ShardWorker>> shard_worker =
      MakeAssignedWorker(worker, *body, &spec, &load_seconds, std::move(rows));
  if (!shard_worker.ok()) return fatal(shard_worker.status());
  ReadyBody ready{(*shard_worker)->Ready(load_seconds)};
  ready.ready.process_start_wall = process_start_wall;
  if (Status sent = transport.Send("0", PackReady(RankEnvelope(worker, MessageType::kReady), ready)); !sent.ok()) {
    return error("cannot say READY: " + sent.message());
  }
  // Rounds follow one another as fast as the master sends them; the start deadline no longer
  // applies, but a master that goes silent for an hour is gone.
  master_timeout = std::max(master_timeout, 3600.0);
  while (true) {
    Result<WireMessage> message = next(master_timeout);
    const double receive_wall = WallSeconds();
    if (!message.ok()) return error("no word from the master: " + message.status().message());
    if (message->envelope.type == MessageType::kBye) return kWorkerDone;
    if (message->envelope.type != MessageType::kRound) continue;
    Result<RoundRequest> request = UnpackRound(*message, (*shard_worker)->local_size());
    if (!request.ok()) return error("bad round: " + request.status().message());
    WorkerReply reply = (*shard_worker)->Serve(*request, 1);
    reply.timings.receive_wall = receive_wall;
    reply.timings.send_wall = WallSeconds();
    if (Status sent = transport.Send("0", PackReply(RankEnvelope(worker, MessageType::kReply, request->round), reply, request->lean)); !sent.ok()) {
      return error("cannot send its reply: " + sent.message());
    }
  }
}

}  // namespace nimbus
