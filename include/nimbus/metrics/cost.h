// What a solve costs in dollars, at Lambda's prices (the paper's setting): function
// GB-seconds and requests, S3 requests, and the master's machine.
#pragma once

#include <cstdint>
#include <string>

#include "nimbus/core/status.h"

namespace nimbus {

// List prices; every one is an option. The defaults are AWS's published prices for us-east-1
// (x86 Lambda functions, S3 Standard, an on-demand c5.large for the master) as of 2024; check
// the current ones before relying on a figure.
struct Prices {
  double lambda_gb_second = 0.0000166667;
  double lambda_request = 0.20 / 1e6;
  double s3_get = 0.0004 / 1e3;
  double s3_put = 0.005 / 1e3;
  double master_hour = 0.085;
  double function_memory_gb = 1.769;  // the memory the function is given (1769 MB = 1 vCPU)
  static constexpr const char* kAsOf = "AWS list prices, us-east-1, 2024";

  Status Validate() const;
};

struct Cost {
  double function_gb_seconds = 0;
  int64_t requests = 0;     // function invocations
  int64_t s3_requests = 0;  // GETs and HEADs for shards and the manifest
  double master_hours = 0;
  double lambda_dollars = 0, s3_dollars = 0, master_dollars = 0;
  double total_dollars() const { return lambda_dollars + s3_dollars + master_dollars; }
};

// invocations: worker starts (K plus replacements); function_seconds: their summed duration;
// master_seconds: the master's wall time.
Cost EstimateCost(const Prices& prices, int64_t invocations, double function_seconds, int64_t s3_requests,
                  double master_seconds);

// S3 requests to load one shard of `bytes`: a HEAD, then one GET per `part_bytes` range.
int64_t ShardLoadRequests(int64_t bytes, int64_t part_bytes = int64_t{8} << 20);

}  // namespace nimbus
