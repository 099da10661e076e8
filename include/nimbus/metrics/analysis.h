// Where a run's time went, from its trace.
#pragma once

#include <vector>

#include "nimbus/metrics/trace_reader.h"

namespace nimbus {

// One round split into parts that add up to it, each the mean over the round's workers of
// what that worker's share of the round was (master clock only: dispatch and arrival):
//   wall          = dispatch to the last reply (wait), plus the master's own work after it
//   master        = z-update, stop test and bookkeeping after the last reply
//   compute       = the worker's compute time (its whole round on the worker)
//   communication = the rest of dispatch to the arrival of its reply: the ROUND's way out, the
//                   REPLY's way back, and their packing and unpacking
//   waiting       = the arrival of its reply to the last one: waiting for the slowest
// so that wall = master + compute + communication + waiting in every round.
struct RoundBreakdown {
  int64_t round = 0;
  double wall = 0, master = 0, compute = 0, communication = 0, waiting = 0;
  double slowest_compute = 0;
};
std::vector<RoundBreakdown> BreakdownRounds(const Trace& trace);

// Stragglers as the paper counts them: a worker's response time in a round is dispatch to the
// arrival of its reply; the slowest 10% of all (worker, round) response times are the tail.
struct StragglerStats {
  double threshold = 0;                 // the 90th percentile of response times
  std::vector<double> share_per_worker;  // of each worker's rounds, the share in the tail
  double rounds_with_straggler = 0;      // the share of rounds with at least one worker in it
  int rounds = 0;
};
StragglerStats Stragglers(const Trace& trace, double tail = 0.1);

// Cold starts: launch to ready, and its parts, one entry per worker start (replacements too).
struct ColdStarts {
  std::vector<int> worker;
  std::vector<double> total;          // invoke to ready
  std::vector<double> process_start;  // invoke to the process running
  std::vector<double> connect;        // process running to HELLO
  std::vector<double> load;           // the shard load
};
ColdStarts ColdStartsOf(const Trace& trace);

// The q-quantile (0..1) of values, by linear interpolation; 0 for none.
double Quantile(std::vector<double> values, double q);

}  // namespace nimbus
