#include "nimbus/data/text_split.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "nimbus/core/file_io.h"
#include "nimbus/data/feature_map.h"
#include "nimbus/data/sample_weights.h"
#include "nimbus/data/shard.h"
#include "nimbus/data/text_rows.h"

namespace nimbus {
namespace {

// A part of a shard's slice: one thread's work in each pass.
struct Task {
  int shard = 0;
  TextSlice part;
  TextScan scan;         // the first pass's (its features merged into the whole's and dropped)
  int64_t row = 0;       // its first row in its shard (from the scans)
  int64_t entry = 0;     // its first entry in its shard
  int64_t first_row = 0;  // in the whole data set
  uint64_t weights_offset = 0;  // the byte where its rows' weights begin
};

// Runs `work` on every task, `threads` at a time; the first error in task order is the result
// (and stops tasks not yet begun).
Status RunTasks(std::vector<Task>& tasks, int threads, const std::function<Status(Task&)>& work) {
  std::vector<Status> results(tasks.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  auto run = [&] {
    for (std::size_t i = next++; i < tasks.size() && !failed; i = next++) {
      results[i] = work(tasks[i]);
      if (!results[i].ok()) failed = true;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min<int>(threads, static_cast<int>(tasks.size())); ++t) pool.emplace_back(run);
  run();
  for (std::thread& thread : pool) thread.join();
  for (const Status& result : results) NIMBUS_RETURN_IF_ERROR(result);
  return Status::Ok();
}

// Counts progress from any thread and reports it at most every percent.
class Progress {
 public:
  Progress(const TextSplitOptions& options, std::string pass, uint64_t total)
      : on_progress_(options.on_progress), pass_(std::move(pass)), total_(std::max<uint64_t>(total, 1)) {}
  void Add(uint64_t bytes) {
    if (!on_progress_) return;
    std::lock_guard lock(mutex_);
    done_ += bytes;
    if (done_ * 100 / total_ > reported_ * 100 / total_ || done_ >= total_) {
      reported_ = done_;
      on_progress_(pass_, std::min(done_, total_), total_);
    }
  }

 private:
  const std::function<void(const std::string&, uint64_t, uint64_t)>& on_progress_;
  std::string pass_;
  uint64_t total_, done_ = 0, reported_ = 0;
  std::mutex mutex_;
};

// Where shard files are made: beside their final place in a directory store (then renamed),
// or in a scratch directory for another store (then copied up). Removes what was not kept.
class ShardFiles {
 public:
  ShardFiles(Store& out, std::string scratch) : out_(out), directory_(dynamic_cast<DirectoryStore*>(&out)) {
    scratch_ = std::move(scratch);
  }
  ~ShardFiles() {
    for (const std::string& path : made_) ::unlink(path.c_str());
  }
  Status Prepare() {
    if (directory_ != nullptr) return Status::Ok();
    NIMBUS_ASSIGN_OR_RETURN(TemporaryDirectory temporary, TemporaryDirectory::Create("nimbus-split"));
    temporary_ = std::move(temporary);
    return Status::Ok();
  }
  std::string PathFor(const std::string& key) {
    const std::string path = directory_ != nullptr
                                 ? directory_->PathOf(key) + ".partial-" + std::to_string(::getpid())
                                 : temporary_.path() + "/" + key;
    made_.push_back(path);
    return path;
  }
  // The finished shard file at `path` as `key` of the store.
  Status Keep(const std::string& path, const std::string& key) {
    if (directory_ != nullptr) {
      if (::rename(path.c_str(), directory_->PathOf(key).c_str()) != 0) {
        return ErrnoError("cannot rename " + path + " to " + directory_->PathOf(key), errno);
      }
      std::erase(made_, path);
      return Status::Ok();
    }
    DirectoryStore scratch(temporary_.path());
    NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<ByteReader> reader, scratch.OpenRange(key, 0, UINT64_MAX));
    NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<BlobWriter> writer, out_.OpenWriter(key));
    std::vector<char> buffer(std::size_t{8} << 20);
    while (true) {
      NIMBUS_ASSIGN_OR_RETURN(const std::size_t got, reader->Read(buffer));
      if (got == 0) break;
      NIMBUS_RETURN_IF_ERROR(writer->Write(std::string_view(buffer.data(), got)));
    }
    NIMBUS_RETURN_IF_ERROR(writer->Commit());
    ::unlink(path.c_str());
    std::erase(made_, path);
    return Status::Ok();
  }

 private:
  Store& out_;
  DirectoryStore* directory_;
  std::string scratch_;
  TemporaryDirectory temporary_;
  std::vector<std::string> made_;
};

// Parts per slice: enough for every thread to have two, and none much over 256 MB, so that a
// slow part does not hold the pass up at its end.
int PartsPerSlice(const std::vector<TextSlice>& slices, int threads) {
  uint64_t largest = 0;
  for (const TextSlice& slice : slices) largest = std::max(largest, slice.bytes());
  const int for_threads = (2 * threads + static_cast<int>(slices.size()) - 1) / static_cast<int>(slices.size());
  const int for_size = static_cast<int>(largest / (uint64_t{256} << 20)) + 1;
  return std::clamp(std::max(for_threads, for_size), 1, 4096);
}

}  // namespace

Result<TextSplitResult> SplitText(const TextFiles& input, const TextSplitOptions& options, Store& out) {
  if (options.shards < 1) return InvalidArgument("--shards: must be at least 1");
  const int threads = options.threads > 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  const std::vector<TextSlice> slices = SliceText(input.files, options.shards);
  const int parts = PartsPerSlice(slices, threads);
  std::vector<Task> tasks;
  for (std::size_t s = 0; s < slices.size(); ++s) {
    for (TextSlice& part : SubdivideSlice(input.files, slices[s], parts)) {
      tasks.push_back({static_cast<int>(s), std::move(part), {}});
    }
  }

  // The first pass: every part's scan; the features that occur merged as parts finish.
  TextReadOptions scan_options{options.libsvm, options.libsvm.renumber_columns};
  std::vector<uint32_t> features;
  std::mutex features_mutex;
  Progress reading(options, "reading", input.bytes());
  NIMBUS_RETURN_IF_ERROR(RunTasks(tasks, threads, [&](Task& task) -> Status {
    RowBlock block;
    NIMBUS_ASSIGN_OR_RETURN(task.scan, ReadTextSlice(input.files, task.part, scan_options, block, false));
    reading.Add(task.part.bytes());
    std::vector<uint32_t> own = std::move(task.scan.features);
    task.scan.features = {};
    std::lock_guard lock(features_mutex);
    features = MergeUnique(features, own);
    return Status::Ok();
  }));
  std::vector<TextScan> scans;
  TextSplitResult result;
  for (Task& task : tasks) {
    scans.push_back(task.scan);
    result.bytes_read += task.scan.bytes_read;
  }
  if (!scans.empty()) scans.front().features = std::move(features);
  NIMBUS_ASSIGN_OR_RETURN(const TextPlan plan, PlanText(scans, options.libsvm, input.location));
  scans.clear();

  // Each shard's rows and entries, each part's place in its shard; shards with no row are left out.
  std::vector<int64_t> shard_rows(slices.size(), 0), shard_nnz(slices.size(), 0), shard_first(slices.size(), -1);
  std::vector<char> shard_ones(slices.size(), 1), shard_floats(slices.size(), 1);
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    Task& task = tasks[t];
    const auto s = static_cast<std::size_t>(task.shard);
    task.first_row = plan.first_rows[t];
    if (shard_first[s] < 0) shard_first[s] = task.first_row;
    task.row = shard_rows[s];
    task.entry = shard_nnz[s];
    shard_rows[s] += task.scan.rows;
    shard_nnz[s] += task.scan.nnz;
    shard_ones[s] = shard_ones[s] && task.scan.all_ones;
    shard_floats[s] = shard_floats[s] && task.scan.all_floats;
  }
  if (options.sample_weights) {
    std::vector<int64_t> first_lines;
    for (const Task& task : tasks) first_lines.push_back(task.first_row);
    NIMBUS_ASSIGN_OR_RETURN(const std::vector<uint64_t> offsets,
                            SampleWeightOffsets(*options.sample_weights, first_lines, plan.rows));
    for (std::size_t t = 0; t < tasks.size(); ++t) tasks[t].weights_offset = offsets[t];
  }

  ShardFiles files(out, options.scratch_directory);
  NIMBUS_RETURN_IF_ERROR(files.Prepare());
  Manifest& manifest = result.manifest;
  manifest.source = input.location;
  manifest.rows = plan.rows;
  manifest.cols = plan.cols();
  manifest.nnz = plan.nnz;
  manifest.encoding = plan.encoding;
  std::vector<std::unique_ptr<ShardFileWriter>> writers(slices.size());
  std::vector<std::string> keys(slices.size());
  for (std::size_t s = 0; s < slices.size(); ++s) {
    if (shard_rows[s] == 0) {
      ++result.empty_parts;
      continue;
    }
    keys[s] = ShardKey(static_cast<int>(s) - result.empty_parts);
    const CsrValues values =
        options.compact_values ? CompactValuesOf(shard_ones[s], shard_floats[s]) : CsrValues::kDouble;
    const bool weighted = options.sample_weights.has_value();
    result.shard_bytes += ShardFileBytes(shard_rows[s], shard_nnz[s], weighted, values);
    result.double_shard_bytes += ShardFileBytes(shard_rows[s], shard_nnz[s], weighted, CsrValues::kDouble);
    NIMBUS_ASSIGN_OR_RETURN(writers[s], ShardFileWriter::Create(files.PathFor(keys[s]), shard_rows[s], plan.cols(),
                                                                shard_nnz[s], weighted, values, plan.encoding,
                                                                shard_first[s]));
  }

  // The second pass: each part read again, and its rows written to their place.
  const TextPlanRows planned(plan);
  Progress writing(options, "writing", input.bytes());
  NIMBUS_RETURN_IF_ERROR(RunTasks(tasks, threads, [&](Task& task) -> Status {
    if (task.scan.rows == 0) return Status::Ok();
    ShardFileWriter& writer = *writers[static_cast<std::size_t>(task.shard)];
    // The rows' weights, a block's at a time, from where the part's first row's line begins.
    std::optional<SampleWeightReader> weight_lines;
    std::vector<double> weights;
    if (options.sample_weights) {
      NIMBUS_ASSIGN_OR_RETURN(weight_lines,
                              SampleWeightReader::Open(*options.sample_weights, task.weights_offset, task.first_row));
    }
    int64_t row = task.row, entry = task.entry;
    RowBlock block;
    TextReadOptions read{options.libsvm, false};
    NIMBUS_ASSIGN_OR_RETURN(const TextScan again, ReadTextSlice(input.files, task.part, read, block, false,
                                                                [&](RowBlock& rows) -> Status {
      NIMBUS_RETURN_IF_ERROR(planned.Apply(rows));
      if (weight_lines) NIMBUS_RETURN_IF_ERROR(weight_lines->Read(rows.rows(), weights));
      NIMBUS_RETURN_IF_ERROR(writer.Write(row, entry, rows.View(plan.cols()), rows.labels.span(), weights));
      row += rows.rows();
      entry += rows.nnz();
      return Status::Ok();
    }));
    if (again.rows != task.scan.rows || again.nnz != task.scan.nnz) {
      return DataLoss(input.location + ": the text changed while it was split (a part held " +
                      std::to_string(task.scan.rows) + " rows, then " + std::to_string(again.rows) + ")");
    }
    writing.Add(task.part.bytes());
    return Status::Ok();
  }));

  if (plan.features) {
    NIMBUS_ASSIGN_OR_RETURN(manifest.features, WriteColumnMap(out, plan.columns()));
  }
  for (std::size_t s = 0; s < slices.size(); ++s) {
    if (!writers[s]) continue;
    NIMBUS_ASSIGN_OR_RETURN(const ShardInfo info, writers[s]->Finish());
    NIMBUS_RETURN_IF_ERROR(files.Keep(writers[s]->path(), keys[s]));
    manifest.shards.push_back({keys[s], info.rows, info.nnz, info.first_row, info.payload_checksum});
  }
  NIMBUS_RETURN_IF_ERROR(WriteManifest(out, manifest));
  return result;
}

}  // namespace nimbus
