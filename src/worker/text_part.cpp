#include "nimbus/worker/text_part.h"

#include "nimbus/core/clock.h"
#include "nimbus/data/folds.h"
#include "nimbus/data/sample_weights.h"

namespace nimbus {

Result<TextPartFiles> OpenTextPart(const TextPart& part, const StoreOpener& open) {
  TextPartFiles opened;
  for (const TextFileRef& ref : part.files) {
    if (ref.compression < 0 || ref.compression > static_cast<int64_t>(Compression::kXz)) {
      return InvalidArgument(ref.key + ": unknown compression " + std::to_string(ref.compression));
    }
    opened.files.push_back({ref.store_uri, ref.key, ref.bytes, static_cast<Compression>(ref.compression), nullptr});
  }
  for (const TextPieceRef& piece : part.pieces) {
    if (piece.file >= opened.files.size() || piece.begin > piece.end || piece.end > opened.files[piece.file].bytes) {
      return InvalidArgument("a piece of the part outside its files");
    }
    opened.slice.pieces.push_back({piece.file, piece.begin, piece.end});
  }
  NIMBUS_RETURN_IF_ERROR(OpenTextStores(opened.files, open));
  return opened;
}

TextPart TextPartOf(const std::vector<TextFile>& files, const TextSlice& slice, const LibsvmReadOptions& options) {
  TextPart part;
  // Only the files the slice reads travel, renumbered in order.
  std::vector<int64_t> index(files.size(), -1);
  for (const TextPiece& piece : slice.pieces) {
    if (index[piece.file] < 0) {
      index[piece.file] = static_cast<int64_t>(part.files.size());
      const TextFile& file = files[piece.file];
      part.files.push_back({file.store_uri, file.key, file.bytes, static_cast<int64_t>(file.compression)});
    }
    part.pieces.push_back({static_cast<uint32_t>(index[piece.file]), piece.begin, piece.end});
  }
  part.classification = options.label_mode == LabelMode::kClassification;
  part.renumber = options.renumber_columns;
  return part;
}

TextScanned ScannedOf(const TextScan& scan) {
  return {scan.rows,     scan.nnz,       scan.max_index,  scan.labels, scan.label_rows,
          scan.features, scan.all_ones, scan.all_floats, scan.bytes_read, scan.seconds};
}

TextScan ScanOf(const TextScanned& s) {
  TextScan scan;
  scan.rows = s.rows;
  scan.nnz = s.nnz;
  scan.max_index = s.max_index;
  scan.labels = s.labels;
  scan.label_rows = s.label_rows;
  scan.features = s.features;
  scan.all_ones = s.all_ones;
  scan.all_floats = s.all_floats;
  scan.bytes_read = s.bytes_read;
  scan.seconds = s.seconds;
  return scan;
}

uint64_t TextBytes(const TextPart& part) {
  uint64_t bytes = 0;
  for (const TextPieceRef& piece : part.pieces) bytes += piece.end - piece.begin;
  return bytes;
}

Result<TextPartRows> ReadTextPart(const TextPart& part, const StoreOpener& open, std::atomic<uint64_t>* bytes_so_far) {
  Stopwatch watch;
  NIMBUS_ASSIGN_OR_RETURN(const TextPartFiles opened, OpenTextPart(part, open));
  TextReadOptions options;
  options.libsvm.label_mode = part.classification ? LabelMode::kClassification : LabelMode::kRegression;
  options.libsvm.renumber_columns = part.renumber;
  options.collect_features = part.renumber;
  options.bytes_so_far = bytes_so_far;
  TextPartRows rows;
  rows.rows = std::make_shared<RowBlock>();
  NIMBUS_ASSIGN_OR_RETURN(const TextScan scan, ReadTextSlice(opened.files, opened.slice, options, *rows.rows, true));
  rows.scan = ScannedOf(scan);
  rows.seconds = watch.ElapsedSeconds();
  return rows;
}

bool IsHeldPart(const TextPart& part) { return part.files.size() == 1 && part.files[0].store_uri == kHeldStore; }

Result<TextPartRows> TakeHeldRows(const TextPart& part, std::shared_ptr<HeldRows>& held) {
  if (!IsHeldPart(part)) return InvalidArgument("not a held part");
  const std::string& key = part.files[0].key;
  if (!held) return FailedPrecondition("part " + key + " is held by the process that serves it, and this one holds none");
  if (held->key != key) return FailedPrecondition("assigned part " + key + ", but this worker holds part " + held->key);
  TextPartRows rows;
  rows.scan = ScannedOf(ScanRows(held->rows, part.classification, part.renumber));
  rows.seconds = rows.scan.seconds;
  rows.rows = std::make_shared<RowBlock>(std::move(held->rows));
  rows.weights = std::move(held->weights);
  held.reset();  // the rows are the worker's now (the plan renumbers them in place)
  return rows;
}

LabelEncoding EncodingOf(const TextPlanned& plan) {
  LabelEncoding encoding;
  encoding.classification = plan.classification;
  if (!plan.classification) return encoding;
  if (plan.class_values.size() > 2) {
    encoding.classes = plan.class_values;
  } else if (plan.class_values.size() == 2) {
    encoding.negative = plan.class_values[0];
    encoding.positive = plan.class_values[1];
  }
  return encoding;
}

TextPlanned PlannedFor(const TextPlan& plan, std::size_t part, const TextScan& scan) {
  TextPlanned planned;
  planned.classification = plan.encoding.classification;
  planned.class_values = plan.encoding.ClassValues();
  planned.source_cols = plan.source_cols;
  planned.features = plan.features;
  planned.first_row = plan.first_rows[part];
  planned.rows = scan.rows;
  planned.nnz = scan.nnz;
  return planned;
}

namespace {

// Cross-validation: each row's fold, from its class and the rows of each class before the part.
Status DealFolds(const FoldPlan& plan, Dataset& data) {
  FoldDealer dealer(plan.folds, plan.seed, plan.class_rows, plan.class_offsets);
  std::vector<int64_t> dealt = plan.class_offsets;
  std::vector<uint8_t> folds(static_cast<std::size_t>(data.rows()));
  for (std::size_t r = 0; r < folds.size(); ++r) {
    const std::size_t stratum = StratumOf(data.labels[r], data.encoding.classification);
    if (stratum >= dealt.size() || ++dealt[stratum] > plan.class_rows[stratum]) {
      return DataLoss("its rows hold more of class " + std::to_string(stratum) + " than the plan's folds count: the data changed");
    }
    folds[r] = dealer.Next(stratum);
  }
  data.AdoptFolds(std::move(folds));
  return Status::Ok();
}

}  // namespace

Result<Dataset> FinishTextPart(TextPartRows rows, const TextPart& part, const StoreOpener& open) {
  if (!part.plan) return FailedPrecondition("the part has no plan yet");
  const TextPlanned& plan = *part.plan;
  if (rows.scan.rows != plan.rows || rows.scan.nnz != plan.nnz) {
    return DataLoss("its part now holds " + std::to_string(rows.scan.rows) + " rows and " +
                    std::to_string(rows.scan.nnz) + " nonzeros, where it held " + std::to_string(plan.rows) + " and " +
                    std::to_string(plan.nnz) + " when the run was planned: the data changed");
  }
  const LabelEncoding encoding = EncodingOf(plan);
  const TextPlanRows planned(encoding, plan.features.get(), plan.source_cols);
  NIMBUS_RETURN_IF_ERROR(planned.Apply(*rows.rows));
  const int64_t cols = plan.features ? static_cast<int64_t>(plan.features->size()) : plan.source_cols;
  // Exact values in fewer bytes where the part's allow it.
  Dataset data = DatasetOfRows(std::move(rows.rows), cols, encoding,
                               CompactValuesOf(rows.scan.all_ones, rows.scan.all_floats));
  if (!rows.weights.empty()) {
    if (static_cast<int64_t>(rows.weights.size()) != data.rows()) {
      return InvalidArgument("the held part's weights: " + std::to_string(rows.weights.size()) + " for " +
                             std::to_string(data.rows()) + " rows");
    }
    data.AdoptWeights(std::move(rows.weights));
  } else if (!plan.weights.key.empty()) {
    std::vector<TextFile> file = {{plan.weights.store_uri, plan.weights.key, plan.weights.bytes, Compression::kNone, nullptr}};
    NIMBUS_RETURN_IF_ERROR(OpenTextStores(file, open));
    NIMBUS_ASSIGN_OR_RETURN(SampleWeightReader reader,
                            SampleWeightReader::Open(file[0], plan.weights_offset, plan.first_row));
    std::vector<double> weights;
    NIMBUS_RETURN_IF_ERROR(reader.Read(data.rows(), weights));
    data.AdoptWeights(std::move(weights));
  }
  if (plan.folds.folds > 0) NIMBUS_RETURN_IF_ERROR(DealFolds(plan.folds, data));
  return data;
}

}  // namespace nimbus
