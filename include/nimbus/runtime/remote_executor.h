// Workers in other processes: the star of the paper. The master binds a ROUTER socket; each
// worker is started by a Launcher (a local process, a launch command, a Lambda invocation),
// dials out, says HELLO, gets its ASSIGN, loads its shard, says READY and then serves rounds.
//
// Any worker may die, hang or leave at any time. The executor notices (process exit, missed
// round deadline, silence, BYE) and starts a new invocation of that worker, which resumes
// from the state kept outside it (StateKeeper) and redoes the round: the coordinator sees an
// ordinary, if late, reply. Messages of old invocations, duplicates of a live one and
// anything malformed are dropped and counted. After max_restarts tries within one round the
// worker is given up with a reply that says why.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nimbus/executor/executor.h"
#include "nimbus/core/trace.h"
#include "nimbus/problem/problem.h"
#include "nimbus/runtime/launcher.h"
#include "nimbus/runtime/state_keeper.h"
#include "nimbus/transport/transport.h"
#include "nimbus/worker/shard_worker.h"

namespace nimbus {

struct RemoteOptions {
  std::string name = "process";          // the runtime's name in summaries
  // What a worker that runs out of memory is told to try, after "use more workers".
  std::string memory_advice;
  std::string listen = "tcp://127.0.0.1:0";
  std::string advertise;                 // the address workers dial (default: the bound one)
  std::string advertise_host;            // or this host with the bound port (a relay's, bound to 0.0.0.0)
  uint64_t run_id = 0;                   // 0: drawn at random
  double heartbeat_seconds = 1.0;        // both ways; 5 missed heartbeats mean a worker is gone
  double launch_timeout_seconds = 60.0;  // from launch to HELLO
  double round_timeout_floor_seconds = 60.0;
  double round_timeout_multiple = 5.0;   // round deadline: max(floor, multiple x median round)
  int max_restarts = 3;                  // new invocations of one worker within one round
  double max_lifetime_seconds = 0;       // a worker hands over after this long (0: never)
  int64_t worker_memory_bytes = 0;       // each worker held to this much (launcher.h; 0: no limit)
  double master_timeout_seconds = 60.0;  // a worker leaves after this long without word
  int64_t state_memory_limit_bytes = int64_t{1} << 30;
  bool spill_state = false;              // kept state beyond the memory limit goes to files (state_keeper.h)
  // Plaintext, no authentication: allowed only when `listen` is a loopback endpoint. By
  // default every run has CurveZMQ keys of its own (see RunKeys).
  bool insecure = false;

  Status Validate() const;
};

// Where a worker's shard is.
struct ShardAssignment {
  std::string store_uri;
  std::string key;
  uint64_t checksum = 0;
  std::vector<uint8_t> folds;  // cross-validation: the fold each of its rows is held out in (empty: none)
  // For a worker that runs out of memory, the report: the shard's size and what a worker
  // needs for it (api/plan.h: WorkerMemoryBytes).
  int64_t rows = 0, nnz = 0;
  int64_t memory_estimate_bytes = 0;
  // Or a part of LIBSVM text the worker reads itself (store_uri and checksum then unused; key
  // names the part in messages).
  std::optional<TextPart> text = std::nullopt;
  // Or, for a relay (runtime/relay.h), the shards of its group in the store at store_uri.
  std::optional<RelayGroup> relay = std::nullopt;
};

// What ASSIGN tells a worker: its shard, the problem, its solver and the liveness settings.
AssignBody MakeAssignBody(const ShardAssignment& shard, const ProblemSpec& spec, const WorkerOptions& worker,
                          double heartbeat_seconds, double master_timeout_seconds);

struct RemoteStats {
  int64_t restarts = 0;          // new invocations after a failure or a hand-over
  int64_t handovers = 0;         // of those, workers that left at their lifetime cap
  int64_t reconnects = 0;        // workers' links that broke and were made again
  int64_t rounds_resent = 0;     // rounds sent again after such a reconnect
  int64_t stale_messages = 0;    // from old or duplicate invocations, or for old rounds
  int64_t refused_clients = 0;   // handshakes refused for a key other than the run's
  TransportStats transport;
};

class RemoteExecutor final : public Executor {
 public:
  RemoteExecutor(std::vector<ShardAssignment> shards, const ProblemSpec& spec, const WorkerOptions& worker_options,
                 const RemoteOptions& options, std::unique_ptr<Launcher> launcher);
  ~RemoteExecutor() override;

  std::string name() const override { return options_.name; }
  int workers() const override { return static_cast<int>(shards_.size()); }
  Result<std::vector<WorkerReady>> Start(Deadline deadline) override;
  Result<std::vector<TextScanned>> ScanText(Deadline deadline, const ScanObserver& observe) override;
  Status SetTextPlan(const ProblemSpec& spec, std::vector<TextPlanned> parts) override;
  void Dispatch(const RoundRequest& request, std::span<const int> workers) override;
  std::vector<WorkerReply> Collect(int count, Deadline deadline) override;
  void Stop() override;
  void AddCounters(Summary& summary) const override;
  // The kept state becomes the checkpoint's: each worker's first round (and any replacement
  // before its next answer) starts from it.
  Status Restore(const std::vector<WorkerHistory>& histories) override;

  // Worker events (started, failed, replaced, left) go here as JSON lines.
  void SetTraceSink(TraceSink* sink) { trace_ = sink; }
  // The address workers dial (after Start).
  const std::string& endpoint() const { return endpoint_; }
  uint64_t run_id() const { return run_id_; }
  // The master's CurveZMQ public key (after Start; empty for an insecure run).
  const std::string& server_key() const { return keys_.client.server_public; }
  RemoteStats stats() const;
  // The process ids of the workers' current invocations (for tests that kill them).
  std::vector<int64_t> worker_pids() const;

 private:
  // kScanning: reading its part of the text; kScanned: read, waiting for the plan.
  enum class Phase { kLaunching, kScanning, kScanned, kLoading, kIdle, kBusy, kGone };
  struct Slot {
    uint64_t invocation = 0;
    std::unique_ptr<Invocation> process;
    std::string peer;  // routing id, once HELLO arrived
    Phase phase = Phase::kGone;
    double launched_at = 0;  // monotonic
    double launched_wall = 0;
    double last_heard = 0;   // monotonic
    double clock_offset = 0; // master wall clock minus the worker's
    std::optional<WorkerReady> ready;
    std::optional<RoundRequest> round;  // dispatched and not answered
    double round_deadline = 0;          // monotonic, once the round was sent
    uint64_t round_bytes = 0;           // the ROUND message's size on the wire
    int restarts = 0;                   // within the current round (or the start)
    bool fresh = true;                  // has not served a round yet: send it the kept state
    int64_t last_evaluated = -1;        // the last Newton evaluation this invocation answered
    int64_t link_reconnects = 0;        // as its heartbeats last said
    int64_t memory_limit = 0;           // bytes, as its HELLO said (0: none it could see)
    std::string last_failure;
    std::optional<TextScanned> scanned;  // text: what its part holds, once it said
    uint64_t text_read = 0;              // text: how much of its part it had read, as its heartbeats said
  };

  // Listens and launches every worker (once).
  Status Open();
  // Pumps until every worker is in `phase` (or one is gone, or the deadline passes: an error
  // naming the worker).
  // `between` (if set) runs between the waits for messages.
  Status AwaitPhase(Phase phase, Deadline deadline, const std::function<void()>& between = {});
  // How far the workers' reading has come.
  ScanProgress ProgressOfScan() const;
  void HandleScanned(int worker, const Incoming& incoming);
  bool HasTextPlan() const;
  void Launch(int worker);
  void Fail(int worker, const std::string& why);
  // Why a worker ended, `how`, in words; told as running out of memory where it was that.
  std::string Ended(int worker, const std::string& how) const;
  void SendRound(int worker);
  void Handle(Incoming incoming);
  void DropOldInvocation(int worker, const Incoming& incoming);
  Status SendAssign(int worker);
  void ResendAfter(int worker, const std::string& what);
  void HandleHello(int worker, const Incoming& incoming, double now);
  bool IsDuplicateHello(const Incoming& incoming) const;
  void HandleReady(int worker, const Incoming& incoming);
  void HandleReply(int worker, const Incoming& incoming);
  void HandleBye(int worker, const Incoming& incoming);
  void HandleHeartbeat(int worker, const Incoming& incoming);
  void CheckWorkers();
  void Pump(Deadline until);
  double RoundTimeout() const;
  void Event(int worker, const std::string& what, const std::string& detail);
  Status SendTo(int worker, const WireMessage& message);
  Envelope EnvelopeFor(int worker, MessageType type) const;

  std::vector<ShardAssignment> shards_;
  ProblemSpec spec_;
  WorkerOptions worker_options_;
  RemoteOptions options_;
  std::unique_ptr<Launcher> launcher_;
  uint64_t run_id_ = 0;
  RunKeys keys_;  // empty when insecure
  std::string endpoint_;
  std::shared_ptr<ZmqContext> context_;
  std::unique_ptr<RouterTransport> transport_;
  std::unique_ptr<StateKeeper> state_;
  std::vector<Slot> slots_;
  std::vector<std::unique_ptr<Invocation>> retired_;  // replaced invocations, reaped at Stop
  std::vector<WorkerReply> replies_;                  // arrived, not yet collected
  std::vector<double> round_seconds_;                 // recent compute times, for the deadline
  double last_heartbeat_ = 0;
  RemoteStats stats_;
  TraceSink* trace_ = nullptr;
  bool started_ = false;
  bool opened_ = false;
};

}  // namespace nimbus
