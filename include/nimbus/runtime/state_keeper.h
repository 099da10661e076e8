// State kept outside the workers. The master keeps, for every worker, the last two rounds it
// was sent (z, rho, alpha) and its replies w = xh + u to them. From these it rebuilds the
// state the worker held before its next round, for a replacement that must carry on:
//
//   u  = (w_prev - z_last) * rho_prev / rho_last    (the dual after round `last`)
//   xh = w_last - u                                  (w_last = xh + u)
//   x  = (xh - (1 - alpha) z_last) / alpha
//
// (w_prev answers the round before `last`; with a single reply, u = 0.) The replacement then
// runs the next round as the original would have, up to rounding in the subtraction.
//
// With many workers and features the replies are spilled to a local directory instead of
// being held in memory.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nimbus/core/status.h"
#include "nimbus/wire/messages.h"

namespace nimbus {

class StateKeeper {
 public:
  // Keeps replies in memory while 2 * workers * model_size doubles (an upper bound in the
  // general form) fit in
  // `memory_limit_bytes`, and in files under `spill_directory` beyond that.
  StateKeeper(int workers, std::size_t model_size, int64_t memory_limit_bytes, std::string spill_directory);
  ~StateKeeper();

  // A round was answered by `worker`: `request` is what it was sent, `w` its reply (in the
  // general form both on the worker's support).
  Status Record(int worker, const RoundRequest& request, const SharedVector& w);
  // What a replacement of `worker` needs before its next round; null if it has answered no
  // round yet (it starts from zero).
  Result<std::shared_ptr<const ResumeState>> ResumeFor(int worker) const;

  bool spilling() const { return spill_; }
  int64_t bytes_in_memory() const;

 private:
  struct Answer {
    SharedVector z;
    double rho = 0;
    double alpha = 1;
    SharedVector w;  // the reply as it arrived (no copy); empty when spilled
  };
  struct Kept {
    std::optional<Answer> last;
    std::optional<Answer> previous;
    int64_t answers = 0;
  };
  std::string SpillPath(int worker, int64_t answer) const;
  Result<SharedVector> ReplyOf(int worker, const Answer& answer, int64_t index) const;

  bool spill_;
  std::string spill_directory_;
  std::vector<Kept> kept_;
};

}  // namespace nimbus
