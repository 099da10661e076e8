#include "solve/solve_steps.h"

#include <utility>

#include "nimbus/core/clock.h"
#include "nimbus/core/vector_ops.h"
#include "nimbus/executor/trace_schema.h"

namespace nimbus {

Result<std::vector<WorkerReady>> StartWorkers(Executor& executor, const ProblemSpec& spec, double timeout_seconds,
                                              Summary& summary) {
  summary.runtime = executor.name();
  summary.workers = executor.workers();
  summary.rows = spec.rows;
  summary.cols = summary.solved_cols = spec.cols;
  Stopwatch setup_watch;
  NIMBUS_ASSIGN_OR_RETURN(std::vector<WorkerReady> ready, executor.Start(Deadline::After(timeout_seconds)));
  summary.setup_seconds = setup_watch.ElapsedSeconds();
  for (const WorkerReady& r : ready) summary.data_nnz += r.nnz;
  return ready;
}

void KeepCheckpoint(const CheckpointWriter& writer, const MasterState& state, Summary& summary) {
  Stopwatch watch;
  if (writer(state).ok()) {
    ++summary.checkpoints;
  } else {
    ++summary.checkpoint_failures;
  }
  summary.checkpoint_seconds += watch.ElapsedSeconds();
}

Solution FinishSolve(Executor& executor, const ProblemSpec& spec, std::vector<double> model, Summary summary,
                     TraceSink* trace) {
  executor.Stop();
  executor.AddCounters(summary);
  summary.nnz = static_cast<int64_t>(CountNonzeros(std::span<const double>(model).first(spec.regularized_size())));
  if (trace != nullptr) trace->Write(TraceLine(summary));
  Solution solution;
  solution.model = std::move(model);
  solution.summary = std::move(summary);
  return solution;
}

}  // namespace nimbus
