// nimbus._nimbus: the library facade (include/nimbus/nimbus.h) for Python. The estimators in
// nimbus/linear_model.py turn scikit-learn's parameters into these calls; this file only
// moves arrays and options across and releases the GIL while the workers run.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nimbus/nimbus.h"

namespace py = pybind11;

namespace nimbus {
namespace {

// C-contiguous arrays of exactly these types: the caller (linear_model.py) converts, so that
// nothing here copies the data.
template <typename T>
using Strict = py::array_t<T, py::array::c_style>;

// The rows as a CsrView over the caller's arrays (which must stay alive during the solve).
CsrView RowsOf(const Strict<int64_t>& indptr, const Strict<uint32_t>& indices, const Strict<double>& values,
               int64_t n_features) {
  const int64_t rows = indptr.size() - 1;
  if (rows < 1) throw py::value_error("X: no rows");
  if (indices.size() != values.size()) throw py::value_error("X: indices and data differ in length");
  const CsrView matrix{rows, n_features, indptr.data(), indices.data(), values.data()};
  if (matrix.row_ptr[rows] != static_cast<int64_t>(values.size())) {
    throw py::value_error("X: indptr does not end at the number of stored entries");
  }
  if (Status structure = CheckCsrStructure(matrix); !structure.ok()) throw py::value_error("X: " + structure.message());
  return matrix;
}

template <typename T>
T Get(const py::dict& options, const char* key, T fallback) {
  return options.contains(key) && !options[key].is_none() ? options[key].cast<T>() : fallback;
}

// The choice (nimbus/choices.h) the option's text names; a ValueError if it names none.
template <typename Choice>
Choice GetChoice(const py::dict& options, const char* key, Choice fallback) {
  if (!options.contains(key) || options[key].is_none()) return fallback;
  const std::string text = options[key].cast<std::string>();
  Result<Choice> choice = ParseChoice<Choice>(text);
  if (!choice.ok()) throw py::value_error(std::string(key) + "='" + text + "' is not " + ChoiceList<Choice>());
  return *choice;
}

// The estimator's previous fit (warm_start): coef (C x features) and C intercepts, as a model
// of the class indices 0 .. C-1 nimbus sees as labels (two classes: one vector, 1 the +1 class).
std::shared_ptr<const Model> WarmStartOf(const py::dict& options) {
  if (!options.contains("warm_start_coef") || options["warm_start_coef"].is_none()) return nullptr;
  const auto coef = options["warm_start_coef"].cast<py::array_t<double, py::array::c_style | py::array::forcecast>>();
  const auto intercept = options["warm_start_intercept"].cast<py::array_t<double, py::array::forcecast>>();
  if (coef.ndim() != 2 || intercept.ndim() != 1 || intercept.shape(0) != coef.shape(0)) {
    throw py::value_error("warm start: coef must be classes x features and intercept one per class");
  }
  auto model = std::make_shared<Model>();
  model->classes = coef.shape(0);
  model->cols = coef.shape(1);
  model->intercept = true;
  DistinctLabels labels;
  for (int64_t k = 0; k < std::max<int64_t>(model->classes, 2); ++k) labels.Add(static_cast<double>(k));
  model->labels = labels.Encoding();
  auto c = coef.unchecked<2>();
  auto b = intercept.unchecked<1>();
  for (py::ssize_t j = 0; j < coef.shape(1); ++j) {
    for (py::ssize_t k = 0; k < coef.shape(0); ++k) model->weights.push_back(c(k, j));
  }
  for (py::ssize_t k = 0; k < coef.shape(0); ++k) model->weights.push_back(b(k));
  return model;
}

// SolveOptions from the estimator's dict (keys named as SolveOptions' fields).
SolveOptions OptionsOf(const py::dict& options) {
  SolveOptions solve;
  solve.l1 = Get<std::optional<double>>(options, "l1", solve.l1);
  solve.l2 = Get<std::optional<double>>(options, "l2", solve.l2);
  solve.intercept = Get<bool>(options, "intercept", false);
  solve.multiclass = GetChoice(options, "multiclass", solve.multiclass);
  solve.algorithm = GetChoice(options, "algorithm", solve.algorithm);
  solve.algorithm_profiles = Get<std::vector<std::string>>(options, "algorithm_profiles", {});
  solve.gradient_tolerance = Get<double>(options, "gradient_tolerance", solve.gradient_tolerance);
  solve.admm.max_iterations = Get<int>(options, "max_iterations", solve.admm.max_iterations);
  solve.class_weights.balanced = Get<bool>(options, "class_weight_balanced", false);
  solve.class_weights.by_label = Get<std::map<double, double>>(options, "class_weight", {});
  solve.liblinear_c = Get<double>(options, "c", 0.0);
  solve.warm_start = WarmStartOf(options);
  RuntimeOptions& runtime = solve.runtime;
  runtime.kind = GetChoice(options, "runtime", runtime.kind);
  runtime.workers = Get<int64_t>(options, "workers", runtime.workers);
  runtime.worker_program = Get<std::string>(options, "worker_program", runtime.worker_program);
  runtime.launch = Get<std::string>(options, "launch", runtime.launch);
  runtime.hosts = Get<std::string>(options, "hosts", runtime.hosts);
  runtime.listen = Get<std::string>(options, "listen", runtime.listen);
  runtime.advertise = Get<std::string>(options, "advertise", runtime.advertise);
  runtime.lambda_function = Get<std::string>(options, "lambda_function", runtime.lambda_function);
  runtime.lambda_endpoint = Get<std::string>(options, "lambda_endpoint", runtime.lambda_endpoint);
  runtime.max_restarts = Get<int64_t>(options, "max_restarts", runtime.max_restarts);
  runtime.relays = Get<int64_t>(options, "relays", runtime.relays);
  runtime.relay_fanout = Get<int64_t>(options, "relay_fanout", runtime.relay_fanout);
  runtime.relay_workers = GetChoice(options, "relay_workers", runtime.relay_workers);
  runtime.relay_hosts = Get<std::string>(options, "relay_hosts", runtime.relay_hosts);
  runtime.shard_dir = Get<std::string>(options, "shard_dir", runtime.shard_dir);
  runtime.lambda_pass_credentials = Get<bool>(options, "lambda_pass_credentials", runtime.lambda_pass_credentials);
  runtime.insecure = Get<bool>(options, "insecure", runtime.insecure);
  runtime.heartbeat = Get<double>(options, "heartbeat", runtime.heartbeat);
  runtime.max_lifetime = Get<double>(options, "max_lifetime", runtime.max_lifetime);
  runtime.round_timeout_floor = Get<double>(options, "round_timeout_floor", runtime.round_timeout_floor);
  runtime.worker_memory_mb = Get<double>(options, "worker_memory_mb", runtime.worker_memory_mb);
  return solve;
}

// A model as the estimator keeps it: coef (classes x features, dense), intercepts, and what
// its solve's summary says.
py::dict OutcomeOf(const Model& model, const Summary& s, int64_t n_features) {
  const auto classes = static_cast<std::size_t>(model.classes);
  py::dict out;
  if (n_features >= 0) {  // (a negative count: no dense coef, the caller gives it otherwise)
    const std::vector<double> dense = model.WeightsFor(n_features);
    const auto features = static_cast<std::size_t>(n_features);
    py::array_t<double> coef({classes, features});
    auto c = coef.mutable_unchecked<2>();
    for (std::size_t j = 0; j < features; ++j) {
      for (std::size_t k = 0; k < classes; ++k) c(k, j) = dense[j * classes + k];
    }
    out["coef"] = coef;
  }
  py::array_t<double> intercept(static_cast<py::ssize_t>(classes));
  auto b = intercept.mutable_unchecked<1>();
  for (std::size_t k = 0; k < classes; ++k) b(k) = model.bias(static_cast<int64_t>(k));
  out["intercept"] = intercept;
  out["multinomial"] = model.multinomial;
  out["iterations"] = s.iterations;
  out["rounds"] = s.rounds;
  out["objective"] = s.objective;
  out["termination"] = std::string(TerminationName(s.termination));
  out["message"] = s.message;
  out["solve_seconds"] = s.solve_seconds;
  out["cost_dollars"] = s.cost_dollars;
  out["algorithm"] = std::string(NameOf(s.algorithm));
  out["algorithm_reason"] = s.algorithm_reason;
  return out;
}

TrainingData DataOf(const CsrView& matrix, const Strict<double>& labels, const std::optional<Strict<double>>& weights) {
  if (labels.size() != matrix.rows) {
    throw py::value_error("y: " + std::to_string(labels.size()) + " labels for " + std::to_string(matrix.rows) + " rows");
  }
  TrainingData data = TrainingData::Csr(matrix, std::span<const double>(labels.data(), labels.size()));
  if (!weights) return data;
  if (weights->size() != matrix.rows) throw py::value_error("sample_weight: one weight per row is needed");
  return std::move(data).WithSampleWeights(std::span<const double>(weights->data(), weights->size()));
}

// A Python object that may be dropped on any thread: the last owner takes the GIL to drop it.
std::shared_ptr<py::object> SharedObject(py::object object) {
  return std::shared_ptr<py::object>(new py::object(std::move(object)), [](py::object* held) {
    py::gil_scoped_acquire gil;
    delete held;
  });
}

// Ctrl-C during a solve, as the solve's Python callbacks meet it (Python's error indicator
// cleared, so that the callbacks after it run): the iteration callback then stops the solve, and
// its caller raises KeyboardInterrupt once the solve has returned.
struct CtrlC {
  bool seen = false;
  // The caller's part, after the solve, with the GIL held.
  void RaiseIfSeen() const {
    if (!seen) return;
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
};

// An error a callback of the master's raised, dropped there, unless it is Ctrl-C's.
void KeepInterrupt(const py::error_already_set& error, CtrlC& ctrl_c) {
  if (error.matches(PyExc_KeyboardInterrupt)) ctrl_c.seen = true;
}

// options["progress"], the estimator's progress display (linear_model.py: _Progress), or None.
std::shared_ptr<py::object> ProgressOf(const py::dict& options) {
  if (!options.contains("progress") || options["progress"].is_none()) return nullptr;
  return SharedObject(options["progress"]);
}

// The iteration callback: prints with `verbose` > 0, and tells `progress` (if any) the stop
// test's measure and its target at each iteration; Ctrl-C (a pending KeyboardInterrupt) stops
// the solve at the next iteration (the caller raises it: CtrlC).
IterationCallback InterruptibleProgress(const py::dict& options, const std::shared_ptr<CtrlC>& ctrl_c) {
  const int verbose = Get<int>(options, "verbose", 0);
  std::shared_ptr<py::object> progress = ProgressOf(options);
  return [verbose, progress, ctrl_c](const IterationInfo& info) {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      PyErr_Clear();
      ctrl_c->seen = true;
    }
    if (ctrl_c->seen) return false;
    if (progress) {
      const bool subgradient = TestsSubgradient(info.algorithm);
      try {
        (*progress)(info.iteration, info.objective, subgradient ? info.gradient_norm : info.primal_residual,
                    subgradient ? info.gradient_tolerance : info.eps_primal, info.elapsed_seconds);
      } catch (const py::error_already_set& error) {  // a display that fails does not stop the solve
        KeepInterrupt(error, *ctrl_c);
      }
    }
    if (verbose > 0) {
      const bool subgradient = TestsSubgradient(info.algorithm);
      py::print("nimbus: iteration", info.iteration, "objective", info.objective,
                subgradient ? "gradient norm" : "primal residual",
                subgradient ? info.gradient_norm : info.primal_residual,
                "seconds", info.elapsed_seconds, py::arg("flush") = true);
    }
    return true;
  };
}

// Solve with the GIL released while the workers run, Ctrl-C stopping it (raised here as
// KeyboardInterrupt), and its errors raised as Python's.
SolveResult SolveInterruptibly(const TrainingData& data, SolveOptions solve, const py::dict& options,
                               const std::shared_ptr<CtrlC>& ctrl_c) {
  solve.on_iteration = InterruptibleProgress(options, ctrl_c);
  Result<SolveResult> result = [&] {
    py::gil_scoped_release released;
    return Solve(data, solve);
  }();
  ctrl_c->RaiseIfSeen();
  if (!result.ok()) throw py::value_error(result.status().message());
  if (!result->summary.ok()) throw std::runtime_error("nimbus: " + result->summary.message);
  return std::move(result).value();
}

// Solves on the caller's CSR arrays.
py::dict Fit(const Strict<int64_t>& indptr, const Strict<uint32_t>& indices, const Strict<double>& values,
             int64_t n_features, const Strict<double>& labels, const std::optional<Strict<double>>& sample_weight,
             const py::dict& options) {
  const CsrView matrix = RowsOf(indptr, indices, values, n_features);
  const TrainingData data = DataOf(matrix, labels, sample_weight);
  const SolveResult result = SolveInterruptibly(data, OptionsOf(options), options, std::make_shared<CtrlC>());
  return OutcomeOf(result.model, result.summary, n_features);
}

// The largest feature space whose coef_ comes dense (past it: the held weights, as CSR parts).
constexpr int64_t kDenseCoefFeatures = int64_t{1} << 24;

// A model of LIBSVM text as the estimators keep it: the data's classes (in the file's values,
// ascending) and features; past kDenseCoefFeatures its coef as the columns held and their
// weights (classes x held, row-major) instead of a dense array.
py::dict FileOutcome(const Model& model, const Summary& summary) {
  const bool dense = model.cols <= kDenseCoefFeatures;
  py::dict out = OutcomeOf(model, summary, dense ? model.cols : -1);
  out["classes"] = model.labels.ClassValues();
  out["n_features"] = model.cols;
  if (!dense) {
    std::vector<int64_t> columns;
    for (int64_t k = 0; k < model.held(); ++k) columns.push_back(model.features.empty() ? k : model.features[k]);
    const auto classes = static_cast<std::size_t>(model.classes);
    py::array_t<double> held({classes, columns.size()});
    auto h = held.mutable_unchecked<2>();
    for (std::size_t j = 0; j < columns.size(); ++j) {
      for (std::size_t c = 0; c < classes; ++c) h(c, j) = model.weights[j * classes + c];
    }
    out["coef_columns"] = columns;
    out["coef_held"] = held;
  }
  return out;
}

// Solves on LIBSVM text at `location` (a file, a directory or S3 prefix of files, several with
// commas): the workers read it, this process reads no row. The outcome has the data's classes
// (in the file's values, ascending) and features; past kDenseCoefFeatures its coef as the
// columns held and their weights (classes x held, row-major) instead of a dense array.
py::dict FitFile(const std::string& location, const std::optional<std::string>& sample_weight_file,
                 const py::dict& options) {
  TrainingData data = TrainingData::LibsvmFile(location);
  if (sample_weight_file) data = std::move(data).WithSampleWeights(*sample_weight_file);
  const SolveResult result = SolveInterruptibly(data, OptionsOf(options), options, std::make_shared<CtrlC>());
  return FileOutcome(result.model, result.summary);
}

// RuntimeOptions::start_worker over a Python callable start(worker, invocation, arguments,
// client_secret) that returns a handle with done() and cancel() (a Dask future): the master
// calls it with the GIL released, so each call takes it.
std::function<Result<StartedWorker>(const WorkerStart&)> StartWorkerOf(py::function start,
                                                                      const std::shared_ptr<CtrlC>& ctrl_c) {
  std::shared_ptr<py::object> function = SharedObject(std::move(start));
  return [function, ctrl_c](const WorkerStart& request) -> Result<StartedWorker> {
    py::gil_scoped_acquire gil;
    try {
      std::shared_ptr<py::object> handle = SharedObject(
          (*function)(request.worker, request.invocation, request.arguments, py::bytes(request.client_secret)));
      StartedWorker started;
      started.ended = [handle, ctrl_c] {
        py::gil_scoped_acquire held;
        try {
          return handle->attr("done")().cast<bool>();
        } catch (const py::error_already_set& error) {
          KeepInterrupt(error, *ctrl_c);
          return false;  // not known: the master's own timeouts judge it
        }
      };
      started.stop = [handle, ctrl_c] {
        py::gil_scoped_acquire held;
        try {
          handle->attr("cancel")();
        } catch (const py::error_already_set& error) {  // best effort: the master's BYE ends it too
          KeepInterrupt(error, *ctrl_c);
        }
      };
      return started;
    } catch (const py::error_already_set& error) {
      KeepInterrupt(error, *ctrl_c);
      return Unavailable(std::string("start_worker: ") + error.what());
    }
  };
}

// The runtime of held parts: workers started by `start_worker` (and, for tests only, the
// workers' faults as `nimbus train --inject-crash` and `--inject-delay` take them: "@1:3" kills
// worker 1's process in round 3, and with it the Dask worker that runs it; "200" delays every
// round's reply by 200 ms).
void UseStartWorker(const py::dict& options, py::function start_worker, const std::shared_ptr<CtrlC>& ctrl_c,
                    SolveOptions& solve) {
  solve.runtime.kind = RuntimeKind::kCommand;
  solve.runtime.start_worker = StartWorkerOf(std::move(start_worker), ctrl_c);
  const std::string crash = Get<std::string>(options, "inject_crash", "");
  const std::string delay = Get<std::string>(options, "inject_delay", "");
  if (crash.empty() && delay.empty()) return;
  if (Status injected = InjectFaultsForTests({crash, delay, "", 1}, &solve); !injected.ok()) {
    throw py::value_error(injected.message());
  }
}

// Solves on parts held where they lie (a Dask cluster's partitions): `start_worker` starts
// worker i where part i is, which runs serve_worker; this process reads no row.
py::dict FitHeld(const std::vector<std::string>& parts, int64_t n_features, const py::dict& options,
                 py::function start_worker) {
  SolveOptions solve = OptionsOf(options);
  const auto ctrl_c = std::make_shared<CtrlC>();
  UseStartWorker(options, std::move(start_worker), ctrl_c, solve);
  const SolveResult result = SolveInterruptibly(TrainingData::HeldByWorkers(parts), std::move(solve), options, ctrl_c);
  py::dict out = OutcomeOf(result.model, result.summary, n_features);
  out["classes"] = result.model.labels.ClassValues();
  out["rows"] = result.summary.rows;
  out["worker_restarts"] = result.summary.worker_restarts;
  out["bytes_received"] = result.summary.bytes_received;
  return out;
}

// One worker of a held-parts fit, served here on this thread (a Dask task) until it leaves:
// its part's CSR arrays (rows may start past 0 in indices and data), labels and weights.
int ServeHeldPart(const std::vector<std::string>& arguments, const py::bytes& client_secret, const std::string& key,
                  const Strict<int64_t>& indptr, const Strict<uint32_t>& indices, const Strict<double>& values,
                  int64_t n_features, const Strict<double>& labels, const std::optional<Strict<double>>& weights) {
  const int64_t rows = indptr.size() - 1;
  if (rows < 0) throw py::value_error("indptr: needs rows + 1 entries");
  if (indices.size() != values.size()) throw py::value_error("indices and data differ in length");
  const CsrView matrix{rows, n_features, indptr.data(), indices.data(), values.data()};
  HeldPart part{key, matrix, std::span<const double>(labels.data(), labels.size()), {}};
  if (weights) part.weights = std::span<const double>(weights->data(), weights->size());
  const std::string secret = client_secret;
  py::gil_scoped_release released;
  return ServeWorker(arguments, secret, part);
}

CvOptions CvOptionsOf(const py::dict& cv_options) {
  CvOptions cv;
  cv.folds = Get<int64_t>(cv_options, "folds", cv.folds);
  cv.seed = Get<uint64_t>(cv_options, "seed", cv.seed);
  cv.metric = Get<std::string>(cv_options, "metric", cv.metric);
  cv.path.penalty = GetChoice(cv_options, "penalty", cv.path.penalty);
  cv.path.length = Get<int64_t>(cv_options, "length", cv.path.length);
  cv.path.lambdas = Get<std::vector<double>>(cv_options, "lambdas", {});
  cv.path.liblinear_cs = Get<std::vector<double>>(cv_options, "cs", {});
  return cv;
}

// Cross-validation along a grid: every lambda's mean and standard deviation of each score,
// each fold's scores, the best and 1-SE points, and each point's model on all the data (its
// outcome by `outcome_of`).
py::dict CrossValidateData(const TrainingData& data, const py::dict& options, const py::dict& cv_options,
                           const std::function<py::dict(const Model&, const Summary&)>& outcome_of,
                           const std::function<void(SolveOptions&, const std::shared_ptr<CtrlC>&)>& configure = {}) {
  SolveOptions solve = OptionsOf(options);
  const auto ctrl_c = std::make_shared<CtrlC>();
  if (configure) configure(solve, ctrl_c);
  CvOptions cv = CvOptionsOf(cv_options);
  const int verbose = Get<int>(options, "verbose", 0);
  solve.on_iteration = InterruptibleProgress(options, ctrl_c);
  std::shared_ptr<py::object> progress = ProgressOf(options);
  cv.on_point = [&](const CvPoint& point) {
    py::gil_scoped_acquire gil;
    if (progress) {
      try {
        progress->attr("point")(point.lambda);
      } catch (const py::error_already_set& error) {
        KeepInterrupt(error, *ctrl_c);
      }
    }
    if (verbose <= 0) return;
    py::print("nimbus: lambda", point.lambda, "rounds", point.summary.rounds, "seconds", point.summary.solve_seconds,
              py::arg("flush") = true);
  };
  Result<CvResult> result = [&] {
    py::gil_scoped_release released;
    return CrossValidate(data, solve, cv);
  }();
  ctrl_c->RaiseIfSeen();
  if (!result.ok()) throw py::value_error(result.status().message());
  py::list points;
  for (const CvPoint& point : result->points) {
    if (!point.summary.ok()) throw std::runtime_error("nimbus: " + point.summary.message);
    py::dict entry = outcome_of(point.model, point.summary);
    entry["lambda"] = point.lambda;
    py::dict scores, folds;  // name: (mean, std), and name: each fold's
    for (const auto& [name, score] : point.scores) {
      scores[py::str(name)] = py::make_tuple(score.mean, score.std);
      folds[py::str(name)] = score.folds;
    }
    entry["scores"] = scores;
    entry["folds"] = folds;
    points.append(entry);
  }
  py::dict out;
  out["points"] = points;
  out["best"] = result->best;
  out["one_se"] = result->one_se;
  out["metric"] = result->metric;
  out["lambda_max"] = result->lambda_max;
  out["rows"] = result->rows;
  if (!result->fold_of_rows.empty()) {
    out["fold_of_rows"] = py::array_t<uint8_t>(static_cast<py::ssize_t>(result->fold_of_rows.size()),
                                               result->fold_of_rows.data());
  }
  out["wall_seconds"] = result->wall_seconds;
  out["cost_dollars"] = result->cost_dollars;
  return out;
}

// On the caller's CSR arrays.
py::dict CrossValidateArrays(const Strict<int64_t>& indptr, const Strict<uint32_t>& indices,
                             const Strict<double>& values, int64_t n_features, const Strict<double>& labels,
                             const std::optional<Strict<double>>& sample_weight, const py::dict& options,
                             const py::dict& cv_options) {
  const CsrView matrix = RowsOf(indptr, indices, values, n_features);
  return CrossValidateData(DataOf(matrix, labels, sample_weight), options, cv_options,
                           [n_features](const Model& model, const Summary& summary) {
                             return OutcomeOf(model, summary, n_features);
                           });
}

// On LIBSVM text that the workers read, deal the folds of and score: this process reads no row.
py::dict CrossValidateFile(const std::string& location, const std::optional<std::string>& sample_weight_file,
                           const py::dict& options, const py::dict& cv_options) {
  TrainingData data = TrainingData::LibsvmFile(location);
  if (sample_weight_file) data = std::move(data).WithSampleWeights(*sample_weight_file);
  return CrossValidateData(data, options, cv_options, FileOutcome);
}

// On parts held where they lie, as FitHeld solves them.
py::dict CrossValidateHeld(const std::vector<std::string>& parts, int64_t n_features, const py::dict& options,
                           const py::dict& cv_options, py::function start_worker) {
  return CrossValidateData(
      TrainingData::HeldByWorkers(parts), options, cv_options,
      [n_features](const Model& model, const Summary& summary) { return OutcomeOf(model, summary, n_features); },
      [&](SolveOptions& solve, const std::shared_ptr<CtrlC>& ctrl_c) {
        UseStartWorker(options, std::move(start_worker), ctrl_c, solve);
      });
}

}  // namespace
}  // namespace nimbus

PYBIND11_MODULE(_nimbus, m) {
  m.doc() = "nimbus's library facade (use nimbus.LogisticRegression)";
  m.def("fit", &nimbus::Fit, py::arg("indptr"), py::arg("indices"), py::arg("data"), py::arg("n_features"),
        py::arg("y"), py::arg("sample_weight"), py::arg("options"),
        "Solves on CSR arrays (int64 indptr, uint32 indices, float64 data) with the options dict.");
  m.def("cross_validate", &nimbus::CrossValidateArrays, py::arg("indptr"), py::arg("indices"), py::arg("data"),
        py::arg("n_features"), py::arg("y"), py::arg("sample_weight"), py::arg("options"), py::arg("cv_options"),
        "K-fold cross-validation along a grid (folds, seed, metric, penalty, length, lambdas in cv_options).");
  m.def("cross_validate_file", &nimbus::CrossValidateFile, py::arg("location"), py::arg("sample_weight_file"),
        py::arg("options"), py::arg("cv_options"),
        "K-fold cross-validation on LIBSVM text that the workers read, deal the folds of and score themselves.");
  m.def("fit_file", &nimbus::FitFile, py::arg("location"), py::arg("sample_weight_file"), py::arg("options"),
        "Solves on LIBSVM text that the workers read themselves (a file, directory or s3:// prefix).");
  m.def("fit_held", &nimbus::FitHeld, py::arg("parts"), py::arg("n_features"), py::arg("options"),
        py::arg("start_worker"),
        "Solves on parts held where they lie: start_worker(worker, invocation, arguments, client_secret) starts "
        "worker i where part i is (returning a handle with done() and cancel()), which calls serve_worker.");
  m.def("cross_validate_held", &nimbus::CrossValidateHeld, py::arg("parts"), py::arg("n_features"),
        py::arg("options"), py::arg("cv_options"), py::arg("start_worker"),
        "K-fold cross-validation on parts held where they lie (as fit_held); each worker deals and scores its folds.");
  m.def("serve_worker", &nimbus::ServeHeldPart, py::arg("arguments"), py::arg("client_secret"), py::arg("key"),
        py::arg("indptr"), py::arg("indices"), py::arg("data"), py::arg("n_features"), py::arg("y"),
        py::arg("sample_weight"),
        "Serves one worker of a fit_held run on this thread, with its part's CSR arrays, until it leaves; "
        "returns its exit code (0: done).");
  m.def(
      "runtime_available",
      [](const std::string& kind) {
        nimbus::Result<nimbus::RuntimeKind> runtime = nimbus::ParseChoice<nimbus::RuntimeKind>(kind);
        return runtime.ok() && nimbus::RuntimeAvailable(*runtime);
      },
      py::arg("kind"), "Whether this build has the runtime (threads, process, command, lambda or mpi).");
}
