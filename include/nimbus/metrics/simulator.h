// A discrete-event simulator of distributed runs: K workers in a star around one master,
// round by round, for each distributed algorithm: consensus ADMM, whose rounds are its
// iterations (more of them as K grows); distributed Newton, whose rounds are its evaluations
// and Hessian-vector products (as many at every K: the sums over the shards are the same); and
// the column method (columns/column_descent.h), a block of columns a worker, whose rounds are
// its iterations (more of them as K grows, as the blocks' steps overlap more) and whose
// messages follow the rows: every row's two derivatives out, each block's change of the
// margins back. It is driven by
//   - a Profile measured on this machine (`nimbus simulate calibrate`): which algorithm, how
//     many rounds the problem takes at each K, a round's work (data passes, x-update steps)
//     and what its messages carry (model-sized vectors per request and per reply), what a
//     round costs per nonzero and per coordinate on a worker and on the master, and what
//     messages and process starts cost here;
//   - a Platform: where the workers run (this machine's cores, or Lambda functions) and the
//     network between them and the master.
// It predicts what `nimbus scale` would measure at K and d beyond this machine: time to
// solution, speedup, efficiency, the share of communication, and dollars per solve.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nimbus/choices.h"
#include "nimbus/core/status.h"
#include "nimbus/metrics/cost.h"

namespace nimbus {

// One K of the calibration: what a solve to the tolerance took with the threads runtime, the
// workers computing one at a time so that each round's work on a worker is timed on its own.
struct ProfilePoint {
  int workers = 0;
  int iterations = 0;           // ADMM iterations, or Newton steps
  int rounds = 0;               // rounds run on the workers (ADMM: iterations + 1)
  double compute_seconds = 0;   // per worker and round, mean
  double imbalance = 1;         // the slowest worker's compute over the solve, over the mean
  double data_passes = 0;       // per worker and round: passes over the shard's nonzeros
  double local_iterations = 0;  // per worker and round: the x-update's Newton (or L-BFGS) steps
  double cg_iterations = 0;     // per worker and round (a Newton master's workers make none)
  double master_seconds = 0;    // per round: the master's work between a round's last reply
                                // and the next round (sums, z-update or CG step, stop test)
  // What a round's messages carry, in model-sized vectors (d doubles each), the mean over the
  // solve's messages. ADMM: z out, w back (1 and 1). Newton: the point to evaluate or the
  // direction of a product out, plus the product's point where the worker did not evaluate it
  // last (after a rejected trial); back the gradient and the Hessian's diagonal (2) or H v (1).
  // A vector counts its bytes on the wire over d doubles': half as float32 (--message-precision
  // float32), its nonzeros' share when it goes as them (mostly zeros: wire/codec.h).
  // The column method: its block's weights (a worker holds 1/K of the model) out and its step
  // back.
  double request_vectors = 1;
  double reply_vectors = 1;
  // Beyond those, in row-sized vectors (N doubles each): the column method's messages carry the
  // rows' derivatives out (2) and the block's change of the margins back (1). 0 for ADMM and
  // Newton, whose messages follow the model.
  double request_row_vectors = 0;
  double reply_row_vectors = 0;
  int cg_steps = 0;             // Newton: the master's CG steps in the solve (0 for ADMM)
  // The coordinates a worker holds over the model's: in the general form, the mean over the
  // workers of their shard's support over d (+ 1 for an intercept); 1 in the dense form. A
  // worker's vectors, its messages and the master's sum of its reply are this long.
  double local_fraction = 1;
  // The rounds' span (dispatch to the last reply) when all K workers compute at once, over the
  // span that perfect processor sharing of the cores would give their one-at-a-time times:
  // what sharing the machine's cores, memory and caches costs (local platforms only).
  double shared_slowdown = 1;
  // How far the calibration's one-at-a-time solves of this K disagreed: the slowest's compute
  // per worker and round over the fastest's (which the point keeps), minus 1; 0 from one solve.
  // This machine's speed drifts (other tenants of its host): a prediction is good to about this.
  double spread = 0;
};

struct Profile {
  std::string machine;  // the CPU the profile was measured on
  std::string date;
  int cores = 1;
  // The algorithm measured: ADMM, Newton or the column method. A profile written before Newton
  // existed has no such field and is ADMM's.
  Algorithm algorithm = Algorithm::kAdmm;
  // The calibration problem.
  std::string data;
  int64_t rows = 0, cols = 0, nnz = 0;
  // The model's weights per feature: a multiclass problem's classes (a ROUND, a REPLY and the
  // master's vectors carry blocks x d of them); 1 otherwise, and in profiles written before it.
  int64_t blocks = 1;
  std::vector<ProfilePoint> points;  // ascending workers
  // Costs fitted on this machine. With d features the model has D = blocks d coordinates. A
  // worker's round on a shard of nnz_i nonzeros, holding D_i = LocalFraction(nnz_i, d) D
  // coordinates, costs
  //   seconds_per_nnz * passes * nnz_i + CoordinateSeconds(D_i) * (cg + local) * D_i + seconds_per_round
  //     + seconds_per_row * N
  // and the master's round with K replies costs
  //   master_seconds_per_reply_coordinate * K * D_i + master_seconds_per_coordinate * D
  //     + master_seconds_per_reply_row * K * N + master_seconds_per_row * N.
  // The row terms are the column method's (its messages and the master's sums and line search
  // follow the N rows; it holds D_i = D / K, its block); 0 for ADMM and Newton.
  // A coordinate costs more once the model's vectors outgrow the caches: the cost is measured
  // at the calibration's D and at wide_cols, and interpolated in log D between them.
  double seconds_per_nnz = 0;
  double seconds_per_coordinate = 0;
  double seconds_per_coordinate_wide = 0;
  int64_t wide_cols = 0;
  double seconds_per_round = 0;
  double master_seconds_per_reply_coordinate = 0;
  double master_seconds_per_coordinate = 0;
  double seconds_per_row = 0;
  double master_seconds_per_reply_row = 0;
  double master_seconds_per_row = 0;
  // ZeroMQ over 127.0.0.1: a message of s bytes takes message_latency + s / message_bandwidth.
  double message_latency_seconds = 0;
  double message_bandwidth = 0;  // bytes per second
  double process_start_seconds = 0;   // a worker process from launch to its HELLO
  double process_spawn_seconds = 0;   // the master's own cost to spawn one
  double shard_load_bandwidth = 0;    // bytes per second, a worker process loading its shard from local disk
  // A worker process's time between its shard's load and READY (making the worker of the
  // shard in a fresh process: the general form's renumbering, the data term's structures, the
  // pages they fault in), per nonzero of the shard. 0 in profiles written before it.
  double prepare_seconds_per_nnz = 0;

  Status Validate() const;
  bool newton() const { return algorithm == Algorithm::kNewton; }
  bool columns() const { return algorithm == Algorithm::kColumns; }
  // The calibration point at K, interpolated in log K between measured ones. Beyond them the
  // per-round figures stay those of the nearest K; ADMM's iterations follow a least-squares
  // fit a + b log2 K (and rounds = iterations + 1), as do the column method's (its rounds beyond
  // its iterations the nearest K's), while Newton's rounds and steps stay the nearest measured
  // K's (they do not depend on K).
  ProfilePoint At(int workers) const;
  // One worker's round on nnz_i nonzeros of a d-feature problem of `rows` rows (0: the
  // profile's), at the work per round of K.
  double WorkerRoundSeconds(const ProfilePoint& at, double shard_nnz, double features, double rows = 0) const;
  double CoordinateSeconds(double coordinates) const;
  double ModelSize(double features) const { return features * static_cast<double>(blocks); }
  // The share of a d-feature model a worker with nnz_i nonzeros holds. It depends on the
  // shard's nonzeros per coordinate, s = nnz_i / d (uniform columns would give 1 - e^-s): the
  // calibration's points, log-log interpolated in s; beyond them, the trend of the nearest two
  // (a slope between 0 and 1: the support grows no faster than the nonzeros), and never more
  // than 1 or than s (a support holds at most one coordinate per nonzero).
  double LocalFraction(double shard_nnz, double features) const;
  // The coordinates a worker holds at K (at.workers) with nnz_i nonzeros of a d-feature
  // problem: LocalFraction's share of the model, or the column method's block, 1/K of it.
  double LocalSize(const ProfilePoint& at, double shard_nnz, double features) const;

  std::string ToJson() const;
  static Result<Profile> FromJson(const std::string& text, const std::string& origin);
  static Result<Profile> Read(const std::string& path);
  Status Write(const std::string& path) const;  // ToJson, replacing the file whole
};

// Where the workers run and the network between them and the master.
struct Platform {
  std::string name = "lambda";
  int cores = 0;                 // CPUs the workers share (this machine); 0: one CPU each
  int start_cores = 0;           // on shared cores, those their process starts share; 0: cores
  double compute_speed = 1.0;    // a worker's speed over the profiled machine's one core
  double latency_seconds = 0;    // one message, one way
  // A link this fast is no link: 127.0.0.1, or workers that are threads.
  static constexpr double kNoWire = 1e15;
  double master_bandwidth = 0;   // bytes per second through the master's link, each direction
  double worker_bandwidth = 0;   // bytes per second through one worker's link
  // On shared cores (cores > 0), the CPU a message takes at each of its ends, which the
  // workers' compute and the master's work share the cores with: this much per message ...
  double message_cpu_seconds = 0;
  double message_cpu_seconds_per_byte = 0;  // ... and per byte
  // On shared cores: a relay on the same machine that forwards every message on one thread
  // (bench/link.sh's proxy), at this CPU per byte in reading it, which the delay waits for, and
  // in writing it once it is due; 0 and 0: none.
  double relay_read_seconds_per_byte = 0;
  double relay_write_seconds_per_byte = 0;
  // Relays (Scenario::relays) run on hosts of their own, each with a link this fast; 0: the
  // master's.
  double relay_bandwidth = 0;
  double launch_seconds = 0;     // the master's cost to launch one worker (launches are serial)
  double cold_start_median = 0;  // launch to running: lognormal with this median ...
  double cold_start_sigma = 0;   // ... and this sigma of its log
  double storage_latency_seconds = 0;  // before a shard's first byte
  double storage_bandwidth = 0;        // bytes per second of one worker's shard load
  double jitter_sigma = 0;             // a worker's round time: lognormal noise with this sigma
  double straggler_probability = 0;    // and, with this probability per round, ...
  double straggler_slowdown = 1;       // ... this many times slower

  Status Validate() const;
  // Worker processes on this machine, with the costs the profile measured: the workers, the
  // master and their messages share its cores.
  static Platform Local(const Profile& profile);
  // Lambda functions and a master on EC2; the defaults and their sources are in
  // docs/evaluation.md.
  static Platform Lambda();
};

struct Scenario {
  int64_t rows = 0, cols = 0, nnz = 0;  // the problem
  int workers = 1;
  // ADMM iterations or Newton steps at every K; 0: the profile's at this K. Newton runs the
  // profile's rounds per step at this K.
  int iterations = 0;
  uint64_t seed = 1;
  // Relays (runtime/relay.h): the workers in this many groups, each behind a relay that sums
  // their replies; a relay with more than relay_fanout workers has relays of its own (0: no
  // limit). 0 relays: the star. Modelled where every worker has its own CPU (not on shared
  // cores), for ADMM and Newton (the column method's replies are not summed).
  int relays = 0, relay_fanout = 0;
  // The storage reduction instead (LambdaML's ScatterReduce, Jiang et al., SIGMOD 2021): the
  // master puts each round's vector in object storage once, and the workers sum their replies
  // through it, worker j the j-th of K slices of the model, so the master gets one sum. Own
  // CPUs only; not with relays.
  bool storage_reduction = false;
};

struct Prediction {
  int workers = 0;
  int64_t cols = 0;
  int iterations = 0;
  int rounds = 0;
  double setup_seconds = 0;  // launch to the last worker ready
  double cold_start_seconds = 0;  // of that, until the last worker runs (launches and cold starts)
  double load_seconds = 0;        // a worker's shard load
  double prepare_seconds = 0;     // and its preparation, once loaded
  double round_seconds = 0;  // mean
  double solve_seconds = 0;  // all rounds
  double total_seconds = 0;  // setup + solve: the time to solution
  // Shares of the solve: workers computing (the mean worker), the master's work, the time
  // communication adds (1 - the solve's time with free messages over its time), and the rest,
  // waiting for the slowest worker.
  double compute_share = 0, master_share = 0, communication_share = 0, waiting_share = 0;
  double cold_start_share = 0;     // cold_start_seconds over the time to solution
  int64_t bytes_per_round = 0;     // through the master, both ways (the mean round)
  int relay_hosts = 0;             // the relays of the tree, each a host of its own (priced as the master's)
  int64_t storage_requests_per_round = 0;  // the storage reduction's PUTs, GETs and polls
  double dollars = 0;              // per solve, at the given prices
  double gb_seconds = 0;
};

// Processor sharing: job i arrives at arrival[i] needing work[i] CPU-seconds; with n jobs
// running on `cores` CPUs each gets min(1, cores / n) of one. Returns when each job ends.
std::vector<double> ShareCores(const std::vector<double>& arrival, const std::vector<double>& work, int cores);

// The bytes of a shard of `rows` rows and `nnz` nonzeros in the binary format: per row a label
// and an offset, per nonzero an index and a value. The calibration divides a shard's measured
// load time by it, and the simulator multiplies it back.
double ShardBytes(double rows, double nnz);

// The start (launches, cold starts, shard loads), then the profile's rounds at K, each with
// the work per round of that K and messages of the vectors the profile recorded.
Result<Prediction> Simulate(const Profile& profile, const Platform& platform, const Scenario& scenario,
                            const Prices& prices);

}  // namespace nimbus
