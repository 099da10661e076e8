// The body of every remote worker (`nimbus worker`, the Lambda bootstrap): connect out to
// the master, say HELLO, take the ASSIGN, load the shard (the cold start), say READY, serve
// rounds, and leave on BYE, on a lost master, or when the lifetime budget runs out (after
// finishing its round, with a BYE that says so, so the master can hand over).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "nimbus/transport/transport.h"
#include "nimbus/wire/codec.h"
#include "nimbus/worker/shard_worker.h"
#include "nimbus/worker/text_part.h"

namespace nimbus {

struct WorkerProcessOptions {
  std::string connect;          // the master's address, tcp://HOST:PORT
  uint64_t run_id = 0;
  int worker = 0;
  uint64_t invocation = 1;
  ClientCredentials credentials;  // the run's keys; empty only for an --insecure master
  double max_lifetime = 0;      // seconds from process start; 0: none
  double process_start_wall = 0;  // when the process began (wall clock)
  // Before the ASSIGN says otherwise: how long to wait for the master at all.
  double connect_timeout_seconds = 60;
  // The process that started this one (a relay), which it must not outlive; 0: none.
  int64_t parent_pid = 0;
  // The rows of a held part (text_part.h), given by the program that runs this worker in its own
  // process (a Dask worker's partition): the part the ASSIGN names must be these.
  std::shared_ptr<HeldRows> held;
};

// Exit codes of a worker.
inline constexpr int kWorkerDone = 0;        // BYE from the master, or a planned hand-over
inline constexpr int kWorkerLostMaster = 3;  // no word from the master before its deadline
inline constexpr int kWorkerError = 4;       // could not do its part (shard, protocol)

// The most memory this process may use, in bytes: the least of its address-space limit
// (RLIMIT_AS), its cgroup's memory.max and a Lambda function's memory size; 0: none it can see.
int64_t ProcessMemoryLimitBytes();
// How a worker's BYE begins when an allocation failed: "fatal: out of memory (...)".
inline constexpr const char* kOutOfMemory = "out of memory";
// How a worker's BYE names a line of its data it could not read: "fatal: bad data: FILE:LINE: ...".
inline constexpr const char* kBadData = "bad data: ";

// What a worker process serves its rounds with: its shard's worker, or a relay's group of
// workers (runtime/relay.h).
class RoundServer {
 public:
  virtual ~RoundServer() = default;
  // The length of the z it is sent: its support's in the general form, else the model's.
  virtual std::size_t local_size() const = 0;
  virtual WorkerReply Serve(const RoundRequest& request, uint64_t invocation) = 0;
};

// The problem an ASSIGN names.
Result<ProblemSpec> AssignedSpec(const AssignBody& body);

// The worker an ASSIGN describes, with its shard loaded (the cold start, timed into
// *load_seconds) or given as `rows` (read from its part of the text); *spec becomes the
// problem the ASSIGN names. Errors say what failed.
Result<std::unique_ptr<ShardWorker>> MakeAssignedWorker(int worker, const AssignBody& body, ProblemSpec* spec,
                                                        double* load_seconds, std::optional<Dataset> rows = {});
// An ASSIGN's part of the text read and scanned; a line it cannot read is an InvalidArgument
// that begins with kBadData.
Result<TextPartRows> ReadAssignedText(const AssignBody& body, std::atomic<uint64_t>* bytes_so_far = nullptr);
// Those rows as the ASSIGN's plan has them.
Result<Dataset> FinishAssignedText(TextPartRows rows, const AssignBody& body);

// Runs the worker until it leaves; returns its exit code. Messages go to standard error.
int RunWorkerProcess(const WorkerProcessOptions& options);

}  // namespace nimbus
