#include "nimbus/metrics/cost.h"

#include <cmath>

namespace nimbus {

Status Prices::Validate() const {
  for (const double price : {lambda_gb_second, lambda_request, s3_get, s3_put, master_hour}) {
    if (!(price >= 0) || !std::isfinite(price)) return InvalidArgument("prices: must be finite numbers >= 0");
  }
  if (!(function_memory_gb > 0)) return InvalidArgument("function_memory_gb: must be positive");
  return Status::Ok();
}

Cost EstimateCost(const Prices& prices, int64_t invocations, double function_seconds, int64_t s3_requests,
                  double master_seconds) {
  Cost cost;
  cost.function_gb_seconds = function_seconds * prices.function_memory_gb;
  cost.requests = invocations;
  cost.s3_requests = s3_requests;
  cost.master_hours = master_seconds / 3600.0;
  cost.lambda_dollars =
      cost.function_gb_seconds * prices.lambda_gb_second + static_cast<double>(invocations) * prices.lambda_request;
  cost.s3_dollars = static_cast<double>(s3_requests) * prices.s3_get;
  cost.master_dollars = cost.master_hours * prices.master_hour;
  return cost;
}

int64_t ShardLoadRequests(int64_t bytes, int64_t part_bytes) {
  const int64_t gets = bytes <= part_bytes ? 1 : (bytes + part_bytes - 1) / part_bytes;
  return 1 + gets;
}

}  // namespace nimbus
