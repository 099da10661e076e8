#include "nimbus/runtime/threads_executor.h"

#include <exception>

#include "nimbus/core/clock.h"
#include "nimbus/data/shard.h"

namespace nimbus {

Result<Dataset> ShardSource::Load(const ProblemSpec& spec) const {
  Dataset data;
  if (rows) {
    data = *rows;
  } else {
    NIMBUS_ASSIGN_OR_RETURN(data, LoadShard(*store, key, checksum));
  }
  if (data.cols() > spec.cols) {
    return InvalidArgument("shard has " + std::to_string(data.cols()) + " features, the problem " +
                           std::to_string(spec.cols));
  }
  data.matrix.cols = spec.cols;  // all shards share the problem's dimension
  if (data.rows() == 0) return InvalidArgument("shard has no rows");
  return data;
}

ThreadsExecutor::ThreadsExecutor(std::vector<ShardSource> shards, const ProblemSpec& spec,
                                 const WorkerOptions& options)
    : shards_(std::move(shards)), spec_(spec), options_(options), slots_(shards_.size()) {}

ThreadsExecutor::~ThreadsExecutor() { Stop(); }

Result<std::vector<WorkerReady>> ThreadsExecutor::Start(Deadline deadline) {
  if (!threads_.empty()) return FailedPrecondition("the threads runtime was already started");
  if (shards_.empty()) return InvalidArgument("workers: need at least one shard");
  for (int id = 0; id < workers(); ++id) threads_.emplace_back(&ThreadsExecutor::WorkerMain, this, id);

  std::unique_lock lock(mutex_);
  const auto all_reported = [&] {
    for (const Slot& slot : slots_) {
      if (!slot.ready && slot.load_error.empty()) return false;
    }
    return true;
  };
  if (!work_done_.wait_until(lock, deadline.time_point(), all_reported)) {
    return DeadlineExceeded("workers did not load their shards before the start deadline");
  }
  std::vector<WorkerReady> ready;
  for (std::size_t id = 0; id < slots_.size(); ++id) {
    if (!slots_[id].load_error.empty()) {
      return Unavailable("worker " + std::to_string(id) + " could not load its shard: " + slots_[id].load_error);
    }
    ready.push_back(*slots_[id].ready);
  }
  return ready;
}

void ThreadsExecutor::WorkerMain(int id) {
  Stopwatch load_watch;
  std::unique_ptr<ShardWorker> worker;
  std::string load_error;
  Result<Dataset> data = shards_[static_cast<std::size_t>(id)].Load(spec_);
  if (data.ok()) {
    worker = std::make_unique<ShardWorker>(id, std::move(data).value(), spec_, options_);
  } else {
    load_error = data.status().ToString();
  }
  const double load_seconds = load_watch.ElapsedSeconds();
  int64_t seen_generation = 0;
  {
    std::lock_guard lock(mutex_);
    Slot& slot = slots_[static_cast<std::size_t>(id)];
    if (worker) {
      slot.ready = worker->Ready(load_seconds);
    } else {
      slot.load_error = load_error;
    }
  }
  work_done_.notify_all();
  if (!worker) return;

  while (true) {
    RoundRequest request;
    {
      std::unique_lock lock(mutex_);
      work_ready_.wait(lock, [&] { return stopping_ || generation_ != seen_generation; });
      if (stopping_) return;
      seen_generation = generation_;
      request = *request_;
    }
    WorkerReply reply;
    try {
      reply = worker->Serve(request);
    } catch (const std::exception& error) {
      reply.worker = id;
      reply.round = request.round;
      reply.status = ReplyStatus::kFailed;
      reply.error = std::string("exception: ") + error.what();
    }
    {
      std::lock_guard lock(mutex_);
      // A reply to a round the master gave up on is dropped.
      if (request.round == request_->round) slots_[static_cast<std::size_t>(id)].reply = std::move(reply);
    }
    work_done_.notify_all();
  }
}

std::vector<WorkerReply> ThreadsExecutor::RunRound(const RoundRequest& request, Deadline deadline) {
  std::unique_lock lock(mutex_);
  for (Slot& slot : slots_) slot.reply.reset();
  request_ = request;
  ++generation_;
  work_ready_.notify_all();
  const auto all_replied = [&] {
    for (const Slot& slot : slots_) {
      if (!slot.reply) return false;
    }
    return true;
  };
  work_done_.wait_until(lock, deadline.time_point(), all_replied);
  std::vector<WorkerReply> replies(slots_.size());
  for (std::size_t id = 0; id < slots_.size(); ++id) {
    if (slots_[id].reply) {
      replies[id] = std::move(*slots_[id].reply);
      slots_[id].reply.reset();
    } else {
      replies[id].worker = static_cast<int>(id);
      replies[id].round = request.round;
      replies[id].status = ReplyStatus::kTimedOut;
      replies[id].error = "no reply before the round deadline";
    }
  }
  return replies;
}

void ThreadsExecutor::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

}  // namespace nimbus
