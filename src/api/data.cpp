// The facade's data commands (nimbus.h, "Data of any size"): each streams its text.
#include <cstdio>
#include <iterator>
#include <map>
#include <numeric>
#include <optional>

#include "nimbus/api/plan.h"
#include "nimbus/cloud/s3.h"
#include "nimbus/cloud/text_files.h"
#include "nimbus/core/file_io.h"
#include "nimbus/data/folds.h"
#include "nimbus/data/sample_weights.h"
#include "nimbus/data/text_rows.h"
#include "nimbus/data/text_split.h"
#include "nimbus/nimbus.h"

namespace nimbus {
namespace {

// A file of one number per line (sample weights): exactly one plain file.
Result<TextFile> OneTextFile(const std::string& location, const std::string& option) {
  NIMBUS_ASSIGN_OR_RETURN(TextFiles files, FindTextFiles(location));
  if (files.files.size() != 1 || files.files[0].compression != Compression::kNone) {
    return InvalidArgument(option + ": " + location + " must be one uncompressed file");
  }
  return files.files[0];
}

}  // namespace

Status SplitOptions::Validate() const {
  if (shards < 1 || shards > 1000000) return InvalidArgument("--shards: must be in [1, 1000000]");
  if (threads < 0) return InvalidArgument("--threads: must be >= 0");
  return Status::Ok();
}

Result<SplitSummary> SplitData(const std::string& data, const std::string& out, const SplitOptions& options) {
  NIMBUS_RETURN_IF_ERROR(options.Validate());
  NIMBUS_ASSIGN_OR_RETURN(const TextFiles input, FindTextFiles(data));
  TextSplitOptions split;
  split.shards = static_cast<int>(options.shards);
  split.threads = options.threads;
  split.libsvm.label_mode = options.regression ? LabelMode::kRegression : LabelMode::kClassification;
  split.libsvm.renumber_columns = true;  // the shards hold the features that occur; the manifest, the map
  if (!options.sample_weights.empty()) {
    NIMBUS_ASSIGN_OR_RETURN(split.sample_weights, OneTextFile(options.sample_weights, "--sample-weights"));
  }
  split.on_progress = options.on_progress;
  split.compact_values = options.compact_values;
  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, OpenAnyStore(out, /*create=*/true));
  NIMBUS_ASSIGN_OR_RETURN(const TextSplitResult result, SplitText(input, split, *store));
  const Manifest& manifest = result.manifest;
  SplitSummary summary;
  summary.rows = manifest.rows;
  summary.cols = manifest.cols;
  summary.nnz = manifest.nnz;
  summary.source_cols = manifest.features ? manifest.features->source_cols : manifest.cols;
  summary.shards = static_cast<int64_t>(manifest.shards.size());
  summary.empty_parts = result.empty_parts;
  summary.labels = manifest.encoding.Describe();
  summary.bytes_read = result.bytes_read;
  summary.shard_bytes = result.shard_bytes;
  summary.double_shard_bytes = result.double_shard_bytes;
  return summary;
}

}  // namespace nimbus

namespace nimbus {
namespace {

// Reads every row of `input` in order, a block at a time: `on_block` gets the rows (their
// columns the source's features, from 0) and the columns seen so far.
Status StreamRows(const TextFiles& input, const LibsvmReadOptions& libsvm,
                  const std::function<void(const std::string&, uint64_t, uint64_t)>& on_progress,
                  const std::function<Status(RowBlock&, int64_t cols)>& on_block) {
  const std::vector<TextSlice> all = SliceText(input.files, 1);
  SliceLines lines(input.files, all.front(), TextReadOptions{}.block_bytes);
  auto where = [&lines, &input](int64_t line) {
    Result<int64_t> number = lines.LineInFile(line);
    return input.Describe(lines.file()) + ":" + std::to_string(number.ok() ? *number : line);
  };
  LibsvmParser parser(libsvm, where);
  RowBlock rows;
  int64_t total_rows = 0;
  while (true) {
    NIMBUS_ASSIGN_OR_RETURN(const std::string_view block, lines.Next());
    if (block.empty()) break;
    NIMBUS_RETURN_IF_ERROR(parser.Parse(block, lines.first_line(), rows));
    total_rows += rows.rows();
    NIMBUS_RETURN_IF_ERROR(on_block(rows, static_cast<int64_t>(parser.max_index())));
    rows.Clear();
    if (on_progress) on_progress("reading", lines.bytes_read(), input.bytes());
  }
  if (total_rows == 0) {
    return InvalidArgument(input.location + (lines.bytes_read() == 0 ? ":1: empty file: no data rows"
                                                                     : ": no data rows (only blank or comment lines)"));
  }
  return Status::Ok();
}

// Each class's rows of the text (in the model's class order): a pass of its own, for balanced
// class weights.
Result<std::vector<int64_t>> ClassRows(const TextFiles& input, const LibsvmReadOptions& libsvm, const Model& model) {
  std::vector<int64_t> counts(model.labels.ClassValues().size(), 0);
  NIMBUS_RETURN_IF_ERROR(StreamRows(input, libsvm, {}, [&](RowBlock& rows, int64_t) {
    for (const double label : rows.labels.span()) ++counts[ClassIndex(model.labels.Encode(label))];
    return Status::Ok();
  }));
  return counts;
}

}  // namespace

Result<Evaluation> EvaluateData(const Model& model, const std::string& data, const EvaluateOptions& options) {
  NIMBUS_ASSIGN_OR_RETURN(const TextFiles input, FindTextFiles(data));
  LibsvmReadOptions libsvm;
  libsvm.label_mode = model.labels.classification ? LabelMode::kClassification : LabelMode::kRegression;
  if (model.labels.classification) libsvm.expected_labels = model.labels;
  std::optional<std::vector<int64_t>> class_rows;
  if (options.class_weights.balanced) {
    NIMBUS_ASSIGN_OR_RETURN(class_rows, ClassRows(input, libsvm, model));
  }
  NIMBUS_ASSIGN_OR_RETURN(std::vector<double> class_weights,
                          ClassWeightsOfCounts(options.class_weights, model.labels, class_rows, data));
  std::optional<SampleWeightReader> weight_lines;
  if (!options.sample_weights.empty()) {
    NIMBUS_ASSIGN_OR_RETURN(const TextFile file, OneTextFile(options.sample_weights, "--sample-weights"));
    NIMBUS_ASSIGN_OR_RETURN(weight_lines, SampleWeightReader::Open(file));
  }
  StreamingEvaluation evaluation(model, std::move(class_weights));
  std::vector<double> weights;
  int64_t rows_seen = 0;
  NIMBUS_RETURN_IF_ERROR(StreamRows(input, libsvm, options.on_progress, [&](RowBlock& rows, int64_t cols) {
    if (model.labels.classification) {
      for (double& label : rows.labels.span()) label = model.labels.Encode(label);
    }
    if (weight_lines) NIMBUS_RETURN_IF_ERROR(weight_lines->Read(rows.rows(), weights));
    rows_seen += rows.rows();
    return evaluation.Add(rows.View(cols), rows.labels.span(), weights);
  }));
  if (weight_lines) NIMBUS_RETURN_IF_ERROR(weight_lines->ExpectEnd(rows_seen));
  return evaluation.Finish();
}

Status WriteFolds(const std::string& data, const CvOptions& cv, bool classification, const std::string& out) {
  NIMBUS_RETURN_IF_ERROR(cv.Validate());
  NIMBUS_ASSIGN_OR_RETURN(const TextFiles input, FindTextFiles(data));
  LibsvmReadOptions libsvm;
  libsvm.label_mode = classification ? LabelMode::kClassification : LabelMode::kRegression;
  // The first pass: each stratum's rows (a classifier's labels in ascending order, as its classes).
  std::map<double, int64_t> label_rows;
  NIMBUS_RETURN_IF_ERROR(StreamRows(input, libsvm, {}, [&](RowBlock& rows, int64_t) {
    for (const double label : rows.labels.span()) ++label_rows[classification ? label : 0.0];
    if (label_rows.size() > static_cast<std::size_t>(kMaxClasses)) return InvalidArgument(data + ": too many classes");
    return Status::Ok();
  }));
  std::vector<int64_t> class_rows;
  for (const auto& [label, rows] : label_rows) class_rows.push_back(rows);
  const int64_t total = std::accumulate(class_rows.begin(), class_rows.end(), int64_t{0});
  if (cv.folds > total) return InvalidArgument("--folds: " + std::to_string(cv.folds) + " folds of " + std::to_string(total) + " rows");
  // The second: each row dealt its fold.
  FoldDealer dealer(cv.folds, cv.seed, std::move(class_rows), {});
  NIMBUS_ASSIGN_OR_RETURN(AtomicFileWriter file, AtomicFileWriter::Open(out));
  std::string text;
  NIMBUS_RETURN_IF_ERROR(StreamRows(input, libsvm, {}, [&](RowBlock& rows, int64_t) {
    text.clear();
    for (const double label : rows.labels.span()) {
      const auto stratum = static_cast<std::size_t>(std::distance(label_rows.begin(), label_rows.find(classification ? label : 0.0)));
      text += std::to_string(dealer.Next(stratum)) + "\n";
    }
    return file.Write(text);
  }));
  return file.Commit();
}

Result<int64_t> PredictData(const Model& model, const std::string& data, const std::string& out,
                            const PredictOptions& options) {
  NIMBUS_ASSIGN_OR_RETURN(const TextFiles input, FindTextFiles(data));
  LibsvmReadOptions libsvm;
  libsvm.label_mode = LabelMode::kRegression;  // prediction ignores the labels' values
  std::optional<AtomicFileWriter> file;
  if (!out.empty()) {
    Result<AtomicFileWriter> opened = AtomicFileWriter::Open(out);
    if (!opened.ok()) return opened.status();
    file.emplace(std::move(opened).value());
  }
  const RowScorer scorer(model);
  const auto c_count = static_cast<std::size_t>(model.classes);
  const bool logistic = model.loss == Loss::kLogistic;
  std::vector<double> scores;
  std::string text;
  int64_t predicted = 0;
  NIMBUS_RETURN_IF_ERROR(StreamRows(input, libsvm, options.on_progress, [&](RowBlock& rows, int64_t cols) -> Status {
    scorer.Score(rows.View(cols), scores);
    text.clear();
    char number[40];
    for (std::size_t r = 0; r < static_cast<std::size_t>(rows.rows()); ++r) {
      const std::span<const double> row = std::span<const double>(scores).subspan(r * c_count, c_count);
      text += FormatLabel(model.labels.classification ? model.labels.Decode(PredictedLabel(model, row)) : row[0]);
      if (options.scores) {
        const std::vector<double> shown =
            logistic ? ClassProbabilities(model, row) : std::vector<double>(row.begin(), row.end());
        for (const double score : shown) {
          std::snprintf(number, sizeof number, " %.17g", score);
          text += number;
        }
      }
      text += '\n';
    }
    predicted += rows.rows();
    if (file) return file->Write(text);
    return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() ? Status::Ok()
                                                                           : IoError("cannot write the predictions");
  }));
  if (file) NIMBUS_RETURN_IF_ERROR(file->Commit());
  return predicted;
}

}  // namespace nimbus
