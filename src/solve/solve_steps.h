// What both masters (coordinator.cpp, newton.cpp) do the same way around their loops: start
// the workers with the summary's first fields, keep a checkpoint and count it, and finish with
// the workers stopped and the solution made.
#pragma once

#include <vector>

#include "nimbus/executor/executor.h"
#include "nimbus/solve/master.h"
#include "nimbus/core/trace.h"
#include "nimbus/problem/problem.h"

namespace nimbus {

// The workers started, each with its shard loaded; the summary gets the runtime, the workers,
// the problem's size, the setup's seconds and the data's nonzeros.
Result<std::vector<WorkerReady>> StartWorkers(Executor& executor, const ProblemSpec& spec, double timeout_seconds,
                                              Summary& summary);

// `state` written as a checkpoint, counted in the summary (a failed write does not stop the
// solve: the writer reports it).
void KeepCheckpoint(const CheckpointWriter& writer, const MasterState& state, Summary& summary);

// The workers stopped, and the solution of `model`: the summary with the runtime's counters
// and the model's nonzeros, written to the trace as the run's last event.
Solution FinishSolve(Executor& executor, const ProblemSpec& spec, std::vector<double> model, Summary summary,
                     TraceSink* trace);

}  // namespace nimbus
