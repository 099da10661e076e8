// Runtime "threads": K workers as threads of this process, the default. Rounds are handed
// over in memory (z is shared, not copied). A worker's shard is either rows already in
// memory or a shard in a store that the worker thread loads itself (its cold start).
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <semaphore>
#include <thread>
#include <vector>

#include "nimbus/executor/executor.h"
#include "nimbus/data/dataset.h"
#include "nimbus/data/store.h"
#include "nimbus/problem/problem.h"
#include "nimbus/worker/shard_worker.h"

namespace nimbus {

struct ShardSource {
  std::optional<Dataset> rows;   // rows already in memory, or
  std::shared_ptr<Store> store;  // a shard to load from a store, or
  std::string key;
  std::optional<uint64_t> checksum;  // the manifest's checksum of that shard
  std::optional<TextPart> text;      // a part of LIBSVM text the worker thread reads

  static ShardSource InMemory(Dataset rows) { return {std::move(rows), nullptr, "", std::nullopt, std::nullopt}; }
  static ShardSource InStore(std::shared_ptr<Store> store, std::string key,
                             std::optional<uint64_t> checksum = std::nullopt) {
    return {std::nullopt, std::move(store), std::move(key), checksum, std::nullopt};
  }
  static ShardSource InText(TextPart part) { return {std::nullopt, nullptr, "", std::nullopt, std::move(part)}; }
  // Loads (or hands over) the rows; checks they fit the problem.
  Result<Dataset> Load(const ProblemSpec& spec) const;
};

class ThreadsExecutor final : public Executor {
 public:
  // `concurrency` > 0 lets at most that many workers compute at once (the others wait their
  // turn), so that each x-update's time is its own even with more workers than cores, as
  // `nimbus simulate --calibrate` needs; 0 lets all of them run.
  ThreadsExecutor(std::vector<ShardSource> shards, const ProblemSpec& spec, const WorkerOptions& options,
                  int concurrency = 0);
  ~ThreadsExecutor() override;

  std::string name() const override { return "threads"; }
  int workers() const override { return static_cast<int>(shards_.size()); }
  Result<std::vector<WorkerReady>> Start(Deadline deadline) override;
  Result<std::vector<TextScanned>> ScanText(Deadline deadline, const ScanObserver& observe) override;
  Status SetTextPlan(const ProblemSpec& spec, std::vector<TextPlanned> parts) override;
  void Dispatch(const RoundRequest& request, std::span<const int> workers) override;
  std::vector<WorkerReply> Collect(int count, Deadline deadline) override;
  void Stop() override;
  Status Restore(const std::vector<WorkerHistory>& histories) override;

 private:
  struct Slot {
    std::optional<TextScanned> scanned;  // text: its part read
    std::optional<WorkerReady> ready;
    std::string load_error;
    StatusCode load_code = StatusCode::kUnavailable;  // of load_error
    std::optional<RoundRequest> pending;  // dispatched, not yet taken by the thread
    int64_t expected_round = -1;          // the round whose reply counts; others are stale
    bool awaiting_reply = false;
    std::optional<WorkerReply> reply;     // arrived, not yet collected
    std::shared_ptr<const ResumeState> resume;  // for the next round (a resumed run)
  };
  void WorkerMain(int id);
  // The worker's rows: in memory, from a store, or its part of the text (scanned, then, once
  // the plan comes, finished).
  Result<Dataset> LoadRows(int id);
  void StartThreads();
  // Waits until every worker has said `done` (or failed); the first failure, naming the worker.
  Status AwaitWorkers(Deadline deadline, const std::function<bool(const Slot&)>& done, const std::string& what);

  std::vector<ShardSource> shards_;
  ProblemSpec spec_;
  WorkerOptions options_;
  std::vector<std::thread> threads_;
  std::unique_ptr<std::counting_semaphore<>> compute_slots_;  // with a concurrency limit

  std::mutex mutex_;
  std::condition_variable work_ready_;  // master -> workers: a new round or stop
  std::condition_variable work_done_;   // workers -> master: a reply or readiness
  std::vector<Slot> slots_;
  std::unique_ptr<std::atomic<uint64_t>[]> text_read_;  // text: each worker's bytes read so far
  bool stopping_ = false;
  bool planned_ = false;  // text: SetTextPlan came (guarded by mutex_)
};

}  // namespace nimbus
