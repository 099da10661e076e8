#include "nimbus/runtime/relay.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "nimbus/cloud/s3.h"
#include "nimbus/core/clock.h"
#include "nimbus/core/file_io.h"
#include "nimbus/data/store.h"
#include "nimbus/runtime/launcher.h"
#include "nimbus/runtime/threads_executor.h"
#include "nimbus/worker/fault_injection.h"

namespace nimbus {

Result<std::vector<ShardAssignment>> GroupForRelays(const std::vector<ShardAssignment>& shards, int groups,
                                                    const RelayGroup& settings) {
  if (groups < 1 || static_cast<std::size_t>(groups) > shards.size()) {
    return InvalidArgument("--relays: " + std::to_string(groups) + " relays for " + std::to_string(shards.size()) +
                           " workers: give 1 to " + std::to_string(shards.size()));
  }
  if (!settings.hosts.empty() && settings.hosts.size() != shards.size()) {
    return InvalidArgument("--relays: " + std::to_string(settings.hosts.size()) + " worker hosts for " +
                           std::to_string(shards.size()) + " workers");
  }
  std::vector<ShardAssignment> relays;
  std::size_t next = 0;
  for (int g = 0; g < groups; ++g) {
    // Group g takes shards [next, end): the first (size mod groups) groups one more.
    const std::size_t end = next + shards.size() / groups + (static_cast<std::size_t>(g) < shards.size() % groups);
    ShardAssignment relay;
    relay.store_uri = shards[next].store_uri;
    relay.key = "relay of shards " + std::to_string(next) + " to " + std::to_string(end - 1);
    relay.relay = settings;
    relay.relay->shards.clear();
    if (!settings.hosts.empty()) relay.relay->hosts.assign(settings.hosts.begin() + next, settings.hosts.begin() + end);
    for (std::size_t i = next; i < end; ++i) {
      const ShardAssignment& shard = shards[i];
      if (!shard.folds.empty() || shard.text || shard.relay || shard.store_uri != relay.store_uri) {
        return InvalidArgument("--relays: relays serve shards of one store (split the data, or give a LIBSVM file, "
                               "which the master splits); not cross-validation's folds or text the workers read");
      }
      relay.relay->shards.push_back({shard.key, shard.checksum, shard.rows, shard.nnz, shard.memory_estimate_bytes});
      relay.rows += shard.rows;
      relay.nnz += shard.nnz;
      relay.memory_estimate_bytes = std::max(relay.memory_estimate_bytes, shard.memory_estimate_bytes);
    }
    relays.push_back(std::move(relay));
    next = end;
  }
  return relays;
}

namespace {

// The relay's group as its master would see it: one worker holding every row of the group.
class Relay final : public RoundServer {
 public:
  Relay(int index, std::unique_ptr<Executor> executor, std::size_t model_size)
      : index_(index), executor_(std::move(executor)), model_size_(model_size) {}
  ~Relay() override { executor_->Stop(); }

  // Starts the group's workers; the group's READY from theirs.
  Result<WorkerReady> Start() {
    NIMBUS_ASSIGN_OR_RETURN(const std::vector<WorkerReady> readies, executor_->Start(Deadline::Never()));
    WorkerReady group;
    group.worker = index_;
    for (const WorkerReady& ready : readies) {
      group.rows += ready.rows;
      group.cols = std::max(group.cols, ready.cols);
      group.nnz += ready.nnz;
      group.curvature_trace += ready.curvature_trace;
      group.load_seconds = std::max(group.load_seconds, ready.load_seconds);
    }
    if (readies.front().support) UniteSupports(readies);
    group.support = support_;
    return group;
  }

  std::size_t local_size() const override { return support_ ? support_->size() : model_size_; }

  WorkerReply Serve(const RoundRequest& request, uint64_t invocation) override {
    Stopwatch watch;
    WorkerReply reply;
    reply.worker = index_;
    reply.invocation = invocation;
    reply.round = request.round;
    reply.timings.start_wall = WallSeconds();
    Result<RoundRequest> onward = Onward(request);
    if (!onward.ok()) return Failed(std::move(reply), onward.status().message());
    const std::vector<WorkerReply> replies = executor_->RunRound(*onward, Deadline::Never());
    if (Status summed = Sum(replies, reply); !summed.ok()) return Failed(std::move(reply), summed.message());
    reply.timings.end_wall = WallSeconds();
    reply.timings.compute_seconds = watch.ElapsedSeconds();
    return reply;
  }

 private:
  // The round as the group's workers get it: z (and a product's point) on the whole model,
  // which their executor gathers onto each worker's support.
  Result<RoundRequest> Onward(const RoundRequest& request) {
    if (request.kind == RoundKind::kAdmm) {
      return FailedPrecondition("relays sum Newton's rounds and scores; ADMM's are not relayed yet "
                                "(use --algorithm newton)");
    }
    RoundRequest onward = request;
    onward.z = Expand(request.z);
    if (request.kind == RoundKind::kEvaluate) {
      evaluated_point_ = onward.z;
      evaluated_round_ = request.round;
    }
    if (request.kind == RoundKind::kHessianVector) {
      // The master leaves the point out when this relay evaluated it; a new relay gets it.
      if (!request.point.empty()) {
        onward.point = Expand(request.point);
      } else if (evaluated_round_ == request.point_round) {
        onward.point = evaluated_point_;
      } else {
        return FailedPrecondition("the point of round " + std::to_string(request.point_round) + " is not here");
      }
    }
    return onward;
  }

  // A vector on the relay's support as one on the whole model (zero elsewhere); any other
  // length (a score's model copies) as it is.
  SharedVector Expand(const SharedVector& local) const {
    if (!support_ || local.size() != support_->size()) return local;
    std::vector<double> whole(model_size_, 0.0);
    for (std::size_t k = 0; k < local.size(); ++k) whole[(*support_)[k]] = local[k];
    return SharedVector(std::move(whole));
  }

  // The union of the workers' supports, and where each worker's entries sit in it.
  void UniteSupports(const std::vector<WorkerReady>& readies) {
    std::vector<uint32_t> all;
    for (const WorkerReady& ready : readies) all.insert(all.end(), ready.support->begin(), ready.support->end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    for (const WorkerReady& ready : readies) {
      std::vector<uint32_t>& places = places_.emplace_back();
      for (const uint32_t j : *ready.support) {
        places.push_back(static_cast<uint32_t>(std::lower_bound(all.begin(), all.end(), j) - all.begin()));
      }
    }
    support_ = std::make_shared<const std::vector<uint32_t>>(std::move(all));
  }

  // reply.w = the sum of the workers' w (in the general form each of its vectors scattered
  // from the worker's support into the union), in worker order so that the sum is
  // reproducible; the scalars summed likewise.
  Status Sum(const std::vector<WorkerReply>& replies, WorkerReply& reply) const {
    const int vectors = replies.front().w_vectors;  // 0: any length, summed as it is (a score's)
    const bool scattered = vectors > 0 && support_;
    std::vector<double> sum(vectors == 0 ? replies.front().w.size() : vectors * local_size(), 0.0);
    reply.scalars.valid = true;
    for (const WorkerReply& r : replies) {
      const std::vector<uint32_t>* places = scattered ? &places_[static_cast<std::size_t>(r.worker)] : nullptr;
      NIMBUS_RETURN_IF_ERROR(CheckShape(r, vectors, places ? vectors * places->size() : sum.size()));
      if (places == nullptr) {
        for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += r.w[k];
      } else {
        const std::size_t local = places->size();
        for (std::size_t v = 0; v < static_cast<std::size_t>(vectors); ++v) {
          double* out = sum.data() + v * local_size();
          const double* w = r.w.data() + v * local;
          for (std::size_t k = 0; k < local; ++k) out[(*places)[k]] += w[k];
        }
      }
      AddScalars(r, reply);
    }
    reply.w = SharedVector(std::move(sum));
    reply.w_vectors = vectors;
    return Status::Ok();
  }

  static Status CheckShape(const WorkerReply& r, int vectors, std::size_t entries) {
    const std::string worker = "its worker " + std::to_string(r.worker);
    if (r.status != ReplyStatus::kOk) {
      return Status(StatusCode::kUnavailable, worker + " " + ReplyStatusName(r.status) + ": " + r.error);
    }
    if (r.w_vectors != vectors || r.w.size() != entries) {
      return Status(StatusCode::kUnavailable, worker + " answered " + std::to_string(r.w.size()) + " entries, not " +
                                                  std::to_string(entries));
    }
    return Status::Ok();
  }

  static void AddScalars(const WorkerReply& r, WorkerReply& reply) {
    reply.scalars.valid = reply.scalars.valid && r.scalars.valid;
    reply.scalars.primal_squared += r.scalars.primal_squared;
    reply.scalars.x_squared += r.scalars.x_squared;
    reply.scalars.u_squared += r.scalars.u_squared;
    reply.scalars.loss_at_z += r.scalars.loss_at_z;
    reply.timings.solve_seconds = std::max(reply.timings.solve_seconds, r.timings.solve_seconds);
    reply.timings.local_iterations = std::max(reply.timings.local_iterations, r.timings.local_iterations);
    reply.timings.cg_iterations = std::max(reply.timings.cg_iterations, r.timings.cg_iterations);
    reply.timings.data_passes += r.timings.data_passes;
  }

  static WorkerReply Failed(WorkerReply reply, const std::string& why) {
    reply.status = ReplyStatus::kFailed;
    reply.error = why;
    reply.w = SharedVector();
    return reply;
  }

  int index_;
  std::unique_ptr<Executor> executor_;
  std::size_t model_size_;
  std::shared_ptr<const std::vector<uint32_t>> support_;  // the union of the workers'; null: dense
  std::vector<std::vector<uint32_t>> places_;             // worker g's support entries in the union
  SharedVector evaluated_point_;                          // of the last evaluation, on the whole model
  int64_t evaluated_round_ = -1;
};

// How the relay's workers start: relays of its own (past the fanout) as processes on this host,
// else its workers as processes here or, given a launch command, on their hosts. Processes here
// end with the relay.
std::unique_ptr<Launcher> GroupLauncher(const RelayGroup& group, bool relays_under) {
  if (group.launch.empty() || relays_under) {
    return MakeProcessLauncher(CurrentExecutable(), /*end_with_this=*/true);
  }
  return MakeCommandLauncher(group.launch, group.hosts);
}

// The group's workers as processes that dial the relay (relays of their own past the fanout).
// Workers on other hosts dial it at `advertise_host`, which its relays on this host are given.
Result<std::unique_ptr<Executor>> GroupProcesses(const AssignBody& body, const ProblemSpec& spec,
                                                 const WorkerOptions& options, const std::string& advertise_host) {
  RelayGroup group = *body.relay;
  group.advertise_host = advertise_host;
  std::vector<ShardAssignment> shards;
  for (const RelayedShard& shard : group.shards) {
    shards.push_back({body.store_uri, shard.key, shard.checksum, {}, shard.rows, shard.nnz, shard.memory_estimate_bytes});
  }
  const int64_t relays = RelaysUnder(static_cast<int64_t>(shards.size()), group.fanout);
  if (relays > 0) {
    NIMBUS_ASSIGN_OR_RETURN(shards, GroupForRelays(shards, static_cast<int>(relays), group));
  }
  RemoteOptions remote;
  remote.name = "relay";
  remote.listen = group.listen;
  remote.advertise_host = advertise_host;
  remote.heartbeat_seconds = body.heartbeat_seconds;
  remote.master_timeout_seconds = body.master_timeout_seconds;
  // No spill directory: a relay serves Newton's rounds, whose workers keep no state at the relay
  // (a killed relay would leave the directory behind).
  NIMBUS_RETURN_IF_ERROR(remote.Validate().WithContext("the relay's options"));
  return std::unique_ptr<Executor>(std::make_unique<RemoteExecutor>(
      std::move(shards), spec, options, remote, GroupLauncher(group, relays > 0)));
}

// The group's workers as threads of the relay's process, each loading its shard from the store.
Result<std::unique_ptr<Executor>> GroupThreads(const AssignBody& body, const ProblemSpec& spec,
                                               const WorkerOptions& options) {
  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<Store> opened, OpenAnyStore(body.store_uri, /*create=*/false));
  const std::shared_ptr<Store> store = std::move(opened);
  std::vector<ShardSource> sources;
  for (const RelayedShard& shard : body.relay->shards) {
    std::optional<uint64_t> checksum;
    if (shard.checksum != 0) checksum = shard.checksum;
    sources.push_back(ShardSource::InStore(store, shard.key, checksum));
  }
  return std::unique_ptr<Executor>(std::make_unique<ThreadsExecutor>(std::move(sources), spec, options));
}

}  // namespace

Result<std::unique_ptr<RoundServer>> StartRelay(int relay, const AssignBody& body, const std::string& master,
                                                WorkerReady* ready) {
  NIMBUS_ASSIGN_OR_RETURN(const ProblemSpec spec, AssignedSpec(body));
  WorkerOptions options;  // the relay's faults are its own: its workers get none
  options.solver = static_cast<LocalSolver>(body.local_solver);
  options.general_form = body.general_form != 0;
  // Workers on other hosts dial this relay where it reaches its master from.
  std::string advertise_host = body.relay->advertise_host;
  if (!body.relay->launch.empty() && advertise_host.empty()) {
    NIMBUS_ASSIGN_OR_RETURN(advertise_host, LocalAddressToward(master));
  }
  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor,
                          body.relay->threads ? GroupThreads(body, spec, options)
                                              : GroupProcesses(body, spec, options, advertise_host));
  auto server = std::make_unique<Relay>(relay, std::move(executor), spec.model_size());
  NIMBUS_ASSIGN_OR_RETURN(*ready, server->Start());
  return std::unique_ptr<RoundServer>(std::move(server));
}

}  // namespace nimbus
