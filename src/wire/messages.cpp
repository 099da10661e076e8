#include "nimbus/wire/messages.h"

#include <algorithm>

namespace nimbus {

SharedVector::SharedVector(std::vector<double> values)
    : SharedVector(std::make_shared<const std::vector<double>>(std::move(values))) {}

SharedVector::SharedVector(std::shared_ptr<const std::vector<double>> values) {
  if (values == nullptr) return;
  data_ = values->data();
  size_ = values->size();
  owner_ = std::move(values);
}

SharedVector SharedVector::View(std::shared_ptr<const void> owner, const double* data, std::size_t size) {
  SharedVector vector;
  vector.owner_ = std::move(owner);
  vector.data_ = data;
  vector.size_ = size;
  return vector;
}

bool operator==(const SharedVector& a, const SharedVector& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

const char* ReplyStatusName(ReplyStatus status) {
  switch (status) {
    case ReplyStatus::kOk: return "ok";
    case ReplyStatus::kFailed: return "failed";
    case ReplyStatus::kTimedOut: return "timed out";
  }
  return "unknown";
}

SharedVector Gather(std::span<const double> z, const std::vector<uint32_t>& support) {
  std::vector<double> local(support.size());
  for (std::size_t k = 0; k < support.size(); ++k) local[k] = z[support[k]];
  return SharedVector(std::move(local));
}

SharedVector PointFor(const RoundRequest& request, int64_t last_evaluated, const std::vector<uint32_t>* support) {
  if (request.point.empty() || request.point_round == last_evaluated) return {};
  if (support == nullptr || request.point.size() == support->size()) return request.point;
  return Gather(request.point, *support);
}


int64_t RelaysUnder(int64_t workers, int64_t fanout) {
  if (fanout <= 0 || workers <= fanout) return 0;
  return std::min(fanout, (workers + fanout - 1) / fanout);
}

}  // namespace nimbus
