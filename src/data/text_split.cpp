#include "nimbus/data/text_split.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
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

// What a shard gathers from its parts' scans: its rows and entries, its first row in the whole,
// and whether every value is 1 or a float (its kind of values).
struct ShardShape {
  int64_t rows = 0, nnz = 0, first_row = -1;
  bool ones = true, floats = true;
};

// A split of text into shards, as two passes over its parts:
//
//   Scan        every part's rows, entries and features (the features that occur merged as
//               parts finish), and the plan of the whole from the scans
//   PlaceParts  each part's place in its shard and in the whole (and in the weights file)
//   OpenShards  a writer per shard that has rows, at its final size
//   WriteRows   every part read again, its rows written to their place
//   Finish      the shards kept in the store, with the column map and the manifest
class TextSplit {
 public:
  TextSplit(const TextFiles& input, const TextSplitOptions& options, Store& out)
      : input_(input), options_(options), out_(out), files_(out, options.scratch_directory),
        threads_(options.threads > 0 ? options.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {}

  Result<TextSplitResult> Run() {
    if (options_.shards < 1) return InvalidArgument("--shards: must be at least 1");
    MakeTasks();
    NIMBUS_RETURN_IF_ERROR(Scan());
    NIMBUS_RETURN_IF_ERROR(PlaceParts());
    NIMBUS_RETURN_IF_ERROR(OpenShards());
    NIMBUS_RETURN_IF_ERROR(WriteRows());
    NIMBUS_RETURN_IF_ERROR(Finish());
    return std::move(result_);
  }

 private:
  void MakeTasks();
  Status Scan();
  Status PlaceParts();
  Status OpenShards();
  Status WriteRows();
  Status WritePart(Task& task, const TextPlanRows& planned) const;
  Status Finish();

  const TextFiles& input_;
  const TextSplitOptions& options_;
  Store& out_;
  ShardFiles files_;
  const int threads_;
  std::vector<TextSlice> slices_;  // a shard's text each
  std::vector<Task> tasks_;        // the parts, each of one slice
  std::optional<TextPlan> plan_;
  std::vector<ShardShape> shapes_;
  std::vector<std::unique_ptr<ShardFileWriter>> writers_;  // none for a shard without rows
  std::vector<std::string> keys_;
  TextSplitResult result_;
};

void TextSplit::MakeTasks() {
  slices_ = SliceText(input_.files, options_.shards);
  const int parts = PartsPerSlice(slices_, threads_);
  for (std::size_t s = 0; s < slices_.size(); ++s) {
    for (TextSlice& part : SubdivideSlice(input_.files, slices_[s], parts)) {
      tasks_.push_back({static_cast<int>(s), std::move(part), {}});
    }
  }
}

Status TextSplit::Scan() {
  const TextReadOptions scan_options{options_.libsvm, options_.libsvm.renumber_columns};
  std::vector<uint32_t> features;
  std::mutex features_mutex;
  Progress reading(options_, "reading", input_.bytes());
  NIMBUS_RETURN_IF_ERROR(RunTasks(tasks_, threads_, [&](Task& task) -> Status {
    RowBlock block;
    NIMBUS_ASSIGN_OR_RETURN(task.scan, ReadTextSlice(input_.files, task.part, scan_options, block, false));
    reading.Add(task.part.bytes());
    std::vector<uint32_t> own = std::move(task.scan.features);
    task.scan.features = {};
    std::lock_guard lock(features_mutex);
    features = MergeUnique(features, own);
    return Status::Ok();
  }));
  std::vector<TextScan> scans;
  for (Task& task : tasks_) {
    scans.push_back(task.scan);
    result_.bytes_read += task.scan.bytes_read;
  }
  if (!scans.empty()) scans.front().features = std::move(features);
  NIMBUS_ASSIGN_OR_RETURN(plan_, PlanText(scans, options_.libsvm, input_.location));
  return Status::Ok();
}

Status TextSplit::PlaceParts() {
  shapes_.assign(slices_.size(), ShardShape{});
  for (std::size_t t = 0; t < tasks_.size(); ++t) {
    Task& task = tasks_[t];
    ShardShape& shape = shapes_[static_cast<std::size_t>(task.shard)];
    task.first_row = plan_->first_rows[t];
    if (shape.first_row < 0) shape.first_row = task.first_row;
    task.row = shape.rows;
    task.entry = shape.nnz;
    shape.rows += task.scan.rows;
    shape.nnz += task.scan.nnz;
    shape.ones = shape.ones && task.scan.all_ones;
    shape.floats = shape.floats && task.scan.all_floats;
  }
  if (!options_.sample_weights) return Status::Ok();
  std::vector<int64_t> first_lines;
  for (const Task& task : tasks_) first_lines.push_back(task.first_row);
  NIMBUS_ASSIGN_OR_RETURN(const std::vector<uint64_t> offsets,
                          SampleWeightOffsets(*options_.sample_weights, first_lines, plan_->rows));
  for (std::size_t t = 0; t < tasks_.size(); ++t) tasks_[t].weights_offset = offsets[t];
  return Status::Ok();
}

// Shards with no row are left out (and the keys of those after them close up).
Status TextSplit::OpenShards() {
  NIMBUS_RETURN_IF_ERROR(files_.Prepare());
  writers_.resize(slices_.size());
  keys_.resize(slices_.size());
  const bool weighted = options_.sample_weights.has_value();
  for (std::size_t s = 0; s < slices_.size(); ++s) {
    const ShardShape& shape = shapes_[s];
    if (shape.rows == 0) {
      ++result_.empty_parts;
      continue;
    }
    keys_[s] = ShardKey(static_cast<int>(s) - result_.empty_parts);
    const CsrValues values = options_.compact_values ? CompactValuesOf(shape.ones, shape.floats) : CsrValues::kDouble;
    result_.shard_bytes += ShardFileBytes(shape.rows, shape.nnz, weighted, values);
    result_.double_shard_bytes += ShardFileBytes(shape.rows, shape.nnz, weighted, CsrValues::kDouble);
    NIMBUS_ASSIGN_OR_RETURN(writers_[s], ShardFileWriter::Create(files_.PathFor(keys_[s]), shape.rows, plan_->cols(),
                                                                 shape.nnz, weighted, values, plan_->encoding,
                                                                 shape.first_row));
  }
  return Status::Ok();
}

Status TextSplit::WriteRows() {
  const TextPlanRows planned(*plan_);
  Progress writing(options_, "writing", input_.bytes());
  return RunTasks(tasks_, threads_, [&](Task& task) -> Status {
    if (task.scan.rows == 0) return Status::Ok();
    NIMBUS_RETURN_IF_ERROR(WritePart(task, planned));
    writing.Add(task.part.bytes());
    return Status::Ok();
  });
}

// One part read again, its rows (with their weights, a block's at a time from where the part's
// first row's line begins) written to their place in its shard.
Status TextSplit::WritePart(Task& task, const TextPlanRows& planned) const {
  ShardFileWriter& writer = *writers_[static_cast<std::size_t>(task.shard)];
  std::optional<SampleWeightReader> weight_lines;
  std::vector<double> weights;
  if (options_.sample_weights) {
    NIMBUS_ASSIGN_OR_RETURN(weight_lines,
                            SampleWeightReader::Open(*options_.sample_weights, task.weights_offset, task.first_row));
  }
  int64_t row = task.row, entry = task.entry;
  RowBlock block;
  const TextReadOptions read{options_.libsvm, false};
  NIMBUS_ASSIGN_OR_RETURN(const TextScan again, ReadTextSlice(input_.files, task.part, read, block, false,
                                                              [&](RowBlock& rows) -> Status {
    NIMBUS_RETURN_IF_ERROR(planned.Apply(rows));
    if (weight_lines) NIMBUS_RETURN_IF_ERROR(weight_lines->Read(rows.rows(), weights));
    NIMBUS_RETURN_IF_ERROR(writer.Write(row, entry, rows.View(plan_->cols()), rows.labels.span(), weights));
    row += rows.rows();
    entry += rows.nnz();
    return Status::Ok();
  }));
  if (again.rows != task.scan.rows || again.nnz != task.scan.nnz) {
    return DataLoss(input_.location + ": the text changed while it was split (a part held " +
                    std::to_string(task.scan.rows) + " rows, then " + std::to_string(again.rows) + ")");
  }
  return Status::Ok();
}

Status TextSplit::Finish() {
  Manifest& manifest = result_.manifest;
  manifest.source = input_.location;
  manifest.rows = plan_->rows;
  manifest.cols = plan_->cols();
  manifest.nnz = plan_->nnz;
  manifest.encoding = plan_->encoding;
  if (plan_->features) {
    NIMBUS_ASSIGN_OR_RETURN(manifest.features, WriteColumnMap(out_, plan_->columns()));
  }
  for (std::size_t s = 0; s < slices_.size(); ++s) {
    if (!writers_[s]) continue;
    NIMBUS_ASSIGN_OR_RETURN(const ShardInfo info, writers_[s]->Finish());
    NIMBUS_RETURN_IF_ERROR(files_.Keep(writers_[s]->path(), keys_[s]));
    manifest.shards.push_back({keys_[s], info.rows, info.nnz, info.first_row, info.payload_checksum});
  }
  return WriteManifest(out_, manifest);
}

}  // namespace

Result<TextSplitResult> SplitText(const TextFiles& input, const TextSplitOptions& options, Store& out) {
  return TextSplit(input, options, out).Run();
}

}  // namespace nimbus
