// A discrete-event simulator of consensus ADMM runs: K workers in a star around one master,
// round by round, driven by
//   - a Profile measured on this machine (`nimbus simulate calibrate`): what an x-update costs
//     per nonzero and per coordinate, what the master costs per coordinate, how many ADMM
//     iterations the problem takes at each K, and what messages and process starts cost here;
//   - a Platform: where the workers run (this machine's cores, or Lambda functions) and the
//     network between them and the master.
// It predicts what `nimbus scale` would measure at K and d beyond this machine: time to
// solution, speedup, efficiency, the share of communication, and dollars per solve.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nimbus/core/status.h"
#include "nimbus/metrics/cost.h"

namespace nimbus {

// One K of the calibration: what a solve to the tolerance took with the threads runtime, the
// workers computing one at a time so that each x-update's time is its own.
struct ProfilePoint {
  int workers = 0;
  int iterations = 0;
  int rounds = 0;
  double compute_seconds = 0;   // per worker and round, mean
  double imbalance = 1;         // per round, the slowest worker's compute over the mean, averaged
  double data_passes = 0;       // per worker and round: passes over the shard's nonzeros
  double local_iterations = 0;  // per worker and round: Newton (or L-BFGS) steps
  double cg_iterations = 0;     // per worker and round
  double master_seconds = 0;    // per round: the sum of the replies, z-update and stop test
  // The rounds' span (dispatch to the last reply) when all K workers compute at once, over the
  // span that perfect processor sharing of the cores would give their one-at-a-time times:
  // what sharing the machine's cores, memory and caches costs (local platforms only).
  double shared_slowdown = 1;
};

struct Profile {
  std::string machine;  // the CPU the profile was measured on
  std::string date;
  int cores = 1;
  // The calibration problem.
  std::string data;
  int64_t rows = 0, cols = 0, nnz = 0;
  std::vector<ProfilePoint> points;  // ascending workers
  // Costs fitted on this machine. A worker's round on a shard of nnz_i nonzeros costs
  //   seconds_per_nnz * passes * nnz_i + CoordinateSeconds(d) * (cg + local) * d + seconds_per_round
  // and the master's round with K replies costs
  //   master_seconds_per_reply_coordinate * K * d + master_seconds_per_coordinate * d.
  // A coordinate costs more once the model's vectors outgrow the caches: the cost is measured
  // at the calibration's d (cols) and at wide_cols, and interpolated in log d between them.
  double seconds_per_nnz = 0;
  double seconds_per_coordinate = 0;
  double seconds_per_coordinate_wide = 0;
  int64_t wide_cols = 0;
  double seconds_per_round = 0;
  double master_seconds_per_reply_coordinate = 0;
  double master_seconds_per_coordinate = 0;
  // ZeroMQ over 127.0.0.1: a message of s bytes takes message_latency + s / message_bandwidth.
  double message_latency_seconds = 0;
  double message_bandwidth = 0;  // bytes per second
  double process_start_seconds = 0;   // a worker process from spawn to running
  double process_spawn_seconds = 0;   // the master's own cost to spawn one
  double shard_load_bandwidth = 0;    // bytes per second, loading a shard from local disk

  Status Validate() const;
  // The calibration point at K, interpolated in log K between measured ones; beyond them,
  // iterations follow a least-squares fit a + b log2 K and the per-round figures stay.
  ProfilePoint At(int workers) const;
  // One worker's round on nnz_i nonzeros of a d-coordinate model, at the work per round of K.
  double WorkerRoundSeconds(const ProfilePoint& at, double shard_nnz, double model_size) const;
  double MasterRoundSeconds(int workers, double model_size) const;
  double CoordinateSeconds(double model_size) const;

  std::string ToJson() const;
  static Result<Profile> FromJson(const std::string& text, const std::string& origin);
  static Result<Profile> Read(const std::string& path);
};

// Where the workers run and the network between them and the master.
struct Platform {
  std::string name = "lambda";
  int cores = 0;                 // CPUs the workers share (this machine); 0: one CPU each
  double compute_speed = 1.0;    // a worker's speed over the profiled machine's one core
  double latency_seconds = 0;    // one message, one way
  double master_bandwidth = 0;   // bytes per second through the master's link, each direction
  double worker_bandwidth = 0;   // bytes per second through one worker's link
  double launch_seconds = 0;     // the master's cost to launch one worker (launches are serial)
  double cold_start_median = 0;  // launch to running: lognormal with this median ...
  double cold_start_sigma = 0;   // ... and this sigma of its log
  double storage_latency_seconds = 0;  // before a shard's first byte
  double storage_bandwidth = 0;        // bytes per second of one worker's shard load
  double jitter_sigma = 0;             // a worker's round time: lognormal noise with this sigma
  double straggler_probability = 0;    // and, with this probability per round, ...
  double straggler_slowdown = 1;       // ... this many times slower

  Status Validate() const;
  // Worker processes on this machine, with the costs the profile measured.
  static Platform Local(const Profile& profile);
  // Lambda functions and a master on EC2; the defaults and their sources are in
  // docs/evaluation.md.
  static Platform Lambda();
};

struct Scenario {
  int64_t rows = 0, cols = 0, nnz = 0;  // the problem
  int workers = 1;
  int iterations = 0;  // 0: the profile's at this K
  uint64_t seed = 1;
};

struct Prediction {
  int workers = 0;
  int64_t cols = 0;
  int iterations = 0;
  double setup_seconds = 0;  // launch to the last worker ready
  double cold_start_seconds = 0;  // of that, until the last worker runs (launches and cold starts)
  double load_seconds = 0;        // a worker's shard load
  double round_seconds = 0;  // mean
  double solve_seconds = 0;  // all rounds
  double total_seconds = 0;  // setup + solve: the time to solution
  // Shares of the solve: workers computing (the mean worker), the master's work, the time
  // communication adds (1 - the solve's time with free messages over its time), and the rest,
  // waiting for the slowest worker.
  double compute_share = 0, master_share = 0, communication_share = 0, waiting_share = 0;
  double cold_start_share = 0;     // cold_start_seconds over the time to solution
  int64_t bytes_per_round = 0;     // through the master, both ways
  double dollars = 0;              // per solve, at the given prices
  double gb_seconds = 0;
};

// Processor sharing: job i arrives at arrival[i] needing work[i] CPU-seconds; with n jobs
// running on `cores` CPUs each gets min(1, cores / n) of one. Returns when each job ends.
std::vector<double> ShareCores(const std::vector<double>& arrival, const std::vector<double>& work, int cores);

Result<Prediction> Simulate(const Profile& profile, const Platform& platform, const Scenario& scenario,
                            const Prices& prices);

}  // namespace nimbus
