// Faults on purpose, for tests and demos of the fault tolerance: a worker that crashes, or
// that answers late. The master hands them to its workers in ASSIGN (as EncodeFaults text, so
// the wire knows nothing of them). Decisions are drawn from (seed, worker, invocation, round), so a run
// with the same seed meets the same faults.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "nimbus/core/status.h"

namespace nimbus {

struct FaultInjection {
  double crash_probability = 0;  // per round: the worker dies abruptly before replying
  double delay_ms = 0;           // the worker sleeps this long before replying ...
  double delay_probability = 1;  // ... with this probability per round
  int delay_worker = -1;         // only this worker is delayed (-1: every worker)
  int crash_worker = -1;         // only this worker crashes (-1: every worker)
  int64_t crash_round = -1;      // crash in exactly this round (with crash_worker), ignoring the probability
  int slow_worker = -1;          // this worker takes slow_factor times as long for every round
  double slow_factor = 1;
  uint64_t seed = 1;

  bool active() const { return crash_probability > 0 || crash_round >= 0 || delay_ms > 0 || slow_factor > 1; }
  // Crash in this round of this worker's invocation?
  bool Crashes(int worker, uint64_t invocation, int64_t round) const;
  // Seconds to sleep before replying in this round.
  double DelaySeconds(int worker, uint64_t invocation, int64_t round) const;

  Status Validate() const;
};

// As ASSIGN carries them to a worker: the fields as text ("" for none), and back. Decoding
// refuses anything that is not what EncodeFaults writes.
std::string EncodeFaults(const FaultInjection& faults);
Result<FaultInjection> DecodeFaults(std::string_view text);

// Parses "MS[:P][@WORKER]" (--inject-delay) into delay_ms, delay_probability, delay_worker.
Status ParseDelaySpec(const std::string& text, FaultInjection* faults);
// Parses "P[@WORKER]" or "@WORKER:ROUND" (--inject-crash) into the crash fields.
Status ParseCrashSpec(const std::string& text, FaultInjection* faults);
// Parses "FACTOR@WORKER" (--inject-slow) into slow_factor and slow_worker.
Status ParseSlowSpec(const std::string& text, FaultInjection* faults);

}  // namespace nimbus
