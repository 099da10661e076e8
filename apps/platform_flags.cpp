// `nimbus simulate`'s platform: Lambda's figures or this machine's (the profile's), each
// overridable by a flag.
#include "platform_flags.h"

namespace nimbus::cli {

void AddPlatformOptions(ArgParser& parser, PlatformFlags* f) {
  const Platform lambda = Platform::Lambda();
  f->cores = lambda.cores;
  f->compute_speed = lambda.compute_speed;
  f->latency_ms = lambda.latency_seconds * 1e3;
  f->master_gbps = lambda.master_bandwidth * 8 / 1e9;
  f->worker_mbps = lambda.worker_bandwidth * 8 / 1e6;
  f->launch_ms = lambda.launch_seconds * 1e3;
  f->cold_start_ms = lambda.cold_start_median * 1e3;
  f->cold_start_sigma = lambda.cold_start_sigma;
  f->storage_mbs = lambda.storage_bandwidth / 1e6;
  f->storage_latency_ms = lambda.storage_latency_seconds * 1e3;
  f->jitter = lambda.jitter_sigma;
  f->straggler_probability = lambda.straggler_probability;
  f->straggler_slowdown = lambda.straggler_slowdown;
  parser.AddString("platform", "NAME", "lambda (functions and an EC2 master) or local (processes on this machine;\n"
                   "                            the figures below then default to the profile's)", &f->name);
  parser.AddInt("cores", "N", "CPUs the workers share; 0: one each", &f->cores);
  parser.AddDouble("compute-speed", "X", "a worker's speed over one core of the profiled machine", &f->compute_speed);
  parser.AddDouble("latency-ms", "MS", "one message, one way", &f->latency_ms);
  parser.AddDouble("master-gbps", "GBIT/S", "the master's link, each direction", &f->master_gbps);
  parser.AddDouble("worker-mbps", "MBIT/S", "one worker's link", &f->worker_mbps);
  parser.AddDouble("relay-host-gbps", "GBIT/S", "--relay-fanout: a relay host's link, each direction (default: the\n"
                   "                            master's)", &f->relay_host_gbps);
  parser.AddDouble("launch-ms", "MS", "the master's time to launch one worker", &f->launch_ms);
  parser.AddDouble("cold-start-ms", "MS", "median launch-to-running time (lognormal)", &f->cold_start_ms);
  parser.AddDouble("cold-start-sigma", "S", "sigma of the cold start's log", &f->cold_start_sigma);
  parser.AddDouble("storage-mbs", "MB/S", "a worker's shard load bandwidth", &f->storage_mbs);
  parser.AddDouble("storage-latency-ms", "MS", "before a shard's first byte", &f->storage_latency_ms);
  parser.AddDouble("jitter", "S", "sigma of the lognormal noise on a worker's round", &f->jitter);
  parser.AddDouble("straggler-probability", "P", "chance per worker and round of a straggling round",
                   &f->straggler_probability);
  parser.AddDouble("straggler-slowdown", "X", "how many times slower a straggling round is", &f->straggler_slowdown);
  parser.AddDouble("relay-read-ns-per-byte", "NS", "shared cores: a relay on the same machine forwards every message\n"
                   "                            on one thread (as bench/link.sh's proxy does), at this CPU per byte\n"
                   "                            in reading it (the delay starts after) ...", &f->relay_read_ns_per_byte);
  parser.AddDouble("relay-write-ns-per-byte", "NS", "... and at this CPU per byte in writing it on, once due",
                   &f->relay_write_ns_per_byte);
}

Result<Platform> MakePlatform(const ArgParser& parser, const PlatformFlags& f, const Profile& profile) {
  Platform platform;
  if (f.name == "lambda") {
    platform = Platform::Lambda();
  } else if (f.name == "local") {
    platform = Platform::Local(profile);
  } else {
    return InvalidArgument("--platform: '" + f.name + "' is not one of lambda, local");
  }
  if (parser.Given("cores")) platform.cores = static_cast<int>(f.cores);
  if (parser.Given("compute-speed")) platform.compute_speed = f.compute_speed;
  if (parser.Given("latency-ms")) platform.latency_seconds = f.latency_ms / 1e3;
  if (parser.Given("master-gbps")) platform.master_bandwidth = f.master_gbps * 1e9 / 8;
  if (parser.Given("worker-mbps")) platform.worker_bandwidth = f.worker_mbps * 1e6 / 8;
  if (parser.Given("relay-host-gbps")) platform.relay_bandwidth = f.relay_host_gbps * 1e9 / 8;
  if (parser.Given("launch-ms")) platform.launch_seconds = f.launch_ms / 1e3;
  if (parser.Given("cold-start-ms")) platform.cold_start_median = f.cold_start_ms / 1e3;
  if (parser.Given("cold-start-sigma")) platform.cold_start_sigma = f.cold_start_sigma;
  if (parser.Given("storage-mbs")) platform.storage_bandwidth = f.storage_mbs * 1e6;
  if (parser.Given("storage-latency-ms")) platform.storage_latency_seconds = f.storage_latency_ms / 1e3;
  if (parser.Given("jitter")) platform.jitter_sigma = f.jitter;
  if (parser.Given("straggler-probability")) platform.straggler_probability = f.straggler_probability;
  if (parser.Given("straggler-slowdown")) platform.straggler_slowdown = f.straggler_slowdown;
  if (parser.Given("relay-read-ns-per-byte")) platform.relay_read_seconds_per_byte = f.relay_read_ns_per_byte / 1e9;
  if (parser.Given("relay-write-ns-per-byte")) platform.relay_write_seconds_per_byte = f.relay_write_ns_per_byte / 1e9;
  NIMBUS_RETURN_IF_ERROR(platform.Validate().WithContext("--platform " + f.name));
  return platform;
}

}  // namespace nimbus::cli
