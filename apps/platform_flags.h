// The flags of `nimbus simulate` that describe the platform it predicts runs on.
#pragma once

#include <string>

#include "cli_common.h"

namespace nimbus::cli {

// --latency-ms and friends: a platform's figures, each overriding the default when given.
struct PlatformFlags {
  std::string name = "lambda";
  int64_t cores = 0;
  double compute_speed = 0, latency_ms = 0, master_gbps = 0, worker_mbps = 0, launch_ms = 0, cold_start_ms = 0,
         cold_start_sigma = 0, storage_mbs = 0, storage_latency_ms = 0, jitter = 0, straggler_probability = 0,
         straggler_slowdown = 0;
  double relay_read_ns_per_byte = 0, relay_write_ns_per_byte = 0;
  double relay_host_gbps = 0;
};

// --platform and the figures; the help shows Lambda's (--platform local takes the profile's).
void AddPlatformOptions(ArgParser& parser, PlatformFlags* flags);
// The platform named, with the figures given; checked.
Result<Platform> MakePlatform(const ArgParser& parser, const PlatformFlags& flags, const Profile& profile);

}  // namespace nimbus::cli
