#include "nimbus/data/text_rows.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "nimbus/core/clock.h"
#include "nimbus/data/feature_map.h"

namespace nimbus {
namespace {

// Gathers a scan from parsed blocks. The features that occur pile up unsorted until they
// outnumber those already merged, then are sorted and merged in: each entry is sorted once,
// and the merges cost no more than the sorting, so the scan stays linear in the entries while
// holding no more than twice the features that occur.
class Scanner {
 public:
  explicit Scanner(bool collect_features) : collect_features_(collect_features) {}

  void Add(const RowBlock& rows, int64_t first_row) {
    const int64_t first_entry = rows.row_ptr[static_cast<std::size_t>(first_row)];
    const int64_t end_entry = rows.nnz();
    for (int64_t r = first_row; r < rows.rows(); ++r) {
      const double label = rows.labels[static_cast<std::size_t>(r)];
      if (label != last_label_ || label_rows_.empty()) {
        last_label_ = label;
        last_count_ = &label_rows_[label];
      }
      ++*last_count_;
    }
    for (int64_t k = first_entry; k < end_entry; ++k) {
      const double value = rows.values[static_cast<std::size_t>(k)];
      all_ones_ = all_ones_ && value == 1.0;
      all_floats_ = all_floats_ && static_cast<double>(static_cast<float>(value)) == value;
      const uint32_t column = rows.col_idx[static_cast<std::size_t>(k)];
      largest_ = std::max(largest_, column);
      if (collect_features_) pending_.push_back(column);
    }
    rows_ += rows.rows() - first_row;
    nnz_ += end_entry - first_entry;
    if (pending_.size() > std::max<std::size_t>(features_.size(), std::size_t{1} << 18)) MergePending();
  }

  TextScan Finish(bool classification) {
    MergePending();
    TextScan scan;
    scan.rows = rows_;
    scan.nnz = nnz_;
    scan.max_index = nnz_ > 0 ? uint64_t{largest_} + 1 : 0;
    if (classification) {
      for (const auto& [label, count] : label_rows_) {
        scan.labels.push_back(label);
        scan.label_rows.push_back(count);
      }
    }
    scan.features = std::move(features_);
    scan.all_ones = all_ones_;
    scan.all_floats = all_floats_;
    return scan;
  }

 private:
  void MergePending() {
    if (pending_.empty()) return;
    SortUnique(pending_, int64_t{largest_} + 1);
    features_ = features_.empty() ? std::move(pending_) : MergeUnique(features_, pending_);
    pending_ = {};
  }

  bool collect_features_;
  int64_t rows_ = 0, nnz_ = 0;
  uint32_t largest_ = 0;
  std::map<double, int64_t> label_rows_;
  double last_label_ = 0;
  int64_t* last_count_ = nullptr;  // rows of a label often come together
  std::vector<uint32_t> features_, pending_;
  bool all_ones_ = true, all_floats_ = true;
};

}  // namespace

Result<TextScan> ReadTextSlice(const std::vector<TextFile>& files, const TextSlice& slice,
                               const TextReadOptions& options, RowBlock& rows, bool keep_rows,
                               const std::function<Status(RowBlock&)>& on_block) {
  Stopwatch watch;
  SliceLines lines(files, slice, options.block_bytes);
  // An error's line is numbered in its file (for a range past 0, the lines before it are
  // counted then, and only then).
  auto where = [&lines, &files](int64_t line) {
    const std::string name = files[lines.file()].store->Describe(files[lines.file()].key);
    Result<int64_t> number = lines.LineInFile(line);
    return number.ok() ? name + ":" + std::to_string(*number)
                       : name + ": line " + std::to_string(line) + " of the part read from it";
  };
  LibsvmParser parser(options.libsvm, where);
  Scanner scanner(options.collect_features);
  while (true) {
    NIMBUS_ASSIGN_OR_RETURN(const std::string_view block, lines.Next());
    if (options.bytes_so_far != nullptr) options.bytes_so_far->store(lines.bytes_read(), std::memory_order_relaxed);
    if (block.empty()) break;
    const int64_t first_row = rows.rows();
    NIMBUS_RETURN_IF_ERROR(parser.Parse(block, lines.first_line(), rows));
    scanner.Add(rows, first_row);
    if (on_block) NIMBUS_RETURN_IF_ERROR(on_block(rows));
    if (!keep_rows) rows.Clear();
  }
  TextScan scan = scanner.Finish(options.libsvm.label_mode == LabelMode::kClassification);
  scan.bytes_read = lines.bytes_read();
  scan.seconds = watch.ElapsedSeconds();
  return scan;
}

TextScan ScanRows(const RowBlock& rows, bool classification, bool collect_features) {
  Stopwatch watch;
  Scanner scanner(collect_features);
  scanner.Add(rows, 0);
  TextScan scan = scanner.Finish(classification);
  scan.seconds = watch.ElapsedSeconds();
  return scan;
}

Result<SlicesRead> ReadSlices(const std::vector<TextFile>& files, const std::vector<TextSlice>& slices,
                              const TextReadOptions& options, int threads) {
  struct Part {
    std::size_t slice = 0;
    TextSlice text;
    RowBlock rows;
    Result<TextScan> scan = TextScan{};
  };
  std::vector<Part> parts;
  for (std::size_t s = 0; s < slices.size(); ++s) {
    for (TextSlice& text : SubdivideSlice(files, slices[s], std::max(threads, 1))) {
      parts.push_back({s, std::move(text), {}, TextScan{}});
    }
  }
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  const auto read = [&] {
    for (std::size_t i = next++; i < parts.size() && !failed; i = next++) {
      parts[i].scan = ReadTextSlice(files, parts[i].text, options, parts[i].rows, true);
      if (!parts[i].scan.ok()) failed = true;
    }
  };
  std::vector<std::thread> others;
  for (int t = 1; t < std::min(threads, static_cast<int>(parts.size())); ++t) others.emplace_back(read);
  read();
  for (std::thread& thread : others) thread.join();
  SlicesRead whole;
  whole.slice_rows.assign(slices.size(), 0);
  for (Part& part : parts) {
    NIMBUS_RETURN_IF_ERROR(part.scan.status());  // the first in the text's order
    if (whole.scans.empty()) {
      whole.rows = std::move(part.rows);
    } else {
      NIMBUS_RETURN_IF_ERROR(whole.rows.Append(part.rows));
      part.rows = RowBlock{};  // its memory given back as the whole grows
    }
    whole.slice_rows[part.slice] += part.scan->rows;
    whole.scans.push_back(std::move(part.scan).value());
  }
  return whole;
}

ColumnMap TextPlan::columns() const {
  ColumnMap map;
  if (features) {
    map.features = features;
    map.source_cols = source_cols;
  }
  return map;
}

Result<TextPlan> PlanText(const std::vector<TextScan>& parts, const LibsvmReadOptions& options,
                          const std::string& location) {
  TextPlan plan;
  std::map<double, int64_t> label_rows;
  std::vector<uint32_t> features;
  for (const TextScan& part : parts) {
    plan.first_rows.push_back(plan.rows);
    plan.rows += part.rows;
    plan.nnz += part.nnz;
    plan.source_cols = std::max(plan.source_cols, static_cast<int64_t>(part.max_index));
    plan.all_ones = plan.all_ones && part.all_ones;
    plan.all_floats = plan.all_floats && part.all_floats;
    for (std::size_t l = 0; l < part.labels.size(); ++l) label_rows[part.labels[l]] += part.label_rows[l];
    features = features.empty() ? part.features : MergeUnique(features, part.features);
  }
  if (plan.rows == 0) {
    uint64_t bytes = 0;
    for (const TextScan& part : parts) bytes += part.bytes_read;
    return InvalidArgument(location + (bytes == 0 ? ":1: empty file: no data rows"
                                                  : ": no data rows (only blank or comment lines)"));
  }
  DistinctLabels distinct;
  for (const auto& [label, rows] : label_rows) {
    if (!distinct.Add(label)) {
      return InvalidArgument(location + ": more than " + std::to_string(kMaxClasses) +
                             " distinct labels, the most classes a classifier takes (are the labels a regression's "
                             "targets? --loss squared)");
    }
  }
  if (options.label_mode == LabelMode::kClassification && !options.expected_labels && distinct.count() < 2) {
    return InvalidArgument(location + ": every row has label " + FormatLabel(label_rows.begin()->first) +
                           ": a binary classifier needs two distinct labels");
  }
  plan.encoding = EncodingOf(options, distinct);
  if (plan.encoding.classification) {
    // Each part's rows of each class, in class order.
    const std::vector<double> classes = plan.encoding.ClassValues();
    for (const TextScan& part : parts) {
      std::vector<int64_t> counts(classes.size(), 0);
      for (std::size_t l = 0; l < part.labels.size(); ++l) {
        const double encoded = plan.encoding.Encode(part.labels[l]);
        const std::size_t index = plan.encoding.multiclass() ? static_cast<std::size_t>(encoded) : encoded > 0 ? 1 : 0;
        counts[index] += part.label_rows[l];
      }
      plan.class_rows.push_back(std::move(counts));
    }
  }
  if (options.renumber_columns && WorthRenumbering(static_cast<int64_t>(features.size()), plan.source_cols)) {
    plan.features = std::make_shared<const std::vector<uint32_t>>(std::move(features));
  }
  return plan;
}

TextPlanRows::TextPlanRows(const LabelEncoding& encoding, const std::vector<uint32_t>* features, int64_t source_cols)
    : encoding_(encoding), source_cols_(source_cols) {
  if (features != nullptr) ranks_ = OccurringColumns::FromSorted(*features, source_cols);
}

Status TextPlanRows::Apply(RowBlock& rows) const {
  if (encoding_.classification) {
    for (double& label : rows.labels.span()) label = encoding_.Encode(label);
  }
  for (uint32_t& column : rows.col_idx.span()) {
    if (static_cast<int64_t>(column) >= source_cols_) return DataLoss("a feature beyond the data's largest index");
    // The part's own features are among the whole's: each takes its rank there.
    if (ranks_) column = ranks_->Rank(column);
  }
  return Status::Ok();
}

CsrValues CompactValuesOf(bool all_ones, bool all_floats) {
  return all_ones ? CsrValues::kOnes : all_floats ? CsrValues::kFloat : CsrValues::kDouble;
}

Dataset DatasetOfRows(std::shared_ptr<RowBlock> rows, int64_t cols, const LabelEncoding& encoding, CsrValues values) {
  if (rows->row_ptr.size() == 0) {
    // No rows at all: an empty matrix still has its one offset.
    (void)rows->row_ptr.Ensure(1);
    rows->row_ptr.push_back(0);
  }
  rows->row_ptr.ShrinkToFit();
  rows->col_idx.ShrinkToFit();
  rows->values.ShrinkToFit();
  rows->labels.ShrinkToFit();
  rows->CompactValues(values);
  Dataset data;
  data.matrix = rows->View(cols);
  data.own = {rows->col_idx.data(), rows->value_kind == CsrValues::kDouble ? rows->values.data() : nullptr,
              rows->value_kind == CsrValues::kFloat ? rows->values32.data() : nullptr};
  data.labels = rows->labels.span();
  data.encoding = encoding;
  data.storage = std::move(rows);
  return data;
}

}  // namespace nimbus
