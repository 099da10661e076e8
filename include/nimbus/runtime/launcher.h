// Launchers start worker invocations: `nimbus worker` processes on this machine, or anything
// a user's launch command starts (ssh, srun, kubectl, ...). Workers dial out to the master,
// so a launcher only has to start them; what it hands back lets the master notice an exit
// and end an invocation it gave up on.
#pragma once

#include "nimbus/transport/transport.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nimbus/core/status.h"

namespace nimbus {

struct LaunchRequest {
  int worker = 0;
  uint64_t invocation = 0;
  std::string connect;        // the master's address, as workers must dial it
  uint64_t run_id = 0;
  double max_lifetime = 0;    // seconds; 0: none
  ClientCredentials credentials;  // the run's keys; empty for an --insecure run
  // Process and command runtimes: hold the worker to this much memory, as a platform's
  // function memory does (0: no limit). In a memory cgroup of its own where one can be made
  // (resident memory counted; past it the kernel's OOM killer ends the worker), else by an
  // address-space limit (RLIMIT_AS: an allocation past it fails, and the worker says so).
  int64_t memory_limit_bytes = 0;
  // The process the worker must not outlive (a relay's, for its workers): passed as --parent;
  // 0: none.
  int64_t parent_pid = 0;
};

// How a worker's memory is held to its limit here: "cgroup v2", "cgroup v1", or "address space"
// (when no memory cgroup can be made below this process's).
std::string MemoryCapMechanism();

// The `nimbus worker` arguments for a launch: --connect ... --run ... --worker ... --invocation ...
// and, for a secure run, --server-key and --client-key. The client secret key is not an
// argument (arguments are visible to every user of a machine): it goes in the environment
// variable below.
std::vector<std::string> WorkerArguments(const LaunchRequest& request);
inline constexpr const char* kClientSecretVariable = "NIMBUS_CLIENT_SECRET";

class Invocation {
 public:
  virtual ~Invocation() = default;
  // True once the started process has exited; `how` then says how ("exit status 3",
  // "killed by signal 9").
  virtual bool Exited(std::string* how) = 0;
  // Ends it now (SIGKILL), if it still runs.
  virtual void Kill() = 0;
  virtual int64_t pid() const = 0;
};

class Launcher {
 public:
  virtual ~Launcher() = default;
  virtual Result<std::unique_ptr<Invocation>> Launch(const LaunchRequest& request) = 0;
};

// Starts `binary worker ARGS...` as a child process (the `process` runtime). With
// `end_with_this`, each ends when this process does (a relay's workers).
std::unique_ptr<Launcher> MakeProcessLauncher(std::string binary, bool end_with_this = false);

// Runs a user's command template through /bin/sh (the `command` runtime). The template's
// {args} becomes the quoted worker arguments, and {worker}, {invocation}, {connect}, {run}
// and {host} (the next of `hosts`, round robin) their values, and {memory_mb} the worker's
// memory limit (0: none; the limit holds the local shell and what it starts, not a process on
// another host, which must be limited there). The shell's environment has
// NIMBUS_CLIENT_SECRET; a command that crosses to another host must carry it there, e.g.
//   ssh {host} NIMBUS_CLIENT_SECRET={client_secret} /opt/nimbus/bin/nimbus worker {args}
std::unique_ptr<Launcher> MakeCommandLauncher(std::string command_template, std::vector<std::string> hosts);

// A start made by a function of the caller's (RuntimeOptions::start_worker): what it started is
// out of this process's sight, so it says itself whether that ended, and how to end it.
struct StartedElsewhere {
  std::function<bool()> ended;  // true once the started worker has finished (or failed to start)
  std::function<void()> stop;   // asks it to end (best effort; the master's BYE ends it too)
};
// Calls `start` for each launch.
std::unique_ptr<Launcher> MakeFunctionLauncher(std::function<Result<StartedElsewhere>(const LaunchRequest&)> start);

// The command line a template gives for a request (exposed for tests and --dry-run output).
std::string ExpandLaunchTemplate(const std::string& command_template, const LaunchRequest& request,
                                 const std::string& host);

// The path of the running executable (/proc/self/exe resolved).
std::string CurrentExecutable();

}  // namespace nimbus
