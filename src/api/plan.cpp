#include "nimbus/api/plan.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <numeric>
#include <thread>
#include <tuple>

#include "nimbus/solve/admm/admm_master.h"
#include "nimbus/cloud/s3.h"
#include "nimbus/cloud/text_files.h"
#include "nimbus/data/sample_weights.h"
#include "nimbus/worker/text_part.h"
#include "nimbus/core/args.h"
#include "nimbus/core/clock.h"
#include "nimbus/data/feature_map.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/data/sample_weights.h"
#include "nimbus/runtime/launcher.h"
#include "nimbus/runtime/relay.h"
#include "nimbus/runtime/threads_executor.h"
#ifdef NIMBUS_HAVE_MPI
#include "nimbus/mpi/mpi_runtime.h"
#endif
#ifdef NIMBUS_HAVE_AWS
#include "nimbus/cloud/aws.h"
#include "nimbus/runtime/lambda.h"
#endif

namespace nimbus {
namespace {

Result<Plan> PlanFromStore(const std::string& location, int64_t workers, Loss loss) {
  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<Store> owned, OpenAnyStore(location, /*create=*/false));
  Plan plan;
  plan.store = std::move(owned);
  NIMBUS_ASSIGN_OR_RETURN(plan.manifest, ReadManifest(*plan.store));
  const int shards = static_cast<int>(plan.manifest.shards.size());
  if (workers != 0 && workers != shards) {
    return InvalidArgument("--workers: the store " + location + " holds " + std::to_string(shards) +
                           " shards, one per worker; give --workers " + std::to_string(shards) +
                           " or leave it out (or split again with --shards " + std::to_string(workers) + ")");
  }
  if (IsClassification(loss) != plan.manifest.encoding.classification) {
    return InvalidArgument(location + ": the shards hold " + plan.manifest.encoding.Describe() + ", which the " +
                           LossName(loss) + " loss cannot use (split with --task " +
                           (IsClassification(loss) ? "classification" : "regression") + ")");
  }
  NIMBUS_ASSIGN_OR_RETURN(plan.columns, ReadColumnMap(*plan.store, plan.manifest));
  plan.spec.rows = plan.manifest.rows;
  plan.spec.cols = plan.manifest.cols;
  plan.labels = plan.manifest.encoding;
  plan.workers = shards;
  return plan;
}

// The caller's arrays hold a matrix: offsets that start at 0 and never decrease, and column
// indices that ascend in each row and stay below cols (a bad index would otherwise be a wild
// read in a worker, and a shard a remote worker refuses).
Status CheckCsr(const CsrView& matrix) {
  if (matrix.rows < 1 || matrix.row_ptr == nullptr || matrix.row_ptr[0] != 0) {
    return InvalidArgument("data: needs at least one row, and row_ptr[0] == 0");
  }
  if (matrix.cols < 1 || matrix.cols > (int64_t{1} << 32)) return InvalidArgument("data: cols must be in [1, 2^32]");
  if (matrix.nnz() > 0 && (matrix.col_idx == nullptr || matrix.values == nullptr)) {
    return InvalidArgument("data: nonzeros without col_idx or values");
  }
  // The shard format's rules (ascending indices too), so remote workers load what threads take.
  NIMBUS_RETURN_IF_ERROR(CheckCsrStructure(matrix).WithContext("data"));
  for (int64_t k = 0; k < matrix.nnz(); ++k) {
    if (!std::isfinite(matrix.values[k])) return InvalidArgument("data: values[" + std::to_string(k) + "] is not finite");
  }
  return Status::Ok();
}

// The caller's rows as a classifier or a regression sees them: for a classifier, two
// distinct label values become -1 and +1 (the larger +1), in a copy unless they already are;
// more become class indices in ascending order of value.
Result<Dataset> InMemoryDataset(const TrainingData& data, Loss loss) {
  const CsrView& matrix = data.matrix();
  if (static_cast<int64_t>(data.labels().size()) != matrix.rows) {
    return InvalidArgument("data: " + std::to_string(data.labels().size()) + " labels for " +
                           std::to_string(matrix.rows) + " rows");
  }
  NIMBUS_RETURN_IF_ERROR(CheckCsr(matrix));
  Dataset dataset;
  dataset.matrix = matrix;
  dataset.labels = data.labels();
  if (!IsClassification(loss)) {
    dataset.encoding.classification = false;
    return dataset;
  }
  DistinctLabels distinct;
  for (const double label : data.labels()) {
    if (!std::isfinite(label)) return InvalidArgument("data: a label is not a finite number");
    if (!distinct.Add(label)) {
      return InvalidArgument("data: more than " + std::to_string(kMaxClasses) +
                             " distinct labels, the most classes a classifier takes (a regression's targets? "
                             "Loss::kSquared)");
    }
  }
  dataset.encoding = distinct.Encoding();
  if (!dataset.encoding.multiclass() && dataset.encoding.negative == -1.0 && dataset.encoding.positive == 1.0) {
    return dataset;
  }
  auto encoded = std::make_shared<std::vector<double>>();
  encoded->reserve(data.labels().size());
  for (const double label : data.labels()) encoded->push_back(dataset.encoding.Encode(label));
  dataset.labels = *encoded;
  dataset.storage = std::move(encoded);
  return dataset;
}

// The rows' own weights, from the caller's array or a file, into `data` (which keeps them alive
// beside its arrays).
Status AttachSampleWeights(const TrainingData& source, Dataset& data) {
  if (!source.sample_weights().empty()) {
    NIMBUS_RETURN_IF_ERROR(CheckSampleWeights(source.sample_weights(), data.rows(), "sample weights"));
    data.weights = source.sample_weights();
    return Status::Ok();
  }
  if (source.sample_weights_file().empty()) return Status::Ok();
  return ReadSampleWeightsInto(source.sample_weights_file(), data);
}

Result<Plan> PlanInMemory(const TrainingData& source, int64_t requested_workers, Loss loss) {
  Stopwatch watch;
  Dataset data;
  if (source.in_memory()) {
    NIMBUS_ASSIGN_OR_RETURN(data, InMemoryDataset(source, loss));
    data = RenumberToOccurring(data);
  } else {
    LibsvmReadOptions options;
    options.label_mode = IsClassification(loss) ? LabelMode::kClassification : LabelMode::kRegression;
    options.renumber_columns = true;
    NIMBUS_ASSIGN_OR_RETURN(data, ReadLibsvmFile(source.location(), options));
  }
  Plan plan;
  plan.load_seconds = watch.ElapsedSeconds();
  NIMBUS_RETURN_IF_ERROR(AttachSampleWeights(source, data));
  plan.spec.rows = data.rows();
  plan.spec.cols = data.cols();
  plan.columns = data.columns;
  plan.labels = data.encoding;
  const int64_t default_workers = std::max<unsigned>(1, std::thread::hardware_concurrency());
  const int64_t workers = requested_workers > 0 ? requested_workers : std::min(default_workers, data.rows());
  if (workers > data.rows()) {
    return InvalidArgument("--workers: " + std::to_string(workers) + " workers for " + std::to_string(data.rows()) +
                           " rows: every worker needs at least one row");
  }
  plan.workers = static_cast<int>(workers);
  plan.ranges = PartitionRows(data.matrix, plan.workers);
  plan.data = std::move(data);
  return plan;
}

// Lambda's: Invoke requests signed with this machine's AWS configuration.
Result<std::unique_ptr<Launcher>> MakeInvokeLauncher([[maybe_unused]] const RuntimeOptions& flags) {
#ifdef NIMBUS_HAVE_AWS
  NIMBUS_ASSIGN_OR_RETURN(AwsConfig config, LoadAwsConfig("lambda"));
  if (!flags.lambda_endpoint.empty()) config.endpoint_url = flags.lambda_endpoint;
  std::optional<AwsCredentials> passed;
  if (flags.lambda_pass_credentials) {
    NIMBUS_ASSIGN_OR_RETURN(AwsConfig s3, LoadAwsConfig("s3"));
    passed = s3.credentials;
  }
  return MakeLambdaLauncher(flags.lambda_function, std::move(config), std::move(passed));
#else
  return InvalidArgument("--runtime lambda: not in this build (NIMBUS_WITH_AWS=OFF)");
#endif
}

}  // namespace

std::string WorkerProgramOf(const RuntimeOptions& options) {
  return options.worker_program.empty() ? CurrentExecutable() : options.worker_program;
}

int64_t DefaultWorkers() { return std::max<unsigned>(1, std::thread::hardware_concurrency()); }

namespace {

// Text the workers read: its files cut into one slice per worker. A slice with no bytes (more
// workers than compressed files can feed) is refused before any worker starts.
Result<Plan> PlanText(const TrainingData& source, TextFiles files, int64_t requested_workers, Loss loss) {
  Plan plan;
  const int64_t workers = requested_workers > 0 ? requested_workers : DefaultWorkers();
  TextSource text;
  text.files = std::move(files);
  if (text.files.bytes() == 0) return InvalidArgument(text.files.location + ":1: empty file: no data rows");
  text.slices = SliceText(text.files.files, static_cast<int>(workers));
  int64_t empty = 0;
  for (const TextSlice& slice : text.slices) empty += slice.pieces.empty() ? 1 : 0;
  if (empty > 0) {
    return InvalidArgument("--workers: " + std::to_string(workers) + " workers for " + text.files.location + ", whose " +
                           std::to_string(text.files.files.size()) + " file(s) (" +
                           std::to_string(text.files.bytes()) + " bytes; a compressed file goes whole to one worker) "
                           "leave " + std::to_string(empty) + " of them nothing to read: give --workers " +
                           std::to_string(workers - empty) + " or fewer");
  }
  text.libsvm.label_mode = IsClassification(loss) ? LabelMode::kClassification : LabelMode::kRegression;
  text.libsvm.renumber_columns = true;
  if (!source.sample_weights().empty()) {
    return InvalidArgument("sample weights: an array goes with rows in memory; give a file for text read by the workers");
  }
  if (!source.sample_weights_file().empty()) {
    Result<TextFiles> found = FindTextFiles(source.sample_weights_file());
    if (!found.ok() && found.status().code() == StatusCode::kNotFound) {
      return NotFound(source.sample_weights_file() + ": cannot open the sample weights file");
    }
    NIMBUS_ASSIGN_OR_RETURN(const TextFiles weights, std::move(found));
    if (weights.files.size() != 1 || weights.files[0].compression != Compression::kNone) {
      return InvalidArgument("--sample-weights: " + source.sample_weights_file() + " must be one uncompressed file");
    }
    text.sample_weights = weights.files[0];
  }
  plan.workers = static_cast<int>(workers);
  plan.text = std::move(text);
  return plan;
}

// Parts held by the processes that serve them: a worker each, whose one "file" names its part
// (worker/text_part.h: kHeldStore); the workers scan them as they would scan text.
Result<Plan> PlanHeld(const TrainingData& source, int64_t requested_workers, Loss loss) {
  const std::vector<std::string>& keys = source.held_parts();
  const auto parts = static_cast<int64_t>(keys.size());
  if (requested_workers > 0 && requested_workers != parts) {
    return InvalidArgument("--workers: " + std::to_string(requested_workers) + " for " + std::to_string(parts) +
                           " held parts: a held part is one worker's (leave the workers unset)");
  }
  if (!source.sample_weights().empty() || !source.sample_weights_file().empty()) {
    return InvalidArgument("sample weights: held parts carry their own rows' weights");
  }
  TextSource text;
  text.files.location = source.location();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    text.files.files.push_back({kHeldStore, keys[i], 0, Compression::kNone, nullptr});
    text.slices.push_back({{{static_cast<uint32_t>(i), 0, 0}}});
  }
  text.libsvm.label_mode = IsClassification(loss) ? LabelMode::kClassification : LabelMode::kRegression;
  text.libsvm.renumber_columns = true;
  Plan plan;
  plan.workers = static_cast<int>(parts);
  plan.text = std::move(text);
  return plan;
}

}  // namespace

Result<Plan> PlanData(const TrainingData& data, int64_t workers, Loss loss) {
  if (data.is_store() && (!data.sample_weights().empty() || !data.sample_weights_file().empty())) {
    return InvalidArgument("--sample-weights: the store " + data.location() +
                           " holds its rows' weights, if any (give them to nimbus split)");
  }
  Result<Plan> planned = Plan{};
  if (!data.held_parts().empty()) {
    planned = PlanHeld(data, workers, loss);
  } else if (data.in_memory()) {
    planned = PlanInMemory(data, workers, loss);
  } else if (data.is_store()) {
    planned = PlanFromStore(data.location(), workers, loss);
  } else {
    NIMBUS_ASSIGN_OR_RETURN(DataLocation located, LocateData(data.location()));
    if (located.is_store() && (!data.sample_weights().empty() || !data.sample_weights_file().empty())) {
      return InvalidArgument("--sample-weights: the store " + data.location() +
                             " holds its rows' weights, if any (give them to nimbus split)");
    }
    planned = located.is_store() ? PlanFromStore(data.location(), workers, loss)
                                 : PlanText(data, std::move(located.text), workers, loss);
  }
  NIMBUS_ASSIGN_OR_RETURN(Plan plan, std::move(planned));
  plan.source = data.in_memory() ? "memory" : data.location();
  plan.spec.loss = loss;
  return plan;
}

Status ValidateHeldParts(const TrainingData& data, const SolveOptions& options) {
  if (data.held_parts().empty()) return Status::Ok();
  if (!options.runtime.start_worker) {
    return InvalidArgument("held parts: their workers start where the parts are (RuntimeOptions::start_worker)");
  }
  if (options.algorithm == Algorithm::kColumns) {
    return InvalidArgument("held parts: --algorithm columns reads the rows in the master's process; give newton or admm");
  }
  return Status::Ok();
}

Result<Plan> PlanDataInMemory(const TrainingData& data, int64_t workers, Loss loss) {
  NIMBUS_ASSIGN_OR_RETURN(Plan plan, PlanData(data, workers, loss));
  NIMBUS_RETURN_IF_ERROR(ReadTextHere(plan));
  return plan;
}

std::vector<TextPart> TextSource::Parts(const std::vector<int64_t>& memory_estimates) const {
  std::vector<TextPart> parts;
  for (std::size_t i = 0; i < slices.size(); ++i) {
    parts.push_back(TextPartOf(files.files, slices[i], libsvm));
    if (!planned) continue;
    TextPlanned part = PlannedFor(*planned, i, scans[i]);
    part.memory_estimate_bytes = memory_estimates.empty() ? 0 : memory_estimates[i];
    if (sample_weights) {
      part.weights = {sample_weights->store_uri, sample_weights->key, sample_weights->bytes, 0};
      part.weights_offset = weight_offsets[i];
    }
    if (folds > 0) part.folds = FoldsOf(i);
    parts.back().plan = std::move(part);
  }
  return parts;
}

std::vector<int64_t> TextSource::StratumRows(std::size_t part) const {
  if (!planned->encoding.classification) return {scans[part].rows};
  return planned->class_rows[part];
}

FoldPlan TextSource::FoldsOf(std::size_t part) const {
  FoldPlan plan{folds, fold_seed, std::vector<int64_t>(StratumRows(0).size(), 0), {}};
  for (std::size_t i = 0; i < scans.size(); ++i) {
    if (i == part) plan.class_offsets = plan.class_rows;
    const std::vector<int64_t> rows = StratumRows(i);
    for (std::size_t c = 0; c < rows.size(); ++c) plan.class_rows[c] += rows[c];
  }
  return plan;
}

Status ScanData(Plan& plan, const SolveOptions& options) {
  if (!plan.text || plan.text->planned) return Status::Ok();
  // Relays serve shards: the master reads the text and writes them (StoreAssignments).
  if (options.runtime.relays > 0) return ReadTextHere(plan);
  TextSource& text = *plan.text;
  Stopwatch watch;
  NIMBUS_ASSIGN_OR_RETURN(Runtime runtime, MakeRuntime(options.runtime, plan, WorkerOptionsOf(options)));
  ScanObserver observe;
  if (options.on_load) {
    observe = [&](const ScanProgress& progress) {
      options.on_load({progress.bytes_read, progress.bytes_total, progress.scanned, progress.workers,
                       watch.ElapsedSeconds()});
    };
  }
  NIMBUS_ASSIGN_OR_RETURN(const std::vector<TextScanned> scanned,
                          runtime.executor->ScanText(Deadline::After(options.admm.start_timeout_seconds), observe));
  for (const TextScanned& scan : scanned) text.scans.push_back(ScanOf(scan));
  NIMBUS_ASSIGN_OR_RETURN(TextPlan whole, PlanText(text.scans, text.libsvm, plan.source));
  for (TextScan& scan : text.scans) scan.features = {};
  // A worker whose range holds no line serves nothing; more workers than rows is a mistake.
  if (plan.workers > whole.rows) {
    return InvalidArgument("--workers: " + std::to_string(plan.workers) + " workers for " + std::to_string(whole.rows) +
                           " rows: every worker needs at least one row");
  }
  if (text.sample_weights) {
    NIMBUS_ASSIGN_OR_RETURN(text.weight_offsets, SampleWeightOffsets(*text.sample_weights, whole.first_rows, whole.rows));
  }
  plan.spec.rows = whole.rows;
  plan.spec.cols = whole.cols();
  plan.columns = whole.columns();
  plan.labels = whole.encoding;
  plan.load_seconds = watch.ElapsedSeconds();
  text.planned = std::move(whole);
  runtime.awaiting_plan = true;
  text.scanned = std::make_shared<Runtime>(std::move(runtime));
  return Status::Ok();
}

Status ReadTextHere(Plan& plan) {
  if (!plan.text) return Status::Ok();
  TextSource& text = *plan.text;
  Stopwatch watch;
  // Into one block, on this machine's cores: the workers get the rows their slices hold, as
  // they would have read them themselves.
  const int cores = static_cast<int>(std::max(std::thread::hardware_concurrency(), 1u));
  NIMBUS_ASSIGN_OR_RETURN(SlicesRead read, ReadSlices(text.files.files, text.slices, {text.libsvm, true}, cores));
  auto rows = std::make_shared<RowBlock>(std::move(read.rows));
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const int64_t slice_rows : read.slice_rows) {
    const int64_t first = ranges.empty() ? 0 : ranges.back().second;
    ranges.emplace_back(first, first + slice_rows);
  }
  NIMBUS_ASSIGN_OR_RETURN(const TextPlan whole, PlanText(read.scans, text.libsvm, plan.source));
  NIMBUS_RETURN_IF_ERROR(TextPlanRows(whole).Apply(*rows));
  Dataset data = DatasetOfRows(std::move(rows), whole.cols(), whole.encoding);
  data.columns = whole.columns();
  if (text.sample_weights) {
    NIMBUS_ASSIGN_OR_RETURN(SampleWeightReader reader, SampleWeightReader::Open(*text.sample_weights));
    std::vector<double> weights;
    NIMBUS_RETURN_IF_ERROR(reader.Read(data.rows(), weights));
    NIMBUS_RETURN_IF_ERROR(reader.ExpectEnd(data.rows()));
    data.AdoptWeights(std::move(weights));
  }
  if (plan.workers > data.rows()) {
    return InvalidArgument("--workers: " + std::to_string(plan.workers) + " workers for " +
                           std::to_string(data.rows()) + " rows: every worker needs at least one row");
  }
  plan.spec.rows = data.rows();
  plan.spec.cols = data.cols();
  plan.columns = data.columns;
  plan.labels = data.encoding;
  plan.ranges = std::move(ranges);
  plan.data = std::move(data);
  plan.load_seconds = watch.ElapsedSeconds();
  plan.text.reset();
  return Status::Ok();
}

Status SendTextPlan(const Plan& plan, Runtime& runtime) {
  if (!runtime.awaiting_plan) return Status::Ok();
  std::vector<TextPlanned> parts;
  std::vector<int64_t> estimates;
  for (const TextScan& scan : plan.text->scans) {
    estimates.push_back(static_cast<int64_t>(WorkerMemoryBytes(scan.rows, scan.nnz,
                                                               static_cast<int64_t>(plan.spec.model_size()),
                                                               runtime.general_form, plan.spec.blocks(),
                                                               plan.spec.regularizer.l1 > 0)));
  }
  for (TextPart& part : plan.text->Parts(estimates)) parts.push_back(std::move(*part.plan));
  NIMBUS_RETURN_IF_ERROR(runtime.executor->SetTextPlan(plan.spec, std::move(parts)));
  runtime.awaiting_plan = false;
  return Status::Ok();
}

Result<std::vector<double>> ClassWeightsOf(const ClassWeights& weights, const LabelEncoding& encoding,
                                           std::span<const double> labels, const std::string& source) {
  std::optional<std::vector<int64_t>> counts;
  if (!labels.empty()) {
    counts.emplace(encoding.ClassValues().size(), 0);
    for (const double y : labels) ++(*counts)[ClassIndex(y)];
  }
  return ClassWeightsOfCounts(weights, encoding, counts, source);
}

Result<std::vector<double>> ClassWeightsOfCounts(const ClassWeights& weights, const LabelEncoding& encoding,
                                                 const std::optional<std::vector<int64_t>>& class_rows,
                                                 const std::string& source) {
  if (weights.empty()) return std::vector<double>{};
  NIMBUS_RETURN_IF_ERROR(weights.Validate());
  if (!encoding.classification) return InvalidArgument("--class-weight: the data has real-valued targets, not classes");
  const std::vector<double> values = encoding.ClassValues();
  std::vector<double> per_class(values.size(), 1.0);
  if (weights.balanced) {
    if (!class_rows) {
      return InvalidArgument("--class-weight balanced: needs the rows of each class, which the store " + source +
                             " does not list; give the LIBSVM file, or the weights by label");
    }
    // scikit-learn's: N / (classes x the class's rows).
    double rows = 0;
    for (const int64_t count : *class_rows) rows += static_cast<double>(count);
    const auto classes = static_cast<double>(values.size());
    for (std::size_t c = 0; c < per_class.size(); ++c) {
      const auto count = static_cast<double>((*class_rows)[c]);
      per_class[c] = count > 0 ? rows / (classes * count) : 1.0;
    }
  }
  for (const auto& [label, weight] : weights.by_label) {
    const auto at = std::find(values.begin(), values.end(), label);
    if (at == values.end()) {
      return InvalidArgument("--class-weight: label " + FormatLabel(label) + " does not occur in " + source + " (" +
                             encoding.Describe() + ")");
    }
    per_class[static_cast<std::size_t>(at - values.begin())] *= weight;
  }
  return per_class;
}

Status SetProblem(const SolveOptions& options, Plan* plan) {
  if (plan->text && plan->text->planned && plan->text->planned->encoding.classification) {
    std::vector<int64_t> class_rows(plan->labels.ClassValues().size(), 0);
    for (const std::vector<int64_t>& part : plan->text->planned->class_rows) {
      for (std::size_t c = 0; c < part.size(); ++c) class_rows[c] += part[c];
    }
    NIMBUS_ASSIGN_OR_RETURN(plan->spec.class_weights,
                            ClassWeightsOfCounts(options.class_weights, plan->labels, class_rows, plan->source));
  } else {
    const std::span<const double> labels = plan->data ? plan->data->labels : std::span<const double>();
    NIMBUS_ASSIGN_OR_RETURN(plan->spec.class_weights,
                            ClassWeightsOf(options.class_weights, plan->labels, labels, plan->source));
  }
  plan->spec.intercept = options.intercept;
  // "auto" (scikit-learn's): the softmax for three classes or more, else one binary problem.
  plan->spec.multinomial =
      options.multiclass == Multiclass::kMultinomial || (options.multiclass == Multiclass::kAuto && plan->labels.multiclass());
  plan->spec.classes = plan->labels.multiclass() ? static_cast<int64_t>(plan->labels.classes.size())
                       : plan->spec.multinomial ? 2 : 1;
  plan->spec.regularizer = {options.l1.value_or(0.0), options.l2.value_or(0.0), options.regularizer};
  if (options.liblinear_c > 0) {
    // Penalties on the sum of the losses, as liblinear's and scikit-learn's C puts them.
    const double scale = 1.0 / (options.liblinear_c * static_cast<double>(plan->spec.rows));
    plan->spec.regularizer.l1 *= scale;
    plan->spec.regularizer.l2 *= scale;
  } else if (!options.l1 && !options.l2 && !options.regularizer) {
    plan->spec.regularizer.l2 = 1.0 / static_cast<double>(plan->spec.rows);
  }
  return plan->spec.Validate();
}

double WorkerMemoryBytes(int64_t rows, int64_t nnz, int64_t model_size, bool general_form, int64_t blocks,
                         bool working_columns) {
  const double local = general_form ? static_cast<double>(std::min(model_size, (nnz + 1) * blocks))
                                    : static_cast<double>(model_size);
  const double per_row = 48.0 * static_cast<double>(blocks) + (working_columns ? 8.0 : 0.0);
  return per_row * static_cast<double>(rows) + 12.0 * static_cast<double>(nnz) + 160.0 * local;
}

Status CheckWorkerMemory(const Plan& plan, bool general_form, bool working_columns, double limit_mb) {
  if (limit_mb <= 0) return Status::Ok();
  const auto n = static_cast<int64_t>(plan.spec.model_size());
  const bool columns = !plan.column_blocks.empty();  // the column method's blocks (dense form)
  const std::string advice = std::string("use more workers") + (columns ? "" : " (or split into more shards)") +
                             (general_form || columns ? "" : ", or --consensus general");
  // `extra_bytes`: what the shard's worker holds beyond a row worker's.
  auto check = [&](const std::string& shard, int64_t rows, int64_t nnz, double extra_bytes = 0) -> Status {
    const double needed_mb =
        (WorkerMemoryBytes(rows, nnz, n, general_form, plan.spec.blocks(), working_columns) + extra_bytes) / 1e6;
    if (needed_mb <= limit_mb) return Status::Ok();
    return InvalidArgument(shard + " (" + std::to_string(rows) + " rows, " + std::to_string(nnz) +
                           " nonzeros) needs about " + std::to_string(static_cast<int64_t>(std::ceil(needed_mb))) +
                           " MB in a worker, over the " + std::to_string(static_cast<int64_t>(limit_mb)) +
                           " MB limit (--worker-memory-mb): " + advice);
  };
  if (plan.data && !plan.column_blocks.empty()) {
    // The column method's: every row, its block's entries, those again by columns (12 bytes an
    // entry) and a round's derivatives and margins (24 bytes a row).
    std::vector<int64_t> per_column(static_cast<std::size_t>(plan.data->cols()), 0);
    const CsrView& matrix = plan.data->matrix;
    const std::span<const uint32_t> position_of = plan.column_position;
    for (int64_t k = matrix.row_ptr[0]; k < matrix.row_ptr[matrix.rows]; ++k) {
      ++per_column[position_of.empty() ? matrix.col_idx[k] : position_of[matrix.col_idx[k]]];
    }
    for (std::size_t i = 0; i < plan.column_blocks.size(); ++i) {
      const auto [begin, end] = plan.column_blocks[i];
      const int64_t nnz = std::accumulate(per_column.begin() + begin, per_column.begin() + end, int64_t{0});
      const std::string shard = "worker " + std::to_string(i) + "'s columns [" + std::to_string(begin) + ", " +
                                std::to_string(end) + ") of " + plan.source;
      NIMBUS_RETURN_IF_ERROR(check(shard, matrix.rows, nnz, 12.0 * static_cast<double>(nnz) + 24.0 * matrix.rows));
    }
    return Status::Ok();
  }
  if (plan.data) {
    for (std::size_t i = 0; i < plan.ranges.size(); ++i) {
      const auto [begin, end] = plan.ranges[i];
      const int64_t nnz = plan.data->matrix.row_ptr[end] - plan.data->matrix.row_ptr[begin];
      NIMBUS_RETURN_IF_ERROR(check("worker " + std::to_string(i) + "'s rows of " + plan.source, end - begin, nnz));
    }
    return Status::Ok();
  }
  if (plan.text) {
    for (std::size_t i = 0; i < plan.text->scans.size(); ++i) {
      const TextScan& scan = plan.text->scans[i];
      NIMBUS_RETURN_IF_ERROR(check("worker " + std::to_string(i) + "'s rows of " + plan.source, scan.rows, scan.nnz));
    }
    return Status::Ok();
  }
  for (const ShardEntry& entry : plan.manifest.shards) {
    NIMBUS_RETURN_IF_ERROR(check(plan.store->Describe(entry.key), entry.rows, entry.nnz));
  }
  return Status::Ok();
}

Status Repartition(Plan& plan, int workers) {
  if (!plan.data) return InvalidArgument(plan.source + ": only rows in memory can be split anew (PlanDataInMemory)");
  if (workers < 1 || workers > plan.data->rows()) {
    return InvalidArgument("--workers: " + std::to_string(workers) + " workers for " + std::to_string(plan.data->rows()) +
                           " rows");
  }
  plan.workers = workers;
  plan.ranges = PartitionRows(plan.data->matrix, workers);
  return Status::Ok();
}

Status RepartitionForDefaultWorkers(Plan& plan) {
  return Repartition(plan, static_cast<int>(std::min(DefaultWorkers(), plan.spec.rows)));
}

namespace {

// A worker's memory estimate for a shard of `rows` and `nnz` (with an l1 term, L1 Newton's copy
// of the working columns counted: the larger need).
int64_t MemoryEstimate(const Plan& plan, bool general_form, int64_t rows, int64_t nnz) {
  return static_cast<int64_t>(WorkerMemoryBytes(rows, nnz, static_cast<int64_t>(plan.spec.model_size()), general_form,
                                                plan.spec.blocks(), plan.spec.regularizer.l1 > 0));
}

// Threads' workers: each one's rows where they lie (its part of the text, its rows in memory,
// or its shard in the store).
std::vector<ShardSource> LocalShards(const Plan& plan) {
  std::vector<ShardSource> shards;
  if (plan.text) {
    for (TextPart& part : plan.text->Parts()) shards.push_back(ShardSource::InText(std::move(part)));
  } else if (plan.data && !plan.column_blocks.empty()) {
    for (const auto& [begin, end] : plan.column_blocks) {
      shards.push_back(ShardSource::InMemory(plan.data->SelectColumns(begin, end, plan.column_position)));
    }
  } else if (plan.data) {
    for (const auto& [begin, end] : plan.ranges) shards.push_back(ShardSource::InMemory(plan.data->Rows(begin, end)));
  } else {
    for (const ShardEntry& entry : plan.manifest.shards) {
      shards.push_back(ShardSource::InStore(plan.store, entry.key, entry.checksum));
    }
  }
  return shards;
}

// Remote workers' parts of the text, cut by their scans' memory estimates.
std::vector<ShardAssignment> TextAssignments(const Plan& plan, bool general_form) {
  std::vector<int64_t> estimates;
  for (const TextScan& scan : plan.text->scans) estimates.push_back(MemoryEstimate(plan, general_form, scan.rows, scan.nnz));
  const std::vector<TextPart> parts = plan.text->Parts(estimates);
  std::vector<ShardAssignment> shards;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    ShardAssignment shard;
    shard.key = "part " + std::to_string(i) + " of " + plan.source;
    shard.text = parts[i];
    if (i < plan.text->scans.size()) {
      shard.rows = plan.text->scans[i].rows;
      shard.nnz = plan.text->scans[i].nnz;
      shard.memory_estimate_bytes = MemoryEstimate(plan, general_form, shard.rows, shard.nnz);
    }
    shards.push_back(std::move(shard));
  }
  return shards;
}

// Remote workers' shards in a store: the plan's, or its rows in memory written as shards first
// (into --shard-dir, or a temporary directory the runtime keeps).
Result<std::vector<ShardAssignment>> StoreAssignments(const RuntimeOptions& flags, const Plan& plan, bool general_form,
                                                      Runtime& runtime) {
  std::string store_uri = plan.store ? plan.store->uri() : "";
  Manifest manifest = plan.manifest;
  if (plan.data) {
    std::string directory = flags.shard_dir;
    if (directory.empty()) {
      NIMBUS_ASSIGN_OR_RETURN(TemporaryDirectory temporary, TemporaryDirectory::Create("nimbus-shards"));
      directory = temporary.path();
      runtime.shard_directory = std::move(temporary);
    }
    NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, OpenAnyStore(directory, /*create=*/true));
    NIMBUS_ASSIGN_OR_RETURN(manifest, plan.column_blocks.empty()
                                          ? WriteShards(*plan.data, plan.ranges, plan.source, *store)
                                          : WriteColumnShards(*plan.data, plan.column_blocks, plan.column_position,
                                                              plan.source, *store));
    store_uri = directory;
  }
  if (store_uri.find("://") == std::string::npos) store_uri = AbsolutePath(store_uri);
  std::vector<ShardAssignment> shards;
  for (std::size_t i = 0; i < manifest.shards.size(); ++i) {
    const ShardEntry& entry = manifest.shards[i];
    shards.push_back({store_uri, entry.key, entry.checksum, {}, entry.rows, entry.nnz,
                      MemoryEstimate(plan, general_form, entry.rows, entry.nnz)});
    // The same row blocks as the shards written (the column layout's shards have every row).
    if (plan.data && !plan.data->folds.empty() && plan.column_blocks.empty()) {
      const auto [begin, end] = plan.ranges[i];
      shards.back().folds.assign(plan.data->folds.begin() + begin, plan.data->folds.begin() + end);
    }
  }
  return shards;
}

// How the master treats remote workers; their kept state past the memory limit goes to files.
Result<RemoteOptions> RemoteOptionsOf(const RuntimeOptions& flags, bool general_form) {
  RemoteOptions options;
  options.name = NameOf(flags.kind);
  options.listen = flags.listen;
  options.advertise = flags.advertise;
  options.heartbeat_seconds = flags.heartbeat;
  options.round_timeout_floor_seconds = flags.round_timeout_floor;
  options.max_restarts = static_cast<int>(flags.max_restarts);
  options.max_lifetime_seconds = flags.max_lifetime;
  // A platform's memory cap, here: the process and command runtimes hold each worker to it.
  if ((flags.kind == RuntimeKind::kProcess || flags.kind == RuntimeKind::kCommand) && flags.worker_memory_mb > 0) {
    options.worker_memory_bytes = static_cast<int64_t>(flags.worker_memory_mb * 1024 * 1024);
  }
  options.insecure = flags.insecure;
  options.memory_advice = std::string(general_form ? "" : "or the general form (--consensus general), ") +
                          (flags.kind == RuntimeKind::kLambda ? "or more memory for the function" : "or more memory per worker");
  options.spill_state = true;
  NIMBUS_RETURN_IF_ERROR(options.Validate());
  return options;
}

// How a remote worker (or relay) starts: a process of the worker program, a Lambda invocation,
// or the launch command.
Result<std::unique_ptr<Launcher>> LauncherOf(const RuntimeOptions& flags) {
  if (flags.kind == RuntimeKind::kProcess) return MakeProcessLauncher(WorkerProgramOf(flags));
  if (flags.kind == RuntimeKind::kLambda) return MakeInvokeLauncher(flags);
  if (flags.start_worker) {
    return MakeFunctionLauncher([start = flags.start_worker](const LaunchRequest& request) -> Result<StartedElsewhere> {
      NIMBUS_ASSIGN_OR_RETURN(StartedWorker started, start({request.worker, request.invocation, WorkerArguments(request),
                                                            request.credentials.client.secret_key}));
      return StartedElsewhere{std::move(started.ended), std::move(started.stop)};
    });
  }
  const bool relay_hosts = flags.relays > 0 && !flags.relay_hosts.empty();
  return MakeCommandLauncher(flags.launch, SplitList(relay_hosts ? flags.relay_hosts : flags.hosts));
}

// How the relays run their workers. Workers on other hosts (--relay-workers command) start by
// the launch command, shard i's on hosts[i mod H], and dial their relay on an address others
// reach (it binds every interface).
RelayGroup RelaySettings(const RuntimeOptions& flags, const std::vector<ShardAssignment>& shards) {
  RelayGroup settings;
  settings.threads = flags.relay_workers == RuntimeKind::kThreads;
  settings.fanout = flags.relay_fanout;
  if (flags.relay_workers == RuntimeKind::kCommand) {
    settings.launch = flags.launch;
    settings.listen = "tcp://0.0.0.0:0";
    const std::vector<std::string> hosts = SplitList(flags.hosts);
    for (std::size_t i = 0; i < shards.size(); ++i) {
      settings.hosts.push_back(hosts.empty() ? "localhost" : hosts[i % hosts.size()]);
    }
  }
  return settings;
}

}  // namespace

Result<Runtime> MakeRuntime(const RuntimeOptions& flags, const Plan& plan, const WorkerOptions& worker_options) {
  Runtime runtime;
  const bool general_form = runtime.general_form = worker_options.general_form;
  if (plan.text && plan.text->scanned) {
    // The workers that scanned the text, once: a later runtime's read their parts anew.
    runtime = std::move(*plan.text->scanned);
    plan.text->scanned.reset();
    NIMBUS_RETURN_IF_ERROR(SendTextPlan(plan, runtime));
    return runtime;
  }
  if (flags.kind == RuntimeKind::kThreads) {
    runtime.executor = std::make_unique<ThreadsExecutor>(LocalShards(plan), plan.spec, worker_options);
    return runtime;
  }
  std::vector<ShardAssignment> shards;
  if (plan.text) {
    shards = TextAssignments(plan, general_form);
  } else {
    NIMBUS_ASSIGN_OR_RETURN(shards, StoreAssignments(flags, plan, general_form, runtime));
  }
#ifdef NIMBUS_HAVE_MPI
  if (flags.kind == RuntimeKind::kMpi && flags.topology == Topology::kAllreduce) {
    runtime.executor = std::make_unique<MpiAllreduceExecutor>(shards, plan.spec, worker_options, flags.run_id);
    return runtime;
  }
  if (flags.kind == RuntimeKind::kMpi) {
    runtime.executor = std::make_unique<MpiExecutor>(std::move(shards), plan.spec, worker_options, flags.run_id);
    return runtime;
  }
#endif
  if (flags.relays > 0) {
    NIMBUS_ASSIGN_OR_RETURN(shards, GroupForRelays(shards, static_cast<int>(flags.relays), RelaySettings(flags, shards)));
  }
  NIMBUS_ASSIGN_OR_RETURN(RemoteOptions options, RemoteOptionsOf(flags, general_form));
  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<Launcher> launcher, LauncherOf(flags));
  auto remote = std::make_unique<RemoteExecutor>(std::move(shards), plan.spec, worker_options, options, std::move(launcher));
  runtime.remote = remote.get();
  runtime.executor = std::move(remote);
  return runtime;
}

void AddCostEstimate(const Prices& prices, const Plan& plan, Summary* summary) {
  const double run = summary->setup_seconds + summary->solve_seconds;
  // A shard holds a label and an offset per row (16 bytes) and an index and value per entry.
  const int64_t shard_bytes = (plan.spec.rows * 16 + summary->data_nnz * 12) / std::max(1, plan.workers);
  const int64_t s3_requests = plan.workers * (1 + ShardLoadRequests(shard_bytes));
  const Cost cost = EstimateCost(prices, plan.workers + summary->worker_restarts, run * plan.workers, s3_requests,
                                 run + summary->load_seconds);
  summary->cost_dollars = cost.total_dollars();
  summary->cost_gb_seconds = cost.function_gb_seconds;
}

namespace {

constexpr std::string_view kAutoDefault = "auto: the default; no option or regularizer calls for ADMM";

// auto's choice and its reason: Newton, the default since it took less time than ADMM on the
// benchmark suite (docs/benchmarks.md), unless an option or the problem calls for what only
// ADMM has.
std::pair<Algorithm, std::string> AutoAlgorithm(const SolveOptions& options) {
  const AdmmOptions& admm = options.admm;
  // A resumed run goes on with the algorithm it began with (an earlier build's auto may differ).
  if (options.checkpoint.resume) return {options.checkpoint.resume->algorithm, "auto: the checkpoint's run used it"};
  if (options.runtime.relays > 0) return {Algorithm::kNewton, "auto: --relays, which sum Newton's rounds"};
  if (admm.barrier != 0) return {Algorithm::kAdmm, "auto: --barrier, a partial barrier, is ADMM's"};
  if (options.runtime.topology == Topology::kAllreduce) {
    return {Algorithm::kAdmm, "auto: --topology allreduce has no master for Newton's line search"};
  }
  // With a regularizer known by its prox only, proximal Newton's every step is a solve of its
  // own (heart_scale, l1 as a program's regularizer: 104 rounds, ADMM 77).
  if (options.regularizer != nullptr && !options.regularizer->smooth()) {
    return {Algorithm::kAdmm, "auto: a regularizer known by its prox only"};
  }
  return {Algorithm::kNewton, std::string(kAutoDefault)};
}

}  // namespace

Status RefuseColumns(const SolveOptions& options, std::string_view command) {
  if (options.algorithm != Algorithm::kColumns) return Status::Ok();
  return InvalidArgument("--algorithm columns: not for " + std::string(command) +
                         " yet (they run Newton's or ADMM's masters on workers; the column method is nimbus train's, "
                         "path's and cv's)");
}

MasterChoice ChooseMaster(const SolveOptions& options) {
  MasterChoice choice;
  if (options.algorithm == Algorithm::kAuto) {
    std::tie(choice.algorithm, choice.reason) = AutoAlgorithm(options);
    choice.by_default = choice.reason == kAutoDefault;
  } else {
    choice.algorithm = options.algorithm;
    choice.reason = "--algorithm " + std::string(NameOf(options.algorithm));
  }
  choice.admm = options.admm;
  choice.newton = NewtonOptionsOf(options);
  return choice;
}

std::unique_ptr<Master> MasterChoice::Make(const ProblemSpec& spec, Executor* executor) const {
  // The column method has no Master: its callers refused it (RefuseColumns, SolveByColumnsHere).
  assert(algorithm != Algorithm::kColumns);
  std::unique_ptr<Master> master;
  if (algorithm == Algorithm::kNewton) {
    master = std::make_unique<NewtonMaster>(spec, newton, executor);
  } else {
    master = std::make_unique<AdmmMaster>(spec, admm, executor);
  }
  master->SetAlgorithmReason(reason);
  return master;
}

}  // namespace nimbus
