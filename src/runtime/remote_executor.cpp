#include "nimbus/runtime/remote_executor.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "nimbus/executor/trace_schema.h"
#include "nimbus/runtime/worker_process.h"

namespace nimbus {
namespace {

constexpr int kSilentHeartbeats = 5;  // missed heartbeats after which a worker is gone
constexpr std::size_t kRoundTimeWindow = 64;

const char* PhaseName(int phase) {
  static const char* const names[] = {"launching", "scanning", "scanned", "loading", "idle", "busy", "gone"};
  return names[phase];
}

uint64_t RandomRunId() {
  std::random_device device;
  // 63 bits: run ids travel as signed integers on command lines.
  const uint64_t id = ((static_cast<uint64_t>(device()) << 32) ^ device()) & 0x7fffffffffffffffULL;
  return id == 0 ? 1 : id;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

}  // namespace

AssignBody MakeAssignBody(const ShardAssignment& shard, const ProblemSpec& spec, const WorkerOptions& worker,
                          double heartbeat_seconds, double master_timeout_seconds) {
  AssignBody body;
  body.store_uri = shard.store_uri;
  body.shard_key = shard.key;
  body.shard_checksum = shard.checksum;
  body.loss = LossName(spec.loss);
  body.l1 = spec.regularizer.l1;
  body.l2 = spec.regularizer.l2;
  body.intercept = spec.intercept ? 1 : 0;
  body.rows = spec.rows;
  body.cols = spec.cols;
  body.classes = spec.classes;
  body.multinomial = spec.multinomial ? 1 : 0;
  body.class_weights = spec.class_weights;
  body.copies = spec.copies;
  body.copy_scales = spec.copy_scales;
  body.folds = shard.folds;
  body.local_solver = static_cast<int64_t>(worker.solver);
  body.general_form = worker.general_form ? 1 : 0;
  body.heartbeat_seconds = heartbeat_seconds;
  body.master_timeout_seconds = master_timeout_seconds;
  body.faults = EncodeFaults(worker.faults);
  body.text = shard.text;
  body.relay = shard.relay;
  return body;
}

Status RemoteOptions::Validate() const {
  auto positive = [](const char* name, double value) -> Status {
    if (!(value > 0) || !std::isfinite(value)) {
      return InvalidArgument(std::string(name) + ": must be a positive number, got " + std::to_string(value));
    }
    return Status::Ok();
  };
  NIMBUS_RETURN_IF_ERROR(positive("heartbeat_seconds", heartbeat_seconds));
  NIMBUS_RETURN_IF_ERROR(positive("launch_timeout_seconds", launch_timeout_seconds));
  NIMBUS_RETURN_IF_ERROR(positive("round_timeout_floor_seconds", round_timeout_floor_seconds));
  NIMBUS_RETURN_IF_ERROR(positive("round_timeout_multiple", round_timeout_multiple));
  NIMBUS_RETURN_IF_ERROR(positive("master_timeout_seconds", master_timeout_seconds));
  if (max_restarts < 0) return InvalidArgument("max_restarts: must be >= 0");
  if (!(max_lifetime_seconds >= 0)) return InvalidArgument("max_lifetime_seconds: must be >= 0");
  if (listen.empty()) return InvalidArgument("listen: needs an endpoint such as tcp://127.0.0.1:0");
  if (insecure && !IsLoopbackEndpoint(listen)) {
    return InvalidArgument("insecure: plaintext without authentication is allowed only on loopback (tcp://127.0.0.1), "
                           "and the master listens on " + listen);
  }
  return Status::Ok();
}

RemoteExecutor::RemoteExecutor(std::vector<ShardAssignment> shards, const ProblemSpec& spec,
                               const WorkerOptions& worker_options, const RemoteOptions& options,
                               std::unique_ptr<Launcher> launcher)
    : shards_(std::move(shards)),
      spec_(spec),
      worker_options_(worker_options),
      options_(options),
      launcher_(std::move(launcher)),
      slots_(shards_.size()) {}

RemoteExecutor::~RemoteExecutor() { Stop(); }

Envelope RemoteExecutor::EnvelopeFor(int worker, MessageType type) const {
  Envelope envelope;
  envelope.type = type;
  envelope.run_id = run_id_;
  envelope.worker = static_cast<uint32_t>(worker);
  envelope.invocation = slots_[static_cast<std::size_t>(worker)].invocation;
  return envelope;
}

void RemoteExecutor::Event(int worker, const std::string& what, const std::string& detail) {
  if (trace_ == nullptr) return;
  const TraceWorkerEvent event{.time = WallSeconds(), .worker = worker,
                               .invocation = slots_[static_cast<std::size_t>(worker)].invocation, .what = what,
                               .detail = detail.empty() ? std::nullopt : std::optional(detail)};
  trace_->Write(TraceLine(event));
}

Status RemoteExecutor::SendTo(int worker, const WireMessage& message) {
  return transport_->Send(slots_[static_cast<std::size_t>(worker)].peer, message);
}

double RemoteExecutor::RoundTimeout() const {
  return std::max(options_.round_timeout_floor_seconds, options_.round_timeout_multiple * Median(round_seconds_));
}

void RemoteExecutor::Launch(int worker) {
  Slot& slot = slots_[static_cast<std::size_t>(worker)];
  if (slot.process) {
    slot.process->Kill();
    retired_.push_back(std::move(slot.process));
  }
  ++slot.invocation;
  slot.peer.clear();
  slot.phase = Phase::kLaunching;
  slot.fresh = true;
  slot.last_evaluated = -1;
  slot.link_reconnects = 0;
  slot.text_read = 0;
  slot.launched_at = MonotonicSeconds();
  slot.launched_wall = WallSeconds();
  slot.last_heard = slot.launched_at;
  LaunchRequest request;
  request.worker = worker;
  request.invocation = slot.invocation;
  request.connect = endpoint_;
  request.run_id = run_id_;
  request.max_lifetime = options_.max_lifetime_seconds;
  request.memory_limit_bytes = options_.worker_memory_bytes;
  request.credentials = keys_.client;
  Result<std::unique_ptr<Invocation>> process = launcher_->Launch(request);
  if (!process.ok()) {
    slot.phase = Phase::kGone;
    slot.last_failure = process.status().message();
    Event(worker, "launch failed", slot.last_failure);
    return;
  }
  slot.process = std::move(process).value();
  Event(worker, "launched", "pid " + std::to_string(slot.process->pid()));
}

namespace {

std::string Megabytes(int64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MB"; }

// Out of memory, by the worker's own word (a BYE "fatal: out of memory"), by Lambda's
// ("Runtime.OutOfMemory"), or by a SIGKILL to a worker with a memory limit: what the kernel's
// OOM killer sends (Lambda's runtime then says "signal: killed", and the shell of a launch
// command that ran the worker exits with 128 + 9).
bool OutOfMemory(const std::string& how, int64_t memory_limit) {
  if (how.find(kOutOfMemory) != std::string::npos || how.find("OutOfMemory") != std::string::npos) return true;
  const bool killed = how.find("signal 9") != std::string::npos || how.find("signal: killed") != std::string::npos ||
                      how.find("exit status 137") != std::string::npos;
  return killed && memory_limit > 0;
}

}  // namespace

std::string RemoteExecutor::Ended(int worker, const std::string& how) const {
  const Slot& slot = slots_[static_cast<std::size_t>(worker)];
  if (!OutOfMemory(how, slot.memory_limit)) return how;
  const ShardAssignment& shard = shards_[static_cast<std::size_t>(worker)];
  const std::string limit = slot.memory_limit > 0 ? "the worker's limit is " + Megabytes(slot.memory_limit)
                                                  : std::string("the worker had less");
  std::string report;
  if (shard.text && !shard.text->plan) {
    // Before its scan said what the part holds: the part's text, which its rows take about
    // as much memory as (12 bytes an entry against 8 to 14 of text).
    uint64_t bytes = 0;
    for (const TextPieceRef& piece : shard.text->pieces) bytes += piece.end - piece.begin;
    report = "ran out of memory (" + how + ") reading " + shard.key + " (" + Megabytes(static_cast<int64_t>(bytes)) +
             " of text; its rows take about as much memory), and " + limit + ". Use more workers (smaller parts)";
  } else {
    report = "ran out of memory (" + how + "): shard " + shard.key + " (" + std::to_string(shard.rows) + " rows, " +
             std::to_string(shard.nnz) + " nonzeros) needs about " + Megabytes(shard.memory_estimate_bytes) +
             " of data in a worker, besides the program, and " + limit + ". Use more workers (smaller shards)";
  }
  return report + (options_.memory_advice.empty() ? "" : ", " + options_.memory_advice);
}

void RemoteExecutor::Fail(int worker, const std::string& why) {
  Slot& slot = slots_[static_cast<std::size_t>(worker)];
  slot.last_failure = why;
  Event(worker, "failed", why);
  if (slot.process) slot.process->Kill();
  if (slot.restarts >= options_.max_restarts) {
    slot.phase = Phase::kGone;
    if (slot.round) {
      WorkerReply reply;
      reply.worker = worker;
      reply.invocation = slot.invocation;
      reply.round = slot.round->round;
      reply.status = ReplyStatus::kFailed;
      reply.error = why + "; gave up after " + std::to_string(slot.restarts) + " restarts in this round";
      replies_.push_back(std::move(reply));
      slot.round.reset();
    }
    return;
  }
  ++slot.restarts;
  ++stats_.restarts;
  Launch(worker);
}

void RemoteExecutor::SendRound(int worker) {
  Slot& slot = slots_[static_cast<std::size_t>(worker)];
  if (slot.ready && slot.ready->support && slot.round->z.size() == spec_.model_size()) {
    // General form: the worker gets (and the kept state holds) z on its support alone.
    slot.round->z = Gather(slot.round->z, *slot.ready->support);
  }
  RoundRequest request = *slot.round;
  if (request.kind == RoundKind::kHessianVector) {
    // Travels after a rejected trial, and to a replacement, which evaluated nothing yet.
    request.point = PointFor(request, slot.last_evaluated, slot.ready ? slot.ready->support.get() : nullptr);
  }
  if (slot.fresh && request.kind == RoundKind::kAdmm) {
    // A new invocation starts where the worker it replaces left off.
    Result<std::shared_ptr<const ResumeState>> resume = state_->ResumeFor(worker);
    if (!resume.ok()) {
      Fail(worker, "cannot rebuild its kept state: " + resume.status().message());
      return;
    }
    request.resume = std::move(resume).value();
  }
  Envelope envelope = EnvelopeFor(worker, MessageType::kRound);
  envelope.round = request.round;
  const bool again = slot.phase == Phase::kBusy;
  if (Status sent = transport_->Send(slot.peer, PackRound(envelope, request), &slot.round_bytes); !sent.ok()) {
    // Sent again after a reconnect: the round deadline still catches a worker that is gone.
    if (!again) Fail(worker, "cannot send it the round: " + sent.message());
    return;
  }
  slot.phase = Phase::kBusy;
  slot.round_deadline = MonotonicSeconds() + RoundTimeout();
}

void RemoteExecutor::DropOldInvocation(int worker, const Incoming& incoming) {
  const Envelope& envelope = incoming.message.envelope;
  transport_->CountStale("a message of an old invocation of worker " + std::to_string(worker));
  if (envelope.type == MessageType::kHello) {
    Envelope bye = EnvelopeFor(worker, MessageType::kBye);
    bye.invocation = envelope.invocation;
    (void)transport_->Send(incoming.peer, PackBye(bye, {"replaced by a newer invocation"}));
  }
}

Status RemoteExecutor::SendAssign(int worker) {
  return SendTo(worker, PackAssign(EnvelopeFor(worker, MessageType::kAssign),
                                   MakeAssignBody(shards_[static_cast<std::size_t>(worker)], spec_, worker_options_,
                                                  options_.heartbeat_seconds, options_.master_timeout_seconds)));
}

// A HELLO for a worker whose current invocation already said HELLO from another peer.
bool RemoteExecutor::IsDuplicateHello(const Incoming& incoming) const {
  const Envelope& envelope = incoming.message.envelope;
  if (envelope.worker >= slots_.size()) return false;
  const Slot& slot = slots_[static_cast<std::size_t>(envelope.worker)];
  return envelope.invocation == slot.invocation && !slot.peer.empty() && slot.peer != incoming.peer;
}

void RemoteExecutor::HandleHello(int worker, const Incoming& incoming, double now) {
  Slot& slot = slots_[static_cast<std::size_t>(worker)];
  if (IsDuplicateHello(incoming)) {
    // A second live start of the same invocation (a platform retry): one counts.
    transport_->CountStale("a duplicate invocation of worker " + std::to_string(worker));
    Event(worker, "duplicate", "second HELLO from another peer: told to leave");
    Envelope bye = EnvelopeFor(worker, MessageType::kBye);
    (void)transport_->Send(incoming.peer, PackBye(bye, {"duplicate invocation"}));
    return;
  }
  if (slot.phase != Phase::kLaunching) return ResendAfter(worker, "HELLO");
  Result<HelloBody> hello = UnpackHello(incoming.message);
  if (!hello.ok()) {
    transport_->CountStale(hello.status().message());
    return;
  }
  slot.peer = incoming.peer;
  slot.memory_limit = hello->memory_limit_bytes;
  slot.clock_offset = WallSeconds() - hello->send_wall;
  slot.last_heard = now;
  slot.ready.reset();
  if (Status sent = SendAssign(worker); !sent.ok()) {
    Fail(worker, "cannot send it its assignment: " + sent.message());
    return;
  }
  // Text not yet planned: the worker reads its part and says what it holds first.
  const bool scans = shards_[static_cast<std::size_t>(worker)].text && !HasTextPlan();
  slot.phase = scans ? Phase::kScanning : Phase::kLoading;
  Event(worker, "hello", "process started " + std::to_string(hello->process_start_wall + slot.clock_offset -
                                                             slot.launched_wall) + " s after launch");
}

void RemoteExecutor::HandleReady(int worker, const Incoming& incoming) {
  Slot& slot = slots_[static_cast<std::size_t>(worker)];
  Result<ReadyBody> ready = UnpackReady(incoming.message);
  if (ready.ok() && slot.phase == Phase::kBusy) return ResendAfter(worker, "READY");
  if (!ready.ok() || slot.phase != Phase::kLoading) {
    transport_->CountStale(ready.ok() ? "an unexpected READY" : ready.status().message());
    return;
  }
  WorkerReady r = ready->ready;
  r.worker = worker;
  r.invocation = slot.invocation;
  r.invoke_wall = slot.launched_wall;
  r.process_start_wall += slot.clock_offset;
  r.hello_wall += slot.clock_offset;
  r.ready_wall = WallSeconds();
  slot.ready = r;
  slot.phase = Phase::kIdle;
  Event(worker, "ready", "shard loaded in " + std::to_string(r.load_seconds) + " s");
  if (slot.round) SendRound(worker);
}

bool RemoteExecutor::HasTextPlan() const {
  return !shards_.empty() && shards_.front().text && shards_.front().text->plan.has_value();
}

void RemoteExecutor::HandleScanned(int worker, const Incoming& incoming) {
  Slot& slot = slots_[static_cast<std::size_t>(worker)];
  Result<ScannedBody> scanned = UnpackScanned(incoming.message);
  if (scanned.ok() && slot.phase == Phase::kLoading) return ResendAfter(worker, "SCANNED");
  if (!scanned.ok() || slot.phase != Phase::kScanning) {
    transport_->CountStale(scanned.ok() ? "an unexpected SCANNED" : scanned.status().message());
    return;
  }
  slot.scanned = std::move(scanned->scan);
  Event(worker, "scanned", std::to_string(slot.scanned->rows) + " rows read in " +
                               std::to_string(slot.scanned->seconds) + " s");
  if (!HasTextPlan()) {
    slot.phase = Phase::kScanned;
    return;
  }
  if (Status sent = SendAssign(worker); !sent.ok()) {
    Fail(worker, "cannot send it the plan: " + sent.message());
    return;
  }
  slot.phase = Phase::kLoading;
}

void RemoteExecutor::HandleReply(int worker, const Incoming& incoming) {
  Slot& slot = slots_[static_cast<std::size_t>(worker)];
  Result<WorkerReply> reply = UnpackReply(incoming.message, slot.ready && slot.ready->support
                                                                ? slot.ready->support->size()
                                                                : spec_.model_size());
  if (reply.ok() && slot.phase == Phase::kBusy && slot.round && reply->round < slot.round->round) {
    return ResendAfter(worker, "REPLY");
  }
  if (!reply.ok() || slot.phase != Phase::kBusy || !slot.round || reply->round != slot.round->round) {
    transport_->CountStale(reply.ok() ? "a reply to a round that is not out" : reply.status().message());
    return;
  }
  // Figures of any length answer a score or column round only, and those rounds nothing else.
  if (reply->status == ReplyStatus::kOk && (reply->w_vectors == 0) != AnyLengthRound(slot.round->kind)) {
    transport_->CountStale("a reply whose w does not fit its round's kind");
    return;
  }
  reply->worker = worker;
  reply->invocation = slot.invocation;
  WorkerTimings& t = reply->timings;
  t.receive_wall += slot.clock_offset;
  t.start_wall += slot.clock_offset;
  t.end_wall += slot.clock_offset;
  t.send_wall += slot.clock_offset;
  t.arrival_wall = WallSeconds();
  t.bytes_in = static_cast<int64_t>(slot.round_bytes);
  t.bytes_out = static_cast<int64_t>(incoming.bytes);
  if (reply->status == ReplyStatus::kOk) {
    // Newton rounds leave no state on the worker that the master must keep.
    const bool admm = slot.round->kind == RoundKind::kAdmm;
    if (slot.round->kind == RoundKind::kEvaluate) slot.last_evaluated = slot.round->round;
    if (Status kept = admm ? state_->Record(worker, *slot.round, reply->w) : Status::Ok(); !kept.ok()) {
      reply->status = ReplyStatus::kFailed;
      reply->error = "the master could not keep the worker's state: " + kept.message();
    }
    round_seconds_.push_back(reply->timings.compute_seconds);
    if (round_seconds_.size() > kRoundTimeWindow) round_seconds_.erase(round_seconds_.begin());
  }
  slot.round.reset();
  slot.restarts = 0;
  slot.fresh = false;  // (a first round sent again after a reconnect still carries the kept state)
  slot.phase = Phase::kIdle;
  replies_.push_back(std::move(reply).value());
}

void RemoteExecutor::HandleBye(int worker, const Incoming& incoming) {
  Slot& slot = slots_[static_cast<std::size_t>(worker)];
  Result<ByeBody> bye = UnpackBye(incoming.message);
  const std::string reason = bye.ok() ? bye->reason : "no reason";
  if (reason.starts_with("lifetime")) {
    // A planned hand-over: start the successor now, so it loads while the others compute.
    ++stats_.handovers;
    ++stats_.restarts;
    Event(worker, "left", reason);
    if (slot.process) retired_.push_back(std::move(slot.process));
    Launch(worker);
    return;
  }
  // A worker that cannot do its part at all (its shard is missing, say) is not retried.
  if (reason.starts_with("fatal")) slot.restarts = options_.max_restarts;
  Fail(worker, Ended(worker, "said BYE: " + reason));
}

void RemoteExecutor::HandleHeartbeat(int worker, const Incoming& incoming) {
  Slot& slot = slots_[static_cast<std::size_t>(worker)];
  // Each heartbeat is another sample of (master clock - worker clock + one-way delay);
  // the smallest is the best estimate of the offset.
  Result<HeartbeatBody> beat = UnpackHeartbeat(incoming.message);
  if (!beat.ok()) return;
  slot.clock_offset = std::min(slot.clock_offset, WallSeconds() - beat->send_wall);
  slot.text_read = beat->text_read;
  if (beat->link_reconnects <= slot.link_reconnects) return;
  stats_.reconnects += beat->link_reconnects - slot.link_reconnects;
  slot.link_reconnects = beat->link_reconnects;
  Event(worker, "reconnected", "its link to the master broke and was made again");
}

// After a reconnect a worker sends its last message again (HELLO, READY or its last REPLY):
// what the master sent after it was lost, and goes again.
void RemoteExecutor::ResendAfter(int worker, const std::string& what) {
  Slot& slot = slots_[static_cast<std::size_t>(worker)];
  transport_->CountStale("a repeated " + what + " (after a reconnect)");
  if (slot.phase == Phase::kLoading || slot.phase == Phase::kScanning) {
    (void)SendAssign(worker);
  } else if (slot.phase == Phase::kBusy && slot.round) {
    ++stats_.rounds_resent;
    SendRound(worker);
  }
}

void RemoteExecutor::Handle(Incoming incoming) {
  const Envelope& envelope = incoming.message.envelope;
  const int worker = static_cast<int>(envelope.worker);
  if (envelope.worker >= slots_.size()) {
    transport_->CountStale("a message for worker " + std::to_string(envelope.worker) + ", who does not exist");
    return;
  }
  Slot& slot = slots_[static_cast<std::size_t>(worker)];
  if (envelope.invocation != slot.invocation) {
    DropOldInvocation(worker, incoming);
    return;
  }
  const MessageType type = envelope.type;
  const double now = MonotonicSeconds();
  if (type == MessageType::kHello) {
    HandleHello(worker, incoming, now);
    return;
  }
  // Heartbeats come from the worker's second socket; everything else from the one that said HELLO.
  if (type != MessageType::kHeartbeat && incoming.peer != slot.peer) {
    transport_->CountStale("a message from a peer that did not register");
    return;
  }
  slot.last_heard = now;
  switch (type) {
    case MessageType::kReady:
      HandleReady(worker, incoming);
      return;
    case MessageType::kReply:
      HandleReply(worker, incoming);
      return;
    case MessageType::kBye:
      HandleBye(worker, incoming);
      return;
    case MessageType::kHeartbeat:
      HandleHeartbeat(worker, incoming);
      return;
    case MessageType::kScanned:
      HandleScanned(worker, incoming);
      return;
    default:
      transport_->CountStale(std::string("an unexpected ") + MessageTypeName(type));
  }
}

void RemoteExecutor::CheckWorkers() {
  std::erase_if(retired_, [](const std::unique_ptr<Invocation>& p) { return p->Exited(nullptr); });
  const double now = MonotonicSeconds();
  const double silence = kSilentHeartbeats * options_.heartbeat_seconds;
  for (int worker = 0; worker < workers(); ++worker) {
    Slot& slot = slots_[static_cast<std::size_t>(worker)];
    if (slot.phase == Phase::kGone) continue;
    std::string how;
    if (slot.process && slot.process->Exited(&how)) {
      Fail(worker, Ended(worker, "its process ended (" + how + ") while " + PhaseName(static_cast<int>(slot.phase))));
    } else if (slot.phase == Phase::kLaunching && now - slot.launched_at > options_.launch_timeout_seconds) {
      Fail(worker, "did not say HELLO within " + std::to_string(options_.launch_timeout_seconds) + " s of its launch");
    } else if (slot.phase == Phase::kBusy && now > slot.round_deadline) {
      Fail(worker, "missed its round deadline of " + std::to_string(RoundTimeout()) + " s");
    } else if (slot.phase != Phase::kLaunching && now - slot.last_heard > silence) {
      Fail(worker, "went silent for " + std::to_string(now - slot.last_heard) + " s (no heartbeat)");
    }
  }
}

void RemoteExecutor::Pump(Deadline until) {
  const double slice = std::min(until.RemainingSeconds(), options_.heartbeat_seconds / 2);
  // Everything waiting is handled before anyone is judged silent: after a stall of the master's
  // own, its queue holds the heartbeats of that time. (ZeroMQ's high-water mark bounds the queue.)
  for (Result<Incoming> incoming = transport_->Receive(Deadline::After(std::max(0.0, slice))); incoming.ok();
       incoming = transport_->Receive(Deadline::After(0))) {
    Handle(std::move(incoming).value());
  }
  CheckWorkers();
  const double now = MonotonicSeconds();
  if (now - last_heartbeat_ >= options_.heartbeat_seconds) {
    last_heartbeat_ = now;
    for (int worker = 0; worker < workers(); ++worker) {
      const Slot& slot = slots_[static_cast<std::size_t>(worker)];
      if (slot.peer.empty() || slot.phase == Phase::kGone || slot.phase == Phase::kLaunching) continue;
      (void)SendTo(worker, PackHeartbeat(EnvelopeFor(worker, MessageType::kHeartbeat), {WallSeconds()}));
    }
  }
}

Status RemoteExecutor::Open() {
  if (opened_) return Status::Ok();
  NIMBUS_RETURN_IF_ERROR(options_.Validate());
  if (shards_.empty()) return InvalidArgument("workers: need at least one shard");
  opened_ = true;
  started_ = true;
  run_id_ = options_.run_id != 0 ? options_.run_id : RandomRunId();
  context_ = ZmqContext::Create();
  if (!options_.insecure) {
    NIMBUS_ASSIGN_OR_RETURN(keys_, RunKeys::Generate());
  }
  // The largest inbound frame is a REPLY's w (a Newton evaluation's: a gradient and a
  // diagonal), or a SCANNED's list of features (at most a byte of text each); anything far
  // larger is refused by ZeroMQ.
  int64_t max_frame = static_cast<int64_t>(2 * spec_.model_size() * sizeof(double));
  for (const ShardAssignment& shard : shards_) {
    if (!shard.text) continue;
    uint64_t bytes = 0;
    for (const TextPieceRef& piece : shard.text->pieces) bytes += piece.end - piece.begin;
    max_frame = std::max(max_frame, static_cast<int64_t>(bytes));
  }
  max_frame += int64_t{1} << 20;
  NIMBUS_ASSIGN_OR_RETURN(transport_,
                          RouterTransport::Bind(context_, options_.listen, run_id_, max_frame, keys_.server));
  endpoint_ = options_.advertise.empty() ? transport_->endpoint() : options_.advertise;
  if (!options_.advertise_host.empty()) {
    endpoint_ = "tcp://" + options_.advertise_host + endpoint_.substr(endpoint_.rfind(':'));
  }
  for (int worker = 0; worker < workers(); ++worker) Launch(worker);
  return Status::Ok();
}

Status RemoteExecutor::AwaitPhase(Phase phase, Deadline deadline, const std::function<void()>& between) {
  const std::string doing = phase == Phase::kScanned ? "start (reading its part of the data)" : "start";
  while (true) {
    bool all_there = true;
    for (int worker = 0; worker < workers(); ++worker) {
      const Slot& slot = slots_[static_cast<std::size_t>(worker)];
      if (slot.phase == Phase::kGone) {
        // A line of the data it could not read is the data's fault, named by its file and line.
        const auto bad_data = slot.last_failure.find(kBadData);
        if (bad_data != std::string::npos) {
          return InvalidArgument(slot.last_failure.substr(bad_data + std::string(kBadData).size()) + " (worker " +
                                 std::to_string(worker) + ")");
        }
        return Unavailable("worker " + std::to_string(worker) + " could not " + doing + ": " + slot.last_failure);
      }
      all_there = all_there && slot.phase == phase;
    }
    if (all_there) return Status::Ok();
    if (deadline.Expired()) {
      for (int worker = 0; worker < workers(); ++worker) {
        const Slot& slot = slots_[static_cast<std::size_t>(worker)];
        if (slot.phase != phase) {
          return DeadlineExceeded("worker " + std::to_string(worker) + " did not " + doing +
                                  " before the start deadline (" + PhaseName(static_cast<int>(slot.phase)) + ")");
        }
      }
    }
    if (between) between();
    Pump(deadline);
  }
}

ScanProgress RemoteExecutor::ProgressOfScan() const {
  ScanProgress progress{0, 0, 0, workers()};
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const uint64_t bytes = TextBytes(*shards_[i].text);
    progress.bytes_total += bytes;
    progress.bytes_read += slots_[i].scanned ? bytes : std::min(bytes, slots_[i].text_read);
    progress.scanned += slots_[i].scanned ? 1 : 0;
  }
  return progress;
}

Result<std::vector<TextScanned>> RemoteExecutor::ScanText(Deadline deadline, const ScanObserver& observe) {
  if (opened_) return FailedPrecondition("the " + options_.name + " runtime was already started");
  for (const ShardAssignment& shard : shards_) {
    if (!shard.text || shard.text->plan) return FailedPrecondition("ScanText: a worker's part is not unplanned text");
  }
  NIMBUS_RETURN_IF_ERROR(Open());
  // The workers' heartbeats say how far each has read: told to the observer once a second.
  Stopwatch watch;
  double next_report = 1;
  NIMBUS_RETURN_IF_ERROR(AwaitPhase(Phase::kScanned, deadline, [&] {
    if (!observe || watch.ElapsedSeconds() < next_report) return;
    next_report = watch.ElapsedSeconds() + 1;
    observe(ProgressOfScan());
  }));
  if (observe) observe(ProgressOfScan());
  std::vector<TextScanned> scans;
  for (Slot& slot : slots_) {
    scans.push_back(*slot.scanned);
    slot.restarts = 0;
  }
  return scans;
}

Status RemoteExecutor::SetTextPlan(const ProblemSpec& spec, std::vector<TextPlanned> parts) {
  if (parts.size() != shards_.size()) return InvalidArgument("SetTextPlan: one part per worker");
  spec_ = spec;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (!shards_[i].text) return FailedPrecondition("SetTextPlan: a worker's rows are not text");
    shards_[i].text->plan = std::move(parts[i]);
    shards_[i].rows = shards_[i].text->plan->rows;
    shards_[i].nnz = shards_[i].text->plan->nnz;
    shards_[i].memory_estimate_bytes = shards_[i].text->plan->memory_estimate_bytes;
  }
  for (int worker = 0; worker < workers(); ++worker) {
    Slot& slot = slots_[static_cast<std::size_t>(worker)];
    if (slot.phase != Phase::kScanned) continue;  // scanning still, or replaced: it gets the plan in turn
    if (Status sent = SendAssign(worker); !sent.ok()) {
      Fail(worker, "cannot send it the plan: " + sent.message());
      continue;
    }
    slot.phase = Phase::kLoading;
  }
  return Status::Ok();
}

Result<std::vector<WorkerReady>> RemoteExecutor::Start(Deadline deadline) {
  if (state_) return FailedPrecondition("the " + options_.name + " runtime was already started");
  if (!shards_.empty() && shards_.front().text && !HasTextPlan()) {
    return FailedPrecondition("the workers' text has no plan yet (ScanText, SetTextPlan)");
  }
  NIMBUS_RETURN_IF_ERROR(Open());
  state_ = std::make_unique<StateKeeper>(workers(), spec_.model_size(), options_.state_memory_limit_bytes,
                                         options_.spill_state);
  NIMBUS_RETURN_IF_ERROR(AwaitPhase(Phase::kIdle, deadline));
  std::vector<WorkerReady> ready;
  for (Slot& slot : slots_) {
    ready.push_back(*slot.ready);
    slot.restarts = 0;
  }
  return ready;
}

void RemoteExecutor::Dispatch(const RoundRequest& request, std::span<const int> workers) {
  for (const int worker : workers) {
    Slot& slot = slots_[static_cast<std::size_t>(worker)];
    slot.round = request;
    slot.restarts = 0;
    if (slot.phase == Phase::kGone) {
      // Given up on earlier: fail at once rather than wait for nothing.
      slot.restarts = options_.max_restarts;
      Fail(worker, "was given up on: " + slot.last_failure);
    } else if (slot.phase == Phase::kIdle) {
      SendRound(worker);
    }  // else a successor is starting; it gets the round when READY
  }
}

std::vector<WorkerReply> RemoteExecutor::Collect(int count, Deadline deadline) {
  const auto outstanding = [&] {
    return std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.round.has_value(); });
  };
  while (static_cast<int>(replies_.size()) < count && outstanding() && !deadline.Expired()) Pump(deadline);
  std::vector<WorkerReply> replies = std::move(replies_);
  replies_.clear();
  return replies;
}

Status RemoteExecutor::Restore(const std::vector<WorkerHistory>& histories) {
  if (state_ == nullptr) return FailedPrecondition("restore: the workers have not been started");  // (Start makes it)
  if (histories.size() != slots_.size()) return InvalidArgument("restore: one history per worker");
  for (int worker = 0; worker < workers(); ++worker) {
    NIMBUS_RETURN_IF_ERROR(state_->Restore(worker, histories[static_cast<std::size_t>(worker)]));
    // Whoever serves the worker's next round gets the restored state with it.
    slots_[static_cast<std::size_t>(worker)].fresh = true;
  }
  return Status::Ok();
}

void RemoteExecutor::Stop() {
  if (!started_) return;
  started_ = false;
  opened_ = false;
  for (int worker = 0; worker < workers(); ++worker) {
    const Slot& slot = slots_[static_cast<std::size_t>(worker)];
    if (!slot.peer.empty() && slot.phase != Phase::kGone) {
      (void)SendTo(worker, PackBye(EnvelopeFor(worker, MessageType::kBye), {"the run is over"}));
    }
  }
  // Give the workers a moment to leave on their own, then end whoever is still there.
  const Deadline grace = Deadline::After(2.0);
  for (Slot& slot : slots_) {
    if (slot.process) retired_.push_back(std::move(slot.process));
  }
  while (!grace.Expired()) {
    const bool all_gone = std::all_of(retired_.begin(), retired_.end(),
                                      [](const std::unique_ptr<Invocation>& p) { return p->Exited(nullptr); });
    if (all_gone) break;
    if (!transport_) break;
    // Drain what they still send; one that only now says HELLO is told the run is over. A
    // duplicate invocation that starts slower than the whole run says HELLO only now: it is
    // counted as it would have been during the run.
    Result<Incoming> late = transport_->Receive(Deadline::After(0.02));
    if (late.ok() && late->message.envelope.type == MessageType::kHello) {
      if (IsDuplicateHello(*late)) transport_->CountStale("a duplicate invocation, after the run");
      Envelope bye = late->message.envelope;
      bye.type = MessageType::kBye;
      (void)transport_->Send(late->peer, PackBye(bye, {"the run is over"}));
    }
  }
  // Ends what is left, all at once (a Lambda invocation's wait takes up to a second to give
  // up), then reaps it.
  for (const std::unique_ptr<Invocation>& p : retired_) p->Kill();
  retired_.clear();
  if (transport_) {
    stats_.transport = transport_->stats();
    stats_.refused_clients = transport_->refused_clients();
  }
  transport_.reset();
  context_.reset();
}

void RemoteExecutor::AddCounters(Summary& summary) const {
  const RemoteStats s = stats();
  summary.worker_restarts += s.restarts;
  summary.reconnects += s.reconnects;
  summary.rounds_resent += s.rounds_resent;
  summary.messages_dropped += static_cast<int64_t>(s.transport.dropped_malformed + s.transport.dropped_foreign +
                                                   s.transport.dropped_stale);
  summary.bytes_sent += static_cast<int64_t>(s.transport.bytes_sent);
  summary.bytes_received += static_cast<int64_t>(s.transport.bytes_received);
  summary.security = options_.insecure ? "plaintext" : "curve";
  summary.clients_refused += s.refused_clients;
}

RemoteStats RemoteExecutor::stats() const {
  RemoteStats stats = stats_;
  if (transport_) stats.transport = transport_->stats();
  stats.stale_messages = static_cast<int64_t>(stats.transport.dropped_stale);
  if (transport_) stats.refused_clients = transport_->refused_clients();
  return stats;
}

std::vector<int64_t> RemoteExecutor::worker_pids() const {
  std::vector<int64_t> pids;
  for (const Slot& slot : slots_) pids.push_back(slot.process ? slot.process->pid() : -1);
  return pids;
}

}  // namespace nimbus
