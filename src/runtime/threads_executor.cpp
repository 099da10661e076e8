#include "nimbus/runtime/threads_executor.h"

#include <algorithm>
#include <exception>
#include <stdexcept>

#include "nimbus/core/clock.h"
#include "nimbus/cloud/s3.h"
#include "nimbus/data/shard.h"
#include "nimbus/worker/text_part.h"

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

namespace {

// What threads open: a directory, or with AWS an S3 prefix.
Result<std::unique_ptr<Store>> OpenStoreAt(const std::string& uri) { return OpenAnyStore(uri, /*create=*/false); }

}  // namespace

ThreadsExecutor::ThreadsExecutor(std::vector<ShardSource> shards, const ProblemSpec& spec,
                                 const WorkerOptions& options, int concurrency)
    : shards_(std::move(shards)),
      spec_(spec),
      options_(options),
      slots_(shards_.size()),
      text_read_(std::make_unique<std::atomic<uint64_t>[]>(shards_.size())) {
  if (concurrency > 0) compute_slots_ = std::make_unique<std::counting_semaphore<>>(concurrency);
  // Parts of text that come with their plan are read and finished at once (no scan round).
  planned_ = !shards_.empty() && std::all_of(shards_.begin(), shards_.end(), [](const ShardSource& shard) {
    return shard.text && shard.text->plan;
  });
}

ThreadsExecutor::~ThreadsExecutor() { Stop(); }

void ThreadsExecutor::StartThreads() {
  for (int id = 0; id < workers(); ++id) threads_.emplace_back(&ThreadsExecutor::WorkerMain, this, id);
}

Status ThreadsExecutor::AwaitWorkers(Deadline deadline, const std::function<bool(const Slot&)>& done,
                                     const std::string& what) {
  std::unique_lock lock(mutex_);
  const auto all_reported = [&] {
    for (const Slot& slot : slots_) {
      if (!done(slot) && slot.load_error.empty()) return false;
    }
    return true;
  };
  if (!work_done_.wait_until(lock, deadline.time_point(), all_reported)) {
    return DeadlineExceeded("workers did not " + what + " before the start deadline");
  }
  for (std::size_t id = 0; id < slots_.size(); ++id) {
    if (!slots_[id].load_error.empty()) {
      // The worker's own error (a bad line is the data's fault, not the runtime's).
      return Status(slots_[id].load_code, "worker " + std::to_string(id) + " could not " + what + ": " +
                                              slots_[id].load_error);
    }
  }
  return Status::Ok();
}

Result<std::vector<TextScanned>> ThreadsExecutor::ScanText(Deadline deadline, const ScanObserver& observe) {
  if (!threads_.empty()) return FailedPrecondition("the threads runtime was already started");
  ScanProgress progress{0, 0, 0, workers()};
  for (const ShardSource& shard : shards_) {
    if (!shard.text) return FailedPrecondition("ScanText: a worker's rows are not text");
    progress.bytes_total += TextBytes(*shard.text);
  }
  StartThreads();
  // A second at a time, telling the observer how far the reading has come in between.
  const auto scanned = [](const Slot& slot) { return slot.scanned.has_value(); };
  while (true) {
    const Deadline step = Deadline::After(std::min(1.0, deadline.RemainingSeconds()));
    Status waited = AwaitWorkers(step, scanned, "start (reading its part of the data)");
    if (waited.code() != StatusCode::kDeadlineExceeded || deadline.Expired()) NIMBUS_RETURN_IF_ERROR(waited);
    progress.bytes_read = 0;
    progress.scanned = 0;
    {
      // (A reader goes past its range's end to finish its last line: a part counts no more than its bytes.)
      std::lock_guard lock(mutex_);
      for (std::size_t id = 0; id < slots_.size(); ++id) {
        const uint64_t bytes = TextBytes(*shards_[id].text);
        progress.bytes_read += slots_[id].scanned ? bytes : std::min(bytes, text_read_[id].load());
        progress.scanned += slots_[id].scanned ? 1 : 0;
      }
    }
    if (observe) observe(progress);
    if (waited.ok()) break;
  }
  std::lock_guard lock(mutex_);
  std::vector<TextScanned> scans;
  for (Slot& slot : slots_) scans.push_back(std::move(*slot.scanned));
  return scans;
}

Status ThreadsExecutor::SetTextPlan(const ProblemSpec& spec, std::vector<TextPlanned> parts) {
  if (parts.size() != shards_.size()) return InvalidArgument("SetTextPlan: one part per worker");
  {
    std::lock_guard lock(mutex_);
    spec_ = spec;
    for (std::size_t i = 0; i < parts.size(); ++i) shards_[i].text->plan = std::move(parts[i]);
    planned_ = true;
  }
  work_ready_.notify_all();
  return Status::Ok();
}

Result<std::vector<WorkerReady>> ThreadsExecutor::Start(Deadline deadline) {
  if (shards_.empty()) return InvalidArgument("workers: need at least one shard");
  const bool text = shards_.front().text.has_value();
  if (text && !planned_) return FailedPrecondition("the workers' text has no plan yet (ScanText, SetTextPlan)");
  if (!text && !threads_.empty()) return FailedPrecondition("the threads runtime was already started");
  if (threads_.empty()) StartThreads();
  NIMBUS_RETURN_IF_ERROR(AwaitWorkers(deadline, [](const Slot& slot) { return slot.ready.has_value(); },
                                      "load its shard"));
  std::lock_guard lock(mutex_);
  std::vector<WorkerReady> ready;
  for (const Slot& slot : slots_) ready.push_back(*slot.ready);
  return ready;
}

Result<Dataset> ThreadsExecutor::LoadRows(int id) {
  ShardSource& source = shards_[static_cast<std::size_t>(id)];
  if (!source.text) return source.Load(spec_);
  NIMBUS_ASSIGN_OR_RETURN(TextPartRows rows,
                          ReadTextPart(*source.text, OpenStoreAt, &text_read_[static_cast<std::size_t>(id)]));
  {
    std::unique_lock lock(mutex_);
    slots_[static_cast<std::size_t>(id)].scanned = rows.scan;
    work_done_.notify_all();
    work_ready_.wait(lock, [&] { return stopping_ || planned_; });
    if (stopping_) return FailedPrecondition("stopped before the plan came");
  }
  NIMBUS_ASSIGN_OR_RETURN(Dataset data, FinishTextPart(std::move(rows), *source.text, OpenStoreAt));
  data.matrix.cols = spec_.cols;
  return data;
}

void ThreadsExecutor::WorkerMain(int id) {
  Stopwatch load_watch;
  std::unique_ptr<ShardWorker> worker;
  Result<Dataset> data = LoadRows(id);
  const double load_seconds = load_watch.ElapsedSeconds();
  if (data.ok()) worker = std::make_unique<ShardWorker>(id, std::move(data).value(), spec_, options_);
  {
    std::lock_guard lock(mutex_);
    Slot& loaded = slots_[static_cast<std::size_t>(id)];
    if (worker) {
      loaded.ready = worker->Ready(load_seconds);
    } else {
      loaded.load_error = data.status().message();
      loaded.load_code = data.status().code();
    }
  }
  work_done_.notify_all();
  if (!worker) return;

  Slot& slot = slots_[static_cast<std::size_t>(id)];
  while (true) {
    RoundRequest request;
    {
      std::unique_lock lock(mutex_);
      work_ready_.wait(lock, [&] { return stopping_ || slot.pending.has_value(); });
      if (stopping_) return;
      request = std::move(*slot.pending);
      slot.pending.reset();
    }
    WorkerReply reply;
    try {
      if (options_.faults.Crashes(id, 0, request.round)) throw std::runtime_error("injected crash");
      if (compute_slots_) compute_slots_->acquire();
      struct Release {
        std::counting_semaphore<>* slots;
        ~Release() {
          if (slots != nullptr) slots->release();
        }
      } release{compute_slots_.get()};
      reply = worker->Serve(request);
    } catch (const std::exception& error) {
      reply.worker = id;
      reply.round = request.round;
      reply.status = ReplyStatus::kFailed;
      reply.error = std::string("exception: ") + error.what();
    }
    {
      std::lock_guard lock(mutex_);
      // A reply to a round the master has since replaced is stale and dropped.
      if (slot.awaiting_reply && request.round == slot.expected_round) {
        slot.reply = std::move(reply);
        slot.awaiting_reply = false;
      }
    }
    work_done_.notify_all();
  }
}

void ThreadsExecutor::Dispatch(const RoundRequest& request, std::span<const int> workers) {
  {
    std::lock_guard lock(mutex_);
    for (const int id : workers) {
      Slot& slot = slots_[static_cast<std::size_t>(id)];
      slot.pending = request;
      if (slot.resume != nullptr) slot.pending->resume = std::move(slot.resume);
      slot.expected_round = request.round;
      slot.awaiting_reply = true;
      slot.reply.reset();
    }
  }
  work_ready_.notify_all();
}

Status ThreadsExecutor::Restore(const std::vector<WorkerHistory>& histories) {
  if (histories.size() != slots_.size()) return InvalidArgument("restore: one history per worker");
  std::lock_guard lock(mutex_);
  for (std::size_t i = 0; i < histories.size(); ++i) {
    const WorkerHistory& h = histories[i];
    slots_[i].resume =
        std::make_shared<const ResumeState>(RebuildResumeState(h.previous ? &*h.previous : nullptr, h.last));
  }
  return Status::Ok();
}

std::vector<WorkerReply> ThreadsExecutor::Collect(int count, Deadline deadline) {
  std::unique_lock lock(mutex_);
  const auto enough = [&] {
    int arrived = 0, outstanding = 0;
    for (const Slot& slot : slots_) {
      arrived += slot.reply.has_value() ? 1 : 0;
      outstanding += slot.awaiting_reply ? 1 : 0;
    }
    return arrived >= count || outstanding == 0;
  };
  work_done_.wait_until(lock, deadline.time_point(), enough);
  std::vector<WorkerReply> replies;
  for (Slot& slot : slots_) {
    if (slot.reply) {
      replies.push_back(std::move(*slot.reply));
      slot.reply.reset();
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
