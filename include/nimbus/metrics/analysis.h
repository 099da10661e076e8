// Where a run's time went, from its trace.
#pragma once

#include <vector>

#include "nimbus/metrics/trace_reader.h"

namespace nimbus {

// One round split into what the average worker did while the master waited for the last:
//   wall          = dispatch to the last reply, plus the master's own work
//   master        = z-update, stop test and bookkeeping
//   compute       = the workers' compute time (mean over workers)
//   communication = the ROUND's way out (dispatch to receive) and the REPLY's way back (send
//                   to arrival), mean over workers
//   waiting       = the rest: the average worker waiting for the slowest
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
