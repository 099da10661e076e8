// What the network suites share: one generated problem and its fault-free objective, and a
// `nimbus train` on worker processes whose streams all pass through nimbus-fault-proxy
// (tests/support/fault_proxy.cpp), with the proxy's report of what it did.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "e2e/e2e_support.h"

namespace nimbus::testing {

using Json = nlohmann::json;

// The train command's --heartbeat and --round-timeout-floor.
struct LinkTimeouts {
  double heartbeat_seconds = 0.2;
  double round_timeout_floor_seconds = 2;
};

// 3,000 x 2,000 generated rows of 20 nonzeros, l1 1e-4, 3 workers: about 70 Newton rounds,
// each moving a 16 KB vector to every worker and back. (The data's origin does not matter
// here: these suites test the network, not the solver's speed.)
class NetworkProblem {
 public:
  static const NetworkProblem& Get();  // made once per test program
  const std::string& data() const { return data_; }
  double objective() const { return objective_; }  // on threads: no network, no faults
  // `nimbus train` on this problem (under `timeout`, so that a run ends by itself): the data,
  // l1, 3 workers, fast failure detection (heartbeat 0.2 s, round deadline 2 s, unless
  // `timeouts` says otherwise), summary JSON.
  std::vector<std::string> TrainCommand(const std::string& summary_json, const LinkTimeouts& timeouts = {}) const;

 private:
  NetworkProblem();
  TempDir dir_;
  std::string data_;
  double objective_ = 0;
};

// A master ROUND frame is at least this large (the 2,000-entry vector, less what a worker's
// support leaves out); heartbeats and handshakes are far smaller.
inline constexpr int kRoundBytes = 4096;

// Link caps for NetworkNamespaces, in Mbit/s each way (0: none).
struct LinkRates {
  int master_mbit = 0;  // the master's and every relay's
  int worker_mbit = 0;
};

// The namespaces of tests/support/netns.sh for one test: a master (10.77.0.1), `workers`
// workers (10.77.0.2, ...) whose nftables drop inbound connections and `relays` relays
// (10.77.0.201, ...), each linked to a switch; removed on destruction.
class NetworkNamespaces {
 public:
  // Empty where namespaces can be made; else why not (not root, no nft, ...).
  static const std::string& Unavailable();
  explicit NetworkNamespaces(int workers, int relays = 0, const LinkRates& rates = {});
  ~NetworkNamespaces();
  NetworkNamespaces(const NetworkNamespaces&) = delete;
  NetworkNamespaces& operator=(const NetworkNamespaces&) = delete;
  std::string master() const { return prefix_ + "-m"; }
  std::string worker(int k) const { return prefix_ + "-w" + std::to_string(k); }  // k = 1 .. workers
  std::string relay(int r) const { return prefix_ + "-r" + std::to_string(r); }   // r = 1 .. relays
  // `command` run inside a namespace.
  static std::vector<std::string> In(const std::string& ns, std::vector<std::string> command);
  // `nimbus train` arguments that start the workers in their namespaces (the command runtime),
  // and with relays, the relays in theirs, each starting its workers (--relay-workers command).
  std::vector<std::string> CommandRuntime() const;

 private:
  std::string prefix_;
  int workers_;
  int relays_;
};

// Skips the test, saying why, where namespaces cannot be made.
#define NIMBUS_SKIP_WITHOUT_NAMESPACES()                                                         \
  if (const std::string& why = NetworkNamespaces::Unavailable(); !why.empty()) {                  \
    GTEST_SKIP() << "network namespaces cannot be made here: " << why;                           \
  }

struct ProxiedRun {
  CommandResult result;
  Json summary;              // the run's --summary-json
  std::vector<Json> events;  // the proxy's report, one object per event
  std::vector<Json> chunks;  // the proxy's --chunks log, one object per read
  int Count(const std::string& event, const std::string& why_prefix = "") const;
};

// The train command with `streams` (nimbus-fault-proxy --stream specs) between its workers and
// its master: worker processes and master on 127.0.0.1; or, given `namespaces`, the master and
// the proxy in the master's namespace and each worker in its own, dialing the proxy at
// 10.77.0.1.
ProxiedRun RunThroughProxy(const std::vector<std::string>& streams, uint64_t seed,
                           const NetworkNamespaces* namespaces = nullptr, const LinkTimeouts& timeouts = {});

// A seeded fault schedule for the first six streams (three workers' links and heartbeat
// streams): each gets a delay, maybe jitter and a rate cap, and about half of them one
// disruption (a reset at a round or byte, a blackhole at a round or after a time). Streams of
// replacements, numbered after, get the "*" delay only.
std::vector<std::string> Schedule(uint64_t seed);

// The run ended at the fault-free objective (within 1e-8, relative).
void ExpectFaultFreeObjective(const ProxiedRun& run, const std::string& context);

}  // namespace nimbus::testing
