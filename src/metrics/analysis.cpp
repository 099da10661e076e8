#include "nimbus/metrics/analysis.h"

#include <algorithm>
#include <cmath>

namespace nimbus {

double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const auto above = std::min(values.size() - 1, below + 1);
  return values[below] + (position - static_cast<double>(below)) * (values[above] - values[below]);
}

std::vector<RoundBreakdown> BreakdownRounds(const Trace& trace) {
  std::vector<RoundBreakdown> rows;
  for (const TraceRound& round : trace.rounds) {
    if (round.workers.empty()) continue;
    RoundBreakdown row;
    row.round = round.round;
    const double wait = std::max(0.0, round.wait_seconds);
    row.master = std::max(0.0, round.master_seconds);
    row.wall = wait + row.master;
    const double k = static_cast<double>(round.workers.size());
    for (const TraceWorkerRound& w : round.workers) {
      // Only the master's clock: dispatch and arrival. A remote worker's clock is corrected
      // by an estimate (the HELLO's delay is in it), and its receive and send timestamps
      // could make the way out and back overlap the compute or outlast the round.
      const double response = std::clamp(w.arrival_wall - round.dispatch, 0.0, wait);
      const double compute = std::clamp(w.compute_seconds, 0.0, response);
      row.compute += compute / k;
      row.communication += (response - compute) / k;
      row.waiting += (wait - response) / k;
      row.slowest_compute = std::max(row.slowest_compute, w.compute_seconds);
    }
    rows.push_back(row);
  }
  return rows;
}

StragglerStats Stragglers(const Trace& trace, double tail) {
  StragglerStats stats;
  std::vector<double> all;
  for (const TraceRound& round : trace.rounds) {
    for (const TraceWorkerRound& w : round.workers) all.push_back(w.arrival_wall - round.dispatch);
  }
  stats.threshold = Quantile(all, 1.0 - tail);
  stats.share_per_worker.assign(static_cast<std::size_t>(std::max(0, trace.workers)), 0.0);
  std::vector<int> counted(stats.share_per_worker.size(), 0);
  int with_straggler = 0;
  for (const TraceRound& round : trace.rounds) {
    if (round.workers.empty()) continue;
    ++stats.rounds;
    bool any = false;
    for (const TraceWorkerRound& w : round.workers) {
      const auto i = static_cast<std::size_t>(w.worker);
      if (i >= counted.size()) continue;
      ++counted[i];
      // Strictly above the threshold, so that equal (e.g. all zero) times make no stragglers.
      if (w.arrival_wall - round.dispatch > stats.threshold) {
        stats.share_per_worker[i] += 1;
        any = true;
      }
    }
    with_straggler += any ? 1 : 0;
  }
  for (std::size_t i = 0; i < counted.size(); ++i) {
    if (counted[i] > 0) stats.share_per_worker[i] /= counted[i];
  }
  stats.rounds_with_straggler = stats.rounds > 0 ? static_cast<double>(with_straggler) / stats.rounds : 0;
  return stats;
}

ColdStarts ColdStartsOf(const Trace& trace) {
  ColdStarts starts;
  for (const TraceShard& shard : trace.shards) {
    starts.worker.push_back(shard.worker);
    starts.load.push_back(shard.load_seconds);
    if (shard.invoke > 0) {
      starts.total.push_back(shard.ready - shard.invoke);
      starts.process_start.push_back(std::max(0.0, shard.process_start - shard.invoke));
      starts.connect.push_back(std::max(0.0, shard.hello - shard.process_start));
    } else {
      // In-process workers start with the master: only the load counts.
      starts.total.push_back(shard.load_seconds);
      starts.process_start.push_back(0);
      starts.connect.push_back(0);
    }
  }
  return starts;
}

}  // namespace nimbus
