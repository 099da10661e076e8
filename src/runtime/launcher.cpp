#include "nimbus/runtime/launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "nimbus/core/subprocess.h"

extern char** environ;

namespace nimbus {
namespace {

std::string Describe(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "ended";
}

std::string FormatSeconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", seconds);
  return text;
}

// The directory of this process's memory cgroup, and whether it is v2; empty where none.
std::pair<std::string, bool> OwnMemoryCgroup() {
  std::ifstream cgroups("/proc/self/cgroup");
  std::string v2;
  for (std::string line; std::getline(cgroups, line);) {
    if (const auto at = line.find(":memory:"); at != std::string::npos) {
      return {"/sys/fs/cgroup/memory" + line.substr(at + 8), false};
    }
    if (line.starts_with("0::")) v2 = "/sys/fs/cgroup" + line.substr(3);
  }
  struct stat st {};
  if (!v2.empty() && ::stat((v2 + "/memory.max").c_str(), &st) == 0) return {v2, true};
  return {"", false};
}

// A memory cgroup of one worker's, removed once it is empty (after the worker is reaped).
class MemoryCgroup {
 public:
  // Made below this process's cgroup with the limit written; null where that cannot be done.
  static std::unique_ptr<MemoryCgroup> Create(int64_t limit_bytes) {
    static std::atomic<uint64_t> made{0};
    const auto [parent, v2] = OwnMemoryCgroup();
    if (parent.empty()) return nullptr;
    const std::string path =
        parent + "/nimbus-" + std::to_string(::getpid()) + "-" + std::to_string(made.fetch_add(1));
    if (::mkdir(path.c_str(), 0755) != 0) return nullptr;
    auto cgroup = std::unique_ptr<MemoryCgroup>(new MemoryCgroup(path));
    std::ofstream limit(path + (v2 ? "/memory.max" : "/memory.limit_in_bytes"));
    limit << limit_bytes;
    limit.close();
    if (!limit) return nullptr;  // the destructor removes it
    if (!v2) std::ofstream(path + "/memory.swappiness") << 0;  // as a function has no swap
    return cgroup;
  }
  ~MemoryCgroup() { ::rmdir(path_.c_str()); }
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;
  std::string procs() const { return path_ + "/cgroup.procs"; }

 private:
  explicit MemoryCgroup(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// A child process; with its own process group when it is a shell running a template, so
// that killing it reaches what the shell started.
class ChildProcess final : public Invocation {
 public:
  ChildProcess(pid_t pid, bool own_group, std::unique_ptr<MemoryCgroup> cgroup = nullptr)
      : pid_(pid), own_group_(own_group), cgroup_(std::move(cgroup)) {}
  ~ChildProcess() override {
    Kill();
    Reap(true);
  }
  bool Exited(std::string* how) override {
    Reap(false);
    if (exited_ && how != nullptr) *how = how_;
    return exited_;
  }
  void Kill() override {
    if (exited_) return;
    ::kill(own_group_ ? -pid_ : pid_, SIGKILL);
  }
  int64_t pid() const override { return pid_; }

 private:
  void Reap(bool wait) {
    if (exited_) return;
    int status = 0;
    pid_t done;
    do {
      done = ::waitpid(pid_, &status, wait ? 0 : WNOHANG);
    } while (done < 0 && errno == EINTR);
    if (done == pid_) {
      exited_ = true;
      how_ = Describe(status);
    } else if (done < 0) {
      exited_ = true;
      how_ = "lost";
    }
  }
  pid_t pid_;
  bool own_group_;
  bool exited_ = false;
  std::string how_;
  std::unique_ptr<MemoryCgroup> cgroup_;  // removed after the process (declared last: destroyed first)
};

// This process's environment with the run's client secret key added (or replaced).
std::vector<std::string> EnvironmentWith(const ClientCredentials& credentials) {
  std::vector<std::string> variables;
  const std::string prefix = std::string(kClientSecretVariable) + "=";
  for (char** v = environ; *v != nullptr; ++v) {
    if (std::string_view(*v).rfind(prefix, 0) != 0) variables.emplace_back(*v);
  }
  if (credentials.secure()) variables.push_back(prefix + credentials.client.secret_key);
  return variables;
}

// A child held to `memory_limit` bytes: fork, then (async-signal-safe calls only) join the
// cgroup or set the address-space limit, then exec.
Result<std::unique_ptr<Invocation>> SpawnCapped(char** args, char** variables, bool own_group, int64_t memory_limit) {
  std::unique_ptr<MemoryCgroup> cgroup = MemoryCgroup::Create(memory_limit);
  const std::string procs = cgroup ? cgroup->procs() : "";
  const rlimit address_space{static_cast<rlim_t>(memory_limit), static_cast<rlim_t>(memory_limit)};
  const pid_t pid = ::fork();
  if (pid < 0) return ErrnoError(std::string("cannot start ") + args[0], errno);
  if (pid == 0) {
    if (own_group) ::setpgid(0, 0);
    bool capped = false;
    if (!procs.empty()) {
      const int fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
      capped = fd >= 0 && ::write(fd, "0", 1) == 1;  // "0": the writing process itself
      if (fd >= 0) ::close(fd);
    }
    if (!capped) ::setrlimit(RLIMIT_AS, &address_space);
    ::execve(args[0], args, variables);
    ::_exit(127);
  }
  return std::unique_ptr<Invocation>(std::make_unique<ChildProcess>(pid, own_group, std::move(cgroup)));
}

Result<std::unique_ptr<Invocation>> Spawn(const std::vector<std::string>& argv, bool own_group,
                                          const ClientCredentials& credentials, int64_t memory_limit = 0) {
  std::vector<std::string> environment = EnvironmentWith(credentials);
  std::vector<char*> variables;
  for (std::string& v : environment) variables.push_back(v.data());
  variables.push_back(nullptr);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (memory_limit > 0) return SpawnCapped(args.data(), variables.data(), own_group, memory_limit);
  SpawnOptions spawn;
  spawn.argv = argv;
  spawn.environment = std::move(environment);
  spawn.own_group = own_group;
  NIMBUS_ASSIGN_OR_RETURN(const pid_t pid, nimbus::Spawn(spawn));
  return std::unique_ptr<Invocation>(std::make_unique<ChildProcess>(pid, own_group));
}

class ProcessLauncher final : public Launcher {
 public:
  ProcessLauncher(std::string binary, bool end_with_this) : binary_(std::move(binary)), end_with_this_(end_with_this) {}
  Result<std::unique_ptr<Invocation>> Launch(const LaunchRequest& launch) override {
    LaunchRequest request = launch;
    if (end_with_this_) request.parent_pid = ::getpid();
    std::vector<std::string> argv{binary_, "worker"};
    for (std::string& a : WorkerArguments(request)) argv.push_back(std::move(a));
    return Spawn(argv, /*own_group=*/false, request.credentials, request.memory_limit_bytes);
  }

 private:
  std::string binary_;
  bool end_with_this_;
};

class CommandLauncher final : public Launcher {
 public:
  CommandLauncher(std::string command_template, std::vector<std::string> hosts)
      : template_(std::move(command_template)), hosts_(std::move(hosts)) {}
  Result<std::unique_ptr<Invocation>> Launch(const LaunchRequest& request) override {
    const std::string host = hosts_.empty() ? "localhost" : hosts_[next_host_++ % hosts_.size()];
    return Spawn({"/bin/sh", "-c", ExpandLaunchTemplate(template_, request, host)}, /*own_group=*/true,
                 request.credentials, request.memory_limit_bytes);
  }

 private:
  std::string template_;
  std::vector<std::string> hosts_;
  std::size_t next_host_ = 0;
};

class ElsewhereInvocation final : public Invocation {
 public:
  explicit ElsewhereInvocation(StartedElsewhere started) : started_(std::move(started)) {}
  bool Exited(std::string* how) override {
    if (!started_.ended || !started_.ended()) return false;
    if (how != nullptr) *how = "its start function says it ended";
    return true;
  }
  void Kill() override {
    if (started_.stop) started_.stop();
  }
  int64_t pid() const override { return -1; }

 private:
  StartedElsewhere started_;
};

class FunctionLauncher final : public Launcher {
 public:
  explicit FunctionLauncher(std::function<Result<StartedElsewhere>(const LaunchRequest&)> start)
      : start_(std::move(start)) {}
  Result<std::unique_ptr<Invocation>> Launch(const LaunchRequest& request) override {
    NIMBUS_ASSIGN_OR_RETURN(StartedElsewhere started, start_(request));
    return std::unique_ptr<Invocation>(std::make_unique<ElsewhereInvocation>(std::move(started)));
  }

 private:
  std::function<Result<StartedElsewhere>(const LaunchRequest&)> start_;
};

// 'text' quoted for /bin/sh.
std::string ShellQuote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

void ReplaceAll(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

}  // namespace

std::vector<std::string> WorkerArguments(const LaunchRequest& request) {
  std::vector<std::string> args{"--connect", request.connect, "--run", std::to_string(request.run_id), "--worker",
                                std::to_string(request.worker), "--invocation", std::to_string(request.invocation)};
  if (request.max_lifetime > 0) {
    args.push_back("--max-lifetime");
    args.push_back(FormatSeconds(request.max_lifetime));
  }
  if (request.parent_pid > 0) {
    args.push_back("--parent");
    args.push_back(std::to_string(request.parent_pid));
  }
  if (request.credentials.secure()) {
    for (const std::string& a : {std::string("--server-key"), request.credentials.server_public,
                                 std::string("--client-key"), request.credentials.client.public_key}) {
      args.push_back(a);
    }
  }
  return args;
}

std::string ExpandLaunchTemplate(const std::string& command_template, const LaunchRequest& request,
                                 const std::string& host) {
  std::string args;
  for (const std::string& a : WorkerArguments(request)) {
    if (!args.empty()) args += ' ';
    args += ShellQuote(a);
  }
  std::string command = command_template;
  ReplaceAll(command, "{args}", args);
  ReplaceAll(command, "{worker}", std::to_string(request.worker));
  ReplaceAll(command, "{invocation}", std::to_string(request.invocation));
  ReplaceAll(command, "{connect}", ShellQuote(request.connect));
  ReplaceAll(command, "{run}", std::to_string(request.run_id));
  ReplaceAll(command, "{host}", ShellQuote(host));
  ReplaceAll(command, "{client_secret}", ShellQuote(request.credentials.client.secret_key));
  ReplaceAll(command, "{memory_mb}", std::to_string(request.memory_limit_bytes >> 20));
  return command;
}

std::string MemoryCapMechanism() {
  if (std::unique_ptr<MemoryCgroup> probe = MemoryCgroup::Create(int64_t{1} << 30)) {
    return OwnMemoryCgroup().second ? "cgroup v2" : "cgroup v1";
  }
  return "address space";
}

std::unique_ptr<Launcher> MakeProcessLauncher(std::string binary, bool end_with_this) {
  return std::make_unique<ProcessLauncher>(std::move(binary), end_with_this);
}

std::unique_ptr<Launcher> MakeCommandLauncher(std::string command_template, std::vector<std::string> hosts) {
  return std::make_unique<CommandLauncher>(std::move(command_template), std::move(hosts));
}

std::unique_ptr<Launcher> MakeFunctionLauncher(std::function<Result<StartedElsewhere>(const LaunchRequest&)> start) {
  return std::make_unique<FunctionLauncher>(std::move(start));
}

std::string CurrentExecutable() {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return "nimbus";
  return std::string(path, static_cast<std::size_t>(n));
}

}  // namespace nimbus
