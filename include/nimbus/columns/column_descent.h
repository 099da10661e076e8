// The column method (issue 32), d-GLMNET's outer loop (Trofimov and Genkin, "Distributed
// coordinate descent for generalized linear models with regularization"): the features are cut
// into blocks of columns; each iteration every block minimizes its quadratic model of F at x
// by coordinate descent (columns/column_block.h), the blocks' changes together are one
// direction d (summed, or weighed by F's quadratic model on their span and the last step's),
// and a line search along d on the margins takes the step. Distributed, a block is a worker and
// an iteration one round: each sends A_B delta_B, an N-vector, and its delta_B.
//
// The blocks run where a BlockStepper puts them: on this process's threads, or on a runtime's
// workers, a block each (api/columns_solve.cpp); the master's part is the same.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nimbus/columns/column_block.h"
#include "nimbus/core/csr.h"
#include "nimbus/core/status.h"
#include "nimbus/problem/problem.h"

namespace nimbus {

// How the blocks' steps become one direction.
enum class BlockCombination {
  kSum,        // d = sum_b delta_b: d-GLMNET's
  // d = sum_b w_b delta_b + w_0 s, s the last step: the weights minimize F's quadratic model on
  // that span (the master has each A_B delta_B and A s, so its Hessian there is exact: U^T H U,
  // with the blocks' models' damping and floor added).
  // Blocks that overlap in their rows share the step; s carries the last rounds' progress
  // across the blocks' boundaries (the "common directions" of Lee, Wang and Lin).
  kWeighted,
};

struct ColumnDescentSummary {
  bool converged = false;
  int iterations = 0;
  double objective = 0;
  double subgradient_norm = 0;  // ||v(x)|| at the end, and at x = 0
  double initial_subgradient_norm = 0;
  double subgradient_tolerance = 0;  // the stop test's bound on ||v(x)||
  bool stopped = false;              // on_iteration asked to stop
  double data_passes = 0;       // matrix entries read over all blocks, in passes over the data
  int step_halvings = 0;        // the line search's, over all iterations
  bool failed = false;          // the blocks could not be stepped (a worker lost for good): message says why
  std::string message;
};

// The loop between two iterations, as a checkpoint keeps it: enough to go on as if it had not
// stopped, bit for bit.
struct ColumnDescentCheckpoint {
  std::vector<double> x;          // d weights, then the intercept
  std::vector<double> last_step;  // s, the last iteration's step
  int iterations = 0;             // made so far
  double subgradient_reference = 0;  // the stop test's ||v(0)||
  double curvature_scale = 1, damping = 0;
  // The rows' margins A x + b and A s, as the run summed them step by step. Empty: made anew
  // from x and s (a pass over the data each), which goes on as the run would have to rounding.
  std::vector<double> margins, last_margin_step;
};

// Which columns each block holds: the matrix's columns in the blocks' order, and the blocks'
// bounds in it. The solver's x follows that order (the intercept last); its answers, checkpoints
// and resumed states follow the matrix's.
struct ColumnLayout {
  std::vector<uint32_t> order;  // order[p]: the matrix's column at position p (empty: p itself)
  std::vector<uint32_t> cuts;   // blocks + 1 ascending positions, 0 to the column count
  int blocks() const { return static_cast<int>(cuts.size()) - 1; }
  // position_of[j]: where the matrix's column j stands (empty when order is).
  std::vector<uint32_t> PositionOf() const;
};

struct ColumnDescentOptions {
  int blocks = 2;                  // of about equal entries each
  // The blocks' columns (LayOutColumns); empty cuts: contiguous, of about equal entries
  // (CutColumns). Binary problems, one-vs-rest and regression; not a path's.
  ColumnLayout layout;
  int max_iterations = 1000;       // rounds, distributed
  double gradient_tolerance = 1e-5;  // stop: ||v(x)|| <= tolerance ||v(0)||, v the min-norm subgradient (0: never)
  int max_inner_passes = 20;       // a block's coordinate descent passes per iteration, at most
  double inner_ratio = 0.1;        // a block's passes end when its model's subgradient is this x F's
  BlockCombination combination = BlockCombination::kWeighted;
  // The blocks' models' curvature scale sigma (column_block.h); 0 adapts it, doubling it (up to
  // the number of blocks) after a step the line search cut and halving it (down to 1) after a
  // full one.
  double curvature_scale = 1;
  // The blocks' models' damping mu (column_block.h) starts here after a cut step, grows 4x after
  // each cut one and shrinks 4x after each full one, to 0 below this.
  double damping = 1e-6;
  // The threads of this process the blocks are stepped on (the answer is the same): a block
  // each, or two where there are twice as many threads as blocks (MinimizeBlockModel's sides).
  int threads = 1;
  // After each iteration, with the summary so far (one-vs-rest: the class's); false stops.
  std::function<bool(const ColumnDescentSummary&)> on_iteration;
  // Binary and regression problems: every `checkpoint_every` iterations (0: never) the loop's
  // state to on_checkpoint; and a state to go on from instead of x = 0.
  int checkpoint_every = 0;
  std::function<void(const ColumnDescentCheckpoint&)> on_checkpoint;
  std::shared_ptr<const ColumnDescentCheckpoint> resume;
  Status Validate() const;
};

struct ColumnDescentResult {
  std::vector<double> x;  // d weights, then the intercept
  ColumnDescentSummary summary;
};

// Where the blocks' coordinate descent runs each iteration: this process's threads (SolveByColumns
// on a matrix), or a runtime's workers, a block each (api/columns_solve.cpp). Either gives the
// same steps: each block's is MinimizeBlockModel's on the same numbers.
class BlockStepper {
 public:
  virtual ~BlockStepper() = default;
  // The blocks in order (the intercept in the last), and the data's entries over them all.
  virtual const std::vector<BlockRange>& blocks() const = 0;
  virtual int64_t nnz() const = 0;
  // Each block's step of its model at x, from the rows' derivatives there (one round).
  // `eligible`: the strong rules' over every coordinate (empty: all).
  virtual Result<std::vector<BlockStep>> Step(const RowDerivatives& at, std::span<const double> x,
                                              const BlockModelOptions& model, std::span<const uint8_t> eligible) = 0;
  // A v, v's intercept added to every row (one round, a pass over the data).
  virtual Result<std::vector<double>> Margins(std::span<const double> v) = 0;
};

// Solves spec's problem on `matrix` (every row) with its labels and row weights s_r (empty:
// all 1), from x = 0: binary classification (class weights too), one-vs-rest (its classes one
// after another on the same blocks; the summary adds them up) and regression, with l1 and l2
// (no softmax, custom regularizer or cross-validation's copies).
Result<ColumnDescentResult> SolveByColumns(const ProblemSpec& spec, const CsrView& matrix,
                                           std::span<const double> labels, std::span<const double> row_weights,
                                           const ColumnDescentOptions& options);
// The same on blocks that `stepper` steps (options.blocks and threads are its own): the master's
// part here, with the rows' labels and weights (the same problems).
Result<ColumnDescentResult> SolveByColumns(const ProblemSpec& spec, std::span<const double> labels,
                                           std::span<const double> row_weights, BlockStepper& stepper,
                                           const ColumnDescentOptions& options);

// A path of l1 values, glmnet's way: each point warm-started from the last, and with the
// sequential strong rules (Tibshirani et al. 2012) a point's solves move only the columns that
// can enter, x_j != 0 or |grad_j f| >= 2 l1_k - l1_{k-1} at the last point's answer; a KKT check
// over the columns left out (|grad_j f| <= l1_k) adds any the rule misjudged and solves again.
struct ColumnPathPoint {
  double l1 = 0;
  std::vector<double> x;
  // Over the point's solves; the stop test is relative to ||v(x0)|| at this l1, and the KKT
  // checks' passes over the data are counted.
  ColumnDescentSummary summary;
  int64_t eligible = 0;            // the columns the point's solves could move, in the end
  int strong_rule_violations = 0;  // columns left out that the KKT check put back
};

struct ColumnPathOptions {
  ColumnDescentOptions descent;
  bool strong_rules = true;
  // After each point, as it is solved; false ends the path there.
  std::function<bool(const ColumnPathPoint&)> on_point;
  Status Validate() const { return descent.Validate(); }
};

// A path solved a point at a time, for callers that step several side by side (cross-validation's
// folds): SolvePathByColumns's steps. It keeps its blocks (a copy of the matrix's entries, by
// columns), its rows' labels and weights; `matrix` is not read after Start.
class ColumnPath {
 public:
  // The blocks, and x0: no weight, the intercept at its own optimum (binary, class weights too,
  // and regression; spec's l2 kept, its l1 ignored).
  static Result<ColumnPath> Start(const ProblemSpec& spec, const CsrView& matrix, std::span<const double> labels,
                                  std::span<const double> row_weights, const ColumnPathOptions& options);
  // Cross-validation's folds + 1 paths: for k < folds, spec's problem on the rows whose fold
  // (fold_of_rows) is not k, its loss averaged over them; the last on every row. The matrix's
  // blocks by columns are built once, and each fold's taken from them without its held-out rows
  // (a pass over their entries, where a copy of the rows and a build by columns of its own cost
  // more: docs/benchmarks.md, "Folds' blocks from the whole's"). The paths start on `threads`
  // threads; a fold left with no rows to train on is named in the error ("fold k").
  static Result<std::vector<ColumnPath>> StartFolds(const ProblemSpec& spec, const CsrView& matrix,
                                                    std::span<const double> labels,
                                                    std::span<const double> row_weights,
                                                    std::span<const uint8_t> fold_of_rows, int64_t folds,
                                                    const ColumnPathOptions& options, int threads);
  ColumnPath(ColumnPath&&) noexcept;
  ColumnPath& operator=(ColumnPath&&) noexcept;
  ~ColumnPath();

  // The least l1 whose answer is x0: max_j |grad_j f(x0)|.
  double l1_max() const;
  // The point at l1 (positive, below the last point's), warm-started from the last point's
  // answer; options.on_point is not called.
  Result<ColumnPathPoint> Next(double l1);

 private:
  struct State;
  explicit ColumnPath(std::unique_ptr<State> state);
  // The path of a state whose rows and blocks are set: its x0 and l1_max.
  static ColumnPath Begin(std::unique_ptr<State> state, const ProblemSpec& spec);
  std::unique_ptr<State> state_;
};

// Paths stepped along one grid (descending l1) on `threads` threads, with no barrier between its
// lambdas: a free thread takes the next point of the path furthest behind that no other thread
// is on, so no thread waits for a lambda's slowest path (cross-validation's folds and the whole
// data's path). Each lambda's points, in the paths' order, go to `emit` on the calling thread as
// soon as the last of them is solved, lambda by lambda in the grid's order. A point's error ends
// the grid with it once the lambdas before its own are emitted; an error from `emit` ends it
// there (the points being solved finish first). Each path's points are its own sequence: the
// same, bit for bit, whatever the threads.
Status StepPathsAlongGrid(std::vector<ColumnPath>& paths, std::span<const double> grid, int threads,
                          const std::function<Status(double l1, std::vector<ColumnPathPoint> points)>& emit);

// spec's problem at each of l1_values (descending, positive; spec's l2 kept, its l1 ignored):
// binary (class weights too) and regression. The path starts at x0, no weight and the intercept
// at its own optimum.
Result<std::vector<ColumnPathPoint>> SolvePathByColumns(const ProblemSpec& spec, const CsrView& matrix,
                                                        std::span<const double> labels,
                                                        std::span<const double> row_weights,
                                                        std::span<const double> l1_values,
                                                        const ColumnPathOptions& options);

// l1_max of spec's problem (binary or regression): the least l1 whose answer is x0, no weight
// and the intercept at its own optimum: max_j |grad_j f(x0)| (the l2 term is zero there).
Result<double> L1MaxByColumns(const ProblemSpec& spec, const CsrView& matrix, std::span<const double> labels,
                              std::span<const double> row_weights, const ColumnDescentOptions& options);

// Column boundaries of `blocks` blocks of about equal entries: blocks + 1 ascending values
// from 0 to matrix.cols.
std::vector<uint32_t> CutColumns(const CsrView& matrix, int blocks);

// Blocks of columns that share rows (Scherrer, Tewari, Halappanavar and Haglin, "Feature
// clustering for accelerating parallel coordinate descent", 2012): the columns, most entries
// first, each join the block whose rows they share most among those below 1.02 of an equal
// share of the entries (the least filled if none is). Two blocks' steps add up well when few
// rows feel both; a column that shares its rows with its own block's is stepped against them.
// At most 64 blocks.
ColumnLayout ClusterColumns(const CsrView& matrix, int blocks);

// The column method's layout for `blocks` blocks, from measurements (docs/benchmarks.md, "Blocks
// clustered by their rows"): clustered for 2 to 64 blocks of a sparse matrix (under 10% of its
// cells filled: bags of words gain, images' pixels lose), contiguous otherwise.
ColumnLayout LayOutColumns(const CsrView& matrix, int blocks);

}  // namespace nimbus
