// The messages between the master and its workers, as plain structs. Every runtime moves
// these: in-process executors hand them over directly, remote ones encode them (codec.h).
//
// Round k, in Boyd et al.'s order with the dual update moved to the start of the next round:
//   master -> worker  ROUND(z^k, rho_k)
//   worker: u_i <- u_i + xh_i - z^k               (dual update of iteration k)
//           report ||x_i - z^k||^2, ||x_i||^2, ||u_i||^2, f_i(z^k)   (stop test of iteration k)
//           u_i <- u_i * rho_{k-1} / rho_k        (when rho changed)
//           x_i <- argmin f_i(x) + rho_k/2 ||x - z^k + u_i||^2
//           xh_i <- alpha x_i + (1 - alpha) z^k
//   worker -> master  REPLY(w_i = xh_i + u_i)
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nimbus/choices.h"

namespace nimbus {

// A model-sized vector of doubles that is passed around without copies: a z sent to every
// worker, a w that arrives in a message buffer and stays there while the master keeps it.
// Read-only; its owner keeps the values alive.
class SharedVector {
 public:
  SharedVector() = default;
  SharedVector(std::vector<double> values);                         // NOLINT: owns them
  SharedVector(std::shared_ptr<const std::vector<double>> values);  // NOLINT: shares them
  SharedVector(std::shared_ptr<std::vector<double>> values)         // NOLINT
      : SharedVector(std::shared_ptr<const std::vector<double>>(std::move(values))) {}
  // `size` doubles at `data`, kept alive by `owner` (a received message, say).
  static SharedVector View(std::shared_ptr<const void> owner, const double* data, std::size_t size);

  const double* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  double operator[](std::size_t i) const { return data_[i]; }
  const double* begin() const { return data_; }
  const double* end() const { return data_ + size_; }
  std::span<const double> span() const { return {data_, size_}; }
  operator std::span<const double>() const { return span(); }  // NOLINT: a view
  const std::shared_ptr<const void>& owner() const { return owner_; }
  std::vector<double> ToVector() const { return {begin(), end()}; }
  friend bool operator==(const SharedVector& a, const SharedVector& b);

 private:
  std::shared_ptr<const void> owner_;
  const double* data_ = nullptr;
  std::size_t size_ = 0;
};

// The state a worker holds between rounds, rebuilt by the master for a replacement worker
// from the replies it kept (RebuildResumeState in executor/executor.h): with it, a new worker continues
// exactly where the one it replaces stopped.
struct ResumeState {
  std::vector<double> x;          // x_i of the last x-update
  std::vector<double> x_relaxed;  // xh_i = alpha x_i + (1 - alpha) z of that round
  std::vector<double> u;          // u_i before this round's dual update
  double rho_of_u = 0;            // the rho u is scaled for
};

// One round a worker answered, as the master keeps it: what it was sent (z on the worker's
// support in the general form, rho, alpha) and its reply w = xh + u.
struct KeptAnswer {
  SharedVector z;
  double rho = 0;
  double alpha = 1;
  SharedVector w;
};

// A worker's last two answers (previous is absent after a single one): all the master needs
// to rebuild the worker's state.
struct WorkerHistory {
  std::optional<KeptAnswer> previous;
  KeptAnswer last;
};


// What a round asks of a worker. ADMM rounds run the x-update above; the distributed Newton
// master (solve/newton/newton_master.h) asks for the shard's data term f_i at points it names:
//   kEvaluate       z = a point x: reply f_i(x) (as loss_at_z) and w = [grad f_i(x), diag H_i(x)]
//                   (2 n entries); the worker keeps the curvature at x as the point of this round
//   kHessianVector  z = a direction v: reply w = H_i(x) v at the point of round point_round
// and cross-validation asks for the figures of its folds' models on the rows they held out:
//   kScore          z = the model (every copy), query = what to answer (worker/held_out_scores.h):
//                   reply w = the folds' sums and the AUC's digit counts (any length)
// and the column method (columns/column_descent.h) asks a worker holding a block of columns (all
// rows' entries in them) for its block's step:
//   kColumnStep     z = the rows' derivatives g then h (2 N; empty for margins), query = the block,
//                   x on it and the model's options (columns/block_round.h): reply w = the block's
//                   step and A_B delta, or the margins A_B v (any length); the worker keeps nothing
// (a column method run in the master's process traces its iterations as kColumnStep rounds too).
enum class RoundKind : int64_t { kAdmm = 0, kEvaluate = 1, kHessianVector = 2, kScore = 3, kColumnStep = 4 };
template <>
struct ChoiceNames<RoundKind> {
  static constexpr std::string_view option = "round kind";
  static constexpr auto names = std::to_array<std::pair<RoundKind, std::string_view>>(
      {{RoundKind::kAdmm, "admm"}, {RoundKind::kEvaluate, "evaluate"}, {RoundKind::kHessianVector, "hessian-vector"},
       {RoundKind::kScore, "score"}, {RoundKind::kColumnStep, "column-step"}});
};

// Rounds whose z and reply w are as long as they are (not model-sized), whole doubles on the wire,
// with a query.
inline bool AnyLengthRound(RoundKind kind) { return kind == RoundKind::kScore || kind == RoundKind::kColumnStep; }

struct RoundRequest {
  int64_t round = 0;
  RoundKind kind = RoundKind::kAdmm;
  SharedVector z;  // the consensus z^k
  double rho = 1.0;
  double relaxation = 1.0;  // alpha
  // The x-update stops when ||grad|| <= max(inner_tolerance, inner_relative_tolerance * ||grad_0||).
  double inner_tolerance = 0.0;
  double inner_relative_tolerance = 0.0;
  // Lean messages: z (and the reply's w) travel as float32, each entry rounded to within a
  // relative 2^-24. In-process runtimes pass the doubles as they are.
  bool lean = false;
  // Set for the first round of a replacement worker: the state to resume from.
  std::shared_ptr<const ResumeState> resume;
  // kHessianVector: the round whose point the product is taken at, and that point, for a
  // worker that does not hold it (a replacement). A runtime may leave the point out for a
  // worker that evaluated it.
  int64_t point_round = -1;
  SharedVector point;
  // kHessianVector: w is needed only on the features where z has an entry (L1 Newton's working
  // set), so a worker may compute it there alone, from those columns.
  bool on_support = false;
  // kScore: the question (worker/held_out_scores.h: ScoreQuery); kColumnStep: the block's round.
  SharedVector query;
};

// What a worker reports about iteration k (its x_i from the round before, and z^k).
struct WorkerScalars {
  bool valid = false;          // false in round 0: there is no previous x_i yet
  double primal_squared = 0;   // ||x_i - z^k||^2
  double x_squared = 0;        // ||x_i||^2
  double u_squared = 0;        // ||u_i||^2 after the dual update, before any rho rescale
  double loss_at_z = 0;        // f_i(z^k) = (1/N) sum over the shard of loss(y, a . z^k)
};

struct WorkerTimings {
  double compute_seconds = 0;  // the whole round on the worker
  double solve_seconds = 0;    // the x-update alone
  int local_iterations = 0;
  int cg_iterations = 0;
  int64_t data_passes = 0;     // passes over the shard's nonzeros this round
  // The round's life on the wall clock (remote clocks corrected by the offset measured at
  // HELLO): the worker got the ROUND, began and ended its work, sent the REPLY, and the REPLY
  // reached the master. In-process, receive = start, send = end = arrival.
  double receive_wall = 0;
  double start_wall = 0;
  double end_wall = 0;
  double send_wall = 0;
  double arrival_wall = 0;
  int64_t bytes_in = 0;   // the ROUND on the wire, as the worker received it
  int64_t bytes_out = 0;  // the REPLY on the wire
  bool operator==(const WorkerTimings&) const = default;
};

enum class ReplyStatus { kOk, kFailed, kTimedOut };
const char* ReplyStatusName(ReplyStatus status);

struct WorkerReply {
  int worker = 0;
  uint64_t invocation = 0;  // which start of this worker answered (0 in-process)
  int64_t round = 0;
  ReplyStatus status = ReplyStatus::kOk;
  std::string error;       // what went wrong, when status != kOk
  SharedVector w;          // xh_i + u_i (kEvaluate: [gradient, diagonal]; kHessianVector: H v)
  int w_vectors = 1;       // w's length in local model sizes: 2 for kEvaluate; 0: any (kScore)
  WorkerScalars scalars;
  WorkerTimings timings;
};

// A worker's report after it loaded its shard and is ready for rounds.
// ---- Text that a worker reads itself (data/text_input.h, data/text_rows.h, as they travel) ----

struct TextFileRef {
  std::string store_uri;  // a directory (absolute) or s3://bucket/prefix
  std::string key;
  uint64_t bytes = 0;
  int64_t compression = 0;  // data's Compression
};
struct TextPieceRef {
  uint32_t file = 0;
  uint64_t begin = 0, end = 0;
};

// Cross-validation's folds of a part's rows, dealt where the rows are (data/folds.h:
// FoldDealer): the fold count and seed, each class's rows in the whole, and each class's rows
// before the part (a regression's rows are one class).
struct FoldPlan {
  int64_t folds = 0;  // 0: no cross-validation
  uint64_t seed = 0;
  std::vector<int64_t> class_rows, class_offsets;
};

// What the whole data set is, as a part's rows take it on (data/text_rows.h: TextPlan).
struct TextPlanned {
  bool classification = true;
  std::vector<double> class_values;  // two classes: the -1 label's, the +1 label's; more: each class's
  int64_t source_cols = 0;
  // Column k is feature (*features)[k] (renumbered); null: column j is feature j.
  std::shared_ptr<const std::vector<uint32_t>> features;
  int64_t first_row = 0;          // the part's first row in the whole
  int64_t rows = 0, nnz = 0;      // the part's, as its scan found them (a replacement checks them)
  // Each row's weight, from this file (empty: none) at `weights_offset`, the part's first line.
  TextFileRef weights;
  uint64_t weights_offset = 0;
  FoldPlan folds;
  int64_t memory_estimate_bytes = 0;  // the master's, for its report should the worker run out (not sent)
};

// A worker's part of LIBSVM text: whole files or a byte range of one (data/text_input.h:
// TextSlice), how to read its labels, and the plan once the master has made it.
struct TextPart {
  std::vector<TextFileRef> files;
  std::vector<TextPieceRef> pieces;
  bool classification = true;  // else a regression's real targets
  bool renumber = true;        // the master may renumber the columns: the part lists its features
  std::optional<TextPlanned> plan;
};

// What a worker found in its part (data/text_rows.h: TextScan).
struct TextScanned {
  int64_t rows = 0, nnz = 0;
  uint64_t max_index = 0;
  std::vector<double> labels;
  std::vector<int64_t> label_rows;
  std::vector<uint32_t> features;
  bool all_ones = true, all_floats = true;
  uint64_t bytes_read = 0;
  double seconds = 0;
};

// A relay's group (runtime/relay.h): the shards of the workers a relay starts and serves,
// summing their replies into one. The master sees the relay as one worker whose shard is the
// group's rows.
struct RelayedShard {
  std::string key;
  uint64_t checksum = 0;
  int64_t rows = 0, nnz = 0;
  int64_t memory_estimate_bytes = 0;
  bool operator==(const RelayedShard&) const = default;
};
struct RelayGroup {
  std::vector<RelayedShard> shards;  // in the store the ASSIGN names
  bool threads = false;              // its workers as threads in the relay's process, else processes
  // A relay with more shards than this starts relays of its own for them (a tree: no node with
  // more than this many children: RelaysUnder); 0: no limit.
  int64_t fanout = 0;
  std::string listen = "tcp://127.0.0.1:0";  // where the relay binds for its workers
  // Workers on other hosts (nimbus train --relay-workers command): the launch command, with
  // {host} and {args} as the command runtime's, and the host of each shard's worker.
  std::string launch;
  std::vector<std::string> hosts;
  // The address its workers dial it at, with the bound port; empty: the relay's own address
  // toward its master (a relay's relays, on its host, are given their parent's).
  std::string advertise_host;
  bool operator==(const RelayGroup&) const = default;
};
// The relays a node of a tree with `workers` workers below it puts between itself and them: none
// while they are at most `fanout` (or fanout is 0), else min(fanout, ceil(workers / fanout)),
// so that no node has more than `fanout` children and the leaves' relays have about `fanout`
// workers each. The runtime cuts its trees so, and the simulator its model of them.
int64_t RelaysUnder(int64_t workers, int64_t fanout);

struct WorkerReady {
  int worker = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t nnz = 0;
  // sum over the shard's rows of loss''(0) ||a_r||^2 (the intercept counts as a feature 1):
  // N times the trace of the shard's share of the loss Hessian at x = 0.
  double curvature_trace = 0;
  double load_seconds = 0;
  // Cold start, on the wall clock (0 where it does not apply, as in-process): when the
  // master launched the worker, when its process began, when it said HELLO and when it was
  // ready. Remote clocks are corrected by the offset measured at HELLO.
  double invoke_wall = 0;
  double process_start_wall = 0;
  double hello_wall = 0;
  double ready_wall = 0;
  uint64_t invocation = 0;
  // General-form consensus: the model coordinates this worker's shard touches (ascending,
  // the intercept last as index cols); its x_i, u_i and w_i live on these alone, and ROUND
  // and REPLY carry only them. Null in the dense form, where every worker holds all of z.
  std::shared_ptr<const std::vector<uint32_t>> support;
};

// z restricted to a worker's support: (z[support[0]], z[support[1]], ...).
SharedVector Gather(std::span<const double> z, const std::vector<uint32_t>& support);

// The point of a Newton product as it goes to one worker: left out when the worker's current
// invocation evaluated it last (a worker always holds that point: worker/shard_derivatives.h),
// else gathered onto the worker's support (null: the dense form). Every runtime with a wire
// sends it so.
SharedVector PointFor(const RoundRequest& request, int64_t last_evaluated, const std::vector<uint32_t>* support);

}  // namespace nimbus
