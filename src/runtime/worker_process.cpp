#include "nimbus/runtime/worker_process.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "nimbus/cloud/s3.h"
#include "nimbus/core/clock.h"
#include "nimbus/data/shard.h"
#include "nimbus/runtime/relay.h"
#include "nimbus/transport/transport.h"
#include "nimbus/worker/shard_worker.h"
#include "nimbus/worker/text_part.h"

namespace nimbus {

Result<ProblemSpec> AssignedSpec(const AssignBody& body) {
  ProblemSpec spec;
  Result<Loss> loss = ParseLoss(body.loss);
  if (!loss.ok()) {
    return loss.status().WithContext("this worker program cannot serve the run");
  }
  spec.loss = *loss;
  spec.regularizer = {body.l1, body.l2};
  spec.intercept = body.intercept != 0;
  spec.rows = body.rows;
  spec.cols = body.cols;
  spec.classes = body.classes;
  spec.multinomial = body.multinomial != 0;
  spec.class_weights = body.class_weights;
  spec.copies = body.copies;
  spec.copy_scales = body.copy_scales;
  NIMBUS_RETURN_IF_ERROR(spec.Validate().WithContext("the run's problem"));
  return spec;
}

namespace {

Result<std::unique_ptr<Store>> OpenStoreAt(const std::string& uri) { return OpenAnyStore(uri, /*create=*/false); }

}  // namespace

Result<std::unique_ptr<ShardWorker>> MakeAssignedWorker(int worker, const AssignBody& body, ProblemSpec* spec,
                                                        double* load_seconds, std::optional<Dataset> rows) {
  Stopwatch load_watch;
  if (!rows) {
    Result<std::unique_ptr<Store>> store = OpenAnyStore(body.store_uri, /*create=*/false);
    if (!store.ok()) return store.status().WithContext("cannot open the store");
    std::optional<uint64_t> checksum;
    if (body.shard_checksum != 0) checksum = body.shard_checksum;
    Result<Dataset> shard = LoadShard(**store, body.shard_key, checksum);
    if (!shard.ok()) return shard.status().WithContext("cannot load its shard");
    rows = std::move(shard).value();
  }
  Dataset& shard = *rows;
  *load_seconds += load_watch.ElapsedSeconds();
  NIMBUS_ASSIGN_OR_RETURN(*spec, AssignedSpec(body));
  if (shard.cols() > spec->cols) return InvalidArgument("its shard has more features than the problem");
  shard.matrix.cols = spec->cols;
  for (const double label : shard.labels) {
    if (spec->classes > 1 && ClassIndex(label) >= static_cast<std::size_t>(spec->classes)) {
      return InvalidArgument("its shard has class " + FormatLabel(label) + ", the problem " +
                             std::to_string(spec->classes) + " classes");
    }
  }
  if (!body.folds.empty()) {
    if (static_cast<int64_t>(body.folds.size()) != shard.rows()) {
      return InvalidArgument("its rows' folds are " + std::to_string(body.folds.size()) + ", its shard's rows " +
                             std::to_string(shard.rows()));
    }
    for (const uint8_t fold : body.folds) {
      if (fold >= spec->copies) return InvalidArgument("a row's fold is past the problem's copies");
    }
    shard.AdoptFolds(body.folds);
  }
  WorkerOptions options;
  options.solver = static_cast<LocalSolver>(body.local_solver);
  NIMBUS_ASSIGN_OR_RETURN(options.faults, DecodeFaults(body.faults));
  options.general_form = body.general_form != 0;
  options.memory_limit_bytes = ProcessMemoryLimitBytes();
  return std::make_unique<ShardWorker>(worker, std::move(shard), *spec, options);
}

Result<TextPartRows> ReadAssignedText(const AssignBody& body, std::atomic<uint64_t>* bytes_so_far) {
  Result<TextPartRows> rows = ReadTextPart(*body.text, OpenStoreAt, bytes_so_far);
  // A line the reader refuses is the data's fault: the master says so as it would of its own.
  if (!rows.ok() && rows.status().code() == StatusCode::kInvalidArgument) {
    return InvalidArgument(std::string(kBadData) + rows.status().message());
  }
  return rows;
}

Result<Dataset> FinishAssignedText(TextPartRows rows, const AssignBody& body) {
  return FinishTextPart(std::move(rows), *body.text, OpenStoreAt);
}

int64_t ProcessMemoryLimitBytes() {
  std::vector<int64_t> limits;
  rlimit address_space{};
  if (::getrlimit(RLIMIT_AS, &address_space) == 0 && address_space.rlim_cur != RLIM_INFINITY) {
    limits.push_back(static_cast<int64_t>(address_space.rlim_cur));
  }
  // The cgroup's: v2 ("0::/PATH" in /proc/self/cgroup, /sys/fs/cgroup/PATH/memory.max) or v1
  // ("N:memory:/PATH", /sys/fs/cgroup/memory/PATH/memory.limit_in_bytes; "no limit" is near 2^63).
  std::ifstream cgroup("/proc/self/cgroup");
  for (std::string line; std::getline(cgroup, line);) {
    std::string file;
    if (line.starts_with("0::")) file = "/sys/fs/cgroup" + line.substr(3) + "/memory.max";
    if (const auto at = line.find(":memory:"); at != std::string::npos) {
      file = "/sys/fs/cgroup/memory" + line.substr(at + 8) + "/memory.limit_in_bytes";
    }
    std::ifstream max(file);
    std::string value;
    if (!file.empty() && max >> value && value != "max" && std::atoll(value.c_str()) < (int64_t{1} << 62)) {
      limits.push_back(std::atoll(value.c_str()));
    }
  }
  if (const char* lambda_mb = std::getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"); lambda_mb != nullptr) {
    limits.push_back(std::atoll(lambda_mb) * 1024 * 1024);
  }
  std::erase_if(limits, [](int64_t limit) { return limit <= 0; });
  return limits.empty() ? 0 : *std::min_element(limits.begin(), limits.end());
}

namespace {

class ShardServer final : public RoundServer {
 public:
  explicit ShardServer(std::unique_ptr<ShardWorker> worker) : worker_(std::move(worker)) {}
  std::size_t local_size() const override { return worker_->local_size(); }
  WorkerReply Serve(const RoundRequest& request, uint64_t invocation) override {
    return worker_->Serve(request, invocation);
  }

 private:
  std::unique_ptr<ShardWorker> worker_;
};

class WorkerSession {
 public:
  explicit WorkerSession(const WorkerProcessOptions& options) : options_(options), held_(options.held) {
    // Unique per process: a platform that runs one invocation twice yields two peers the
    // master can tell apart (and tell the second to leave).
    char id[96];
    std::snprintf(id, sizeof id, "w%d.%llu.%ld", options.worker, static_cast<unsigned long long>(options.invocation),
                  static_cast<long>(::getpid()));
    routing_id_ = id;
    std::snprintf(id, sizeof id, "%d.%llu", options.worker, static_cast<unsigned long long>(options.invocation));
    name_ = std::string("nimbus worker ") + id;
  }
  ~WorkerSession() { StopHeartbeats(); }

  // A failed allocation anywhere (loading the shard, serving a round) ends the worker with a
  // BYE that says so: the master reports it as out of memory and does not retry in vain.
  int Run() {
    try {
      return Serve();
    } catch (const std::bad_alloc&) {
      return Fatal(std::string(kOutOfMemory) + " (" + doing_ + ")");
    }
  }

 private:
  int Serve() {
    context_ = ZmqContext::Create();
    Result<std::unique_ptr<DealerTransport>> link =
        DealerTransport::Connect(context_, options_.connect, routing_id_, options_.run_id, options_.credentials);
    if (!link.ok()) return Error(link.status().message());
    link_ = std::move(link).value();
    StartHeartbeats(routing_id_ + ".hb");

    const double hello_wall = WallSeconds();
    if (Status sent = SendKept(PackHello(Envelope_(MessageType::kHello), {options_.process_start_wall, hello_wall,
                                                                          ::getpid(), ProcessMemoryLimitBytes()}));
        !sent.ok()) {
      return Error("cannot say HELLO: " + sent.message());
    }
    Result<WireMessage> assign = Await(MessageType::kAssign, options_.connect_timeout_seconds);
    if (!assign.ok()) return assign.status().code() == StatusCode::kDeadlineExceeded ? LostMaster() : Leave(assign.status());
    Result<AssignBody> body = UnpackAssign(*assign);
    if (!body.ok()) return Fatal("bad assignment: " + body.status().message());
    master_timeout_ = body->master_timeout_seconds;
    SetHeartbeatInterval(body->heartbeat_seconds);

    // The cold start: load the shard, or read the part of the text (and, the first time
    // round, say what it holds and wait for the plan of the whole).
    doing_ = "loading its shard";
    double load_seconds = 0;
    std::optional<Dataset> rows;
    if (body->text) {
      Stopwatch read_watch;
      doing_ = "reading its part of the data";
      Result<TextPartRows> read =
          IsHeldPart(*body->text) ? TakeHeldRows(*body->text, held_) : ReadAssignedText(*body, &text_read_);
      if (!read.ok()) return FatalLoad(read.status());
      while (!body->text->plan) {
        if (Status sent = SendKept(PackScanned(Envelope_(MessageType::kScanned), {read->scan})); !sent.ok()) {
          return Error("cannot say SCANNED: " + sent.message());
        }
        assign = Await(MessageType::kAssign, master_timeout_);
        if (!assign.ok()) {
          return assign.status().code() == StatusCode::kDeadlineExceeded ? LostMaster() : Leave(assign.status());
        }
        body = UnpackAssign(*assign);
        if (!body.ok()) return Fatal("bad assignment: " + body.status().message());
        if (!body->text) return Fatal("bad assignment: the plan of the text came without the text");
      }
      Result<Dataset> finished = FinishAssignedText(std::move(read).value(), *body);
      if (!finished.ok()) return FatalLoad(finished.status());
      rows = std::move(finished).value();
      load_seconds = read_watch.ElapsedSeconds();
    }
    ReadyBody ready;
    if (body->relay) {
      doing_ = "starting its group's workers";
      Result<FaultInjection> faults = DecodeFaults(body->faults);
      if (!faults.ok()) return Fatal("bad assignment: " + faults.status().message());
      faults_ = *faults;
      Result<std::unique_ptr<RoundServer>> relay = StartRelay(options_.worker, *body, options_.connect, &ready.ready);
      if (!relay.ok()) return FatalLoad(relay.status());
      server_ = std::move(relay).value();
    } else {
      Result<std::unique_ptr<ShardWorker>> worker =
          MakeAssignedWorker(options_.worker, *body, &spec_, &load_seconds, std::move(rows));
      if (!worker.ok()) return FatalLoad(worker.status());
      faults_ = (*worker)->options().faults;
      ready.ready = (*worker)->Ready(load_seconds);
      server_ = std::make_unique<ShardServer>(std::move(worker).value());
    }
    ready.ready.process_start_wall = options_.process_start_wall;
    ready.ready.hello_wall = hello_wall;
    if (Status sent = SendKept(PackReady(Envelope_(MessageType::kReady), ready)); !sent.ok()) {
      return Error("cannot say READY: " + sent.message());
    }
    return ServeRounds();
  }

  Envelope Envelope_(MessageType type, int64_t round = -1) const {
    Envelope envelope;
    envelope.type = type;
    envelope.run_id = options_.run_id;
    envelope.worker = static_cast<uint32_t>(options_.worker);
    envelope.invocation = options_.invocation;
    envelope.round = round;
    return envelope;
  }

  int ServeRounds() {
    const std::size_t model_size = server_->local_size();
    double longest_round = 0;
    while (true) {
      Result<WireMessage> message = Await(MessageType::kRound, master_timeout_);
      const double receive_wall = WallSeconds();
      if (!message.ok()) {
        return message.status().code() == StatusCode::kDeadlineExceeded ? LostMaster() : Leave(message.status());
      }
      Result<RoundRequest> request = UnpackRound(*message, model_size);
      if (!request.ok()) return Fatal("bad round: " + request.status().message());
      if (request->round <= last_answered_round_) {
        // Sent again after a reconnect: the reply may have been lost with the old connection.
        // A round is served once (ADMM's state moves with it); its answer may go twice.
        if (request->round == last_answered_round_) (void)link_->Send("", *last_sent_);
        continue;
      }
      if (faults_.Crashes(options_.worker, options_.invocation - 1, request->round)) {
        std::fprintf(stderr, "%s: injected crash in round %lld\n", name_.c_str(), static_cast<long long>(request->round));
        ::raise(SIGKILL);  // as abrupt as a killed function: no BYE, no reply
      }
      Stopwatch round_watch;
      doing_ = "serving round " + std::to_string(request->round);
      WorkerReply reply = server_->Serve(*request, options_.invocation);
      reply.timings.receive_wall = receive_wall;
      reply.timings.send_wall = WallSeconds();
      last_answered_round_ = request->round;
      if (Status sent = SendKept(PackReply(Envelope_(MessageType::kReply, request->round), reply, request->lean));
          !sent.ok()) {
        return Error("cannot send its reply: " + sent.message());
      }
      longest_round = std::max(longest_round, round_watch.ElapsedSeconds());
      // Hand over before the platform's cap cuts a round short: leave if another round of
      // the longest length so far might not fit.
      if (options_.max_lifetime > 0) {
        const double used = WallSeconds() - options_.process_start_wall;
        if (used + 1.5 * longest_round > options_.max_lifetime) {
          char reason[128];
          std::snprintf(reason, sizeof reason, "lifetime: %.2f s of %.2f s used", used, options_.max_lifetime);
          (void)link_->Send("", PackBye(Envelope_(MessageType::kBye), {reason}));
          Linger();
          return kWorkerDone;
        }
      }
    }
  }

  // Sends `message` and keeps it: should the link break, it goes again.
  Status SendKept(WireMessage message) {
    last_sent_ = std::move(message);
    return link_->Send("", *last_sent_);
  }

  // ZeroMQ makes a broken link again by itself, but what was crossing it is lost. Sending the
  // last message again tells the master where this worker is; the master answers it with
  // what it sent after (the assignment, the round), and keeps one copy of anything doubled.
  // A heartbeat with the new count goes first, on the link itself: the master then knows of
  // the reconnect before the message it answers, so a run that ends soon after still counts
  // it (the heartbeat socket's next beat may come after the run's end).
  void ResendIfReconnected() {
    const int64_t reconnects = link_->Reconnects();
    if (reconnects <= link_reconnects_.load()) return;
    link_reconnects_.store(reconnects);
    std::fprintf(stderr, "%s: the link to the master was made again; sending its last message again\n", name_.c_str());
    (void)link_->Send("", PackHeartbeat(Envelope_(MessageType::kHeartbeat), {WallSeconds(), reconnects, text_read_.load()}));
    if (last_sent_) (void)link_->Send("", *last_sent_);
  }

  // The next message of `type`; heartbeats are skipped, BYE ends the wait as Cancelled. Looks
  // for a broken and remade link every heartbeat interval meanwhile.
  Result<WireMessage> Await(MessageType type, double timeout_seconds) {
    Deadline deadline = Deadline::After(timeout_seconds);
    while (true) {
      ResendIfReconnected();
      Result<Incoming> received =
          link_->Receive(Deadline::After(std::min(deadline.RemainingSeconds(), heartbeat_seconds_.load())));
      if (!received.ok() && received.status().code() == StatusCode::kDeadlineExceeded &&
          deadline.RemainingSeconds() > 0) {
        continue;
      }
      NIMBUS_ASSIGN_OR_RETURN(Incoming incoming, std::move(received));
      const Envelope& envelope = incoming.message.envelope;
      if (envelope.worker != static_cast<uint32_t>(options_.worker) || envelope.invocation != options_.invocation) {
        continue;
      }
      if (envelope.type == MessageType::kHeartbeat) {
        deadline = Deadline::After(timeout_seconds);  // the master is alive
        continue;
      }
      if (envelope.type == MessageType::kBye) {
        Result<ByeBody> bye = UnpackBye(incoming.message);
        return FailedPrecondition("the master said BYE: " + (bye.ok() ? bye->reason : std::string("?")));
      }
      if (envelope.type == type) return std::move(incoming.message);
    }
  }

  void StartHeartbeats(const std::string& routing_id) {
    Result<std::unique_ptr<DealerTransport>> link =
        DealerTransport::Connect(context_, options_.connect, routing_id, options_.run_id, options_.credentials);
    if (!link.ok()) return;  // without heartbeats the master relies on round deadlines
    heartbeat_thread_ = std::thread([this, hb = std::shared_ptr<DealerTransport>(std::move(link).value())] {
      std::unique_lock lock(heartbeat_mutex_);
      while (!stop_) {
        (void)hb->Send("", PackHeartbeat(Envelope_(MessageType::kHeartbeat),
                                         {WallSeconds(), link_reconnects_.load(), text_read_.load()}));
        heartbeat_wake_.wait_for(lock, std::chrono::duration<double>(heartbeat_seconds_.load()),
                                 [this] { return stop_ || rearmed_; });
        rearmed_ = false;
      }
    });
  }

  // The master's interval, from ASSIGN: the wait under way (the default's) starts again with it.
  void SetHeartbeatInterval(double seconds) {
    heartbeat_seconds_.store(seconds);
    {
      std::lock_guard lock(heartbeat_mutex_);
      rearmed_ = true;
    }
    heartbeat_wake_.notify_all();
  }

  void StopHeartbeats() {
    {
      std::lock_guard lock(heartbeat_mutex_);
      stop_ = true;
    }
    heartbeat_wake_.notify_all();
    if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
  }

  // Gives ZeroMQ a moment to deliver the last message before the sockets close.
  void Linger() { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }

  int Leave(const Status& status) {
    // A BYE from the master is the normal end of a run.
    if (status.code() == StatusCode::kFailedPrecondition) return kWorkerDone;
    return Error(status.message());
  }
  int LostMaster() {
    std::fprintf(stderr, "%s: no word from the master at %s; leaving\n", name_.c_str(), options_.connect.c_str());
    return kWorkerLostMaster;
  }
  int Error(const std::string& message) {
    std::fprintf(stderr, "%s: error: %s\n", name_.c_str(), message.c_str());
    return kWorkerError;
  }
  // A load that failed: out of memory, said so; anything else, fatal.
  int FatalLoad(const Status& status) {
    if (status.code() == StatusCode::kResourceExhausted) {
      return Fatal(std::string(kOutOfMemory) + " (" + doing_ + ": " + status.message() + ")");
    }
    return Fatal(status.message());
  }
  // Tells the master this worker cannot do its part (so it is not restarted in vain).
  int Fatal(const std::string& message) {
    if (link_) {
      (void)link_->Send("", PackBye(Envelope_(MessageType::kBye), {"fatal: " + message}));
      Linger();
    }
    return Error(message);
  }

  WorkerProcessOptions options_;
  std::shared_ptr<HeldRows> held_;  // until the worker takes its rows
  std::string routing_id_;  // "w3.2.PID": worker 3, invocation 2
  std::string name_;
  std::shared_ptr<ZmqContext> context_;
  std::unique_ptr<DealerTransport> link_;
  std::thread heartbeat_thread_;
  std::mutex heartbeat_mutex_;
  std::condition_variable heartbeat_wake_;
  bool stop_ = false;     // guarded by heartbeat_mutex_
  bool rearmed_ = false;  // the interval changed: the wait starts again (guarded too)
  std::atomic<double> heartbeat_seconds_{1.0};
  double master_timeout_ = 60;
  ProblemSpec spec_;
  FaultInjection faults_;
  std::unique_ptr<RoundServer> server_;  // its shard's worker, or a relay's group
  std::string doing_ = "starting";  // what it was doing, should memory run out
  int64_t last_answered_round_ = -1;
  std::optional<WireMessage> last_sent_;  // HELLO, READY or the last REPLY: for a master that lost it
  std::atomic<int64_t> link_reconnects_{0};  // read by the heartbeat thread
  std::atomic<uint64_t> text_read_{0};       // likewise: the part's text read so far
};

}  // namespace

int RunWorkerProcess(const WorkerProcessOptions& options) {
  if (options.parent_pid > 0) {
    // Killed with its parent (a relay that dies takes its workers along: its master starts a
    // new relay, which starts new workers); already orphaned, it leaves at once.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != static_cast<pid_t>(options.parent_pid)) return kWorkerLostMaster;
  }
  WorkerSession session(options);
  const int code = session.Run();
  return code;
}

}  // namespace nimbus
