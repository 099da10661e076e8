#include "nimbus/core/subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace nimbus {
namespace {

// posix_spawn's file actions, destroyed with this.
class FileActions {
 public:
  FileActions() { posix_spawn_file_actions_init(&actions_); }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

Result<pid_t> SpawnWith(const SpawnOptions& options, int stdout_pipe) {
  if (options.argv.empty()) return InvalidArgument("Spawn: no program");
  FileActions actions;
  if (!options.directory.empty()) posix_spawn_file_actions_addchdir_np(actions.get(), options.directory.c_str());
  const int write_flags = O_WRONLY | O_CREAT | O_TRUNC;
  if (stdout_pipe >= 0) {
    posix_spawn_file_actions_adddup2(actions.get(), stdout_pipe, STDOUT_FILENO);
  } else if (!options.stdout_file.empty()) {
    posix_spawn_file_actions_addopen(actions.get(), STDOUT_FILENO, options.stdout_file.c_str(), write_flags, 0644);
  }
  if (!options.stderr_file.empty()) {
    posix_spawn_file_actions_addopen(actions.get(), STDERR_FILENO, options.stderr_file.c_str(), write_flags, 0644);
  }
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (options.own_group) {
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
  }
  std::vector<char*> argv;
  for (const std::string& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> environment;
  if (options.environment) {
    for (const std::string& e : *options.environment) environment.push_back(const_cast<char*>(e.c_str()));
    environment.push_back(nullptr);
  }
  char** env = options.environment ? environment.data() : environ;
  pid_t pid = -1;
  const int error = options.search_path
                        ? posix_spawnp(&pid, argv[0], actions.get(), &attributes, argv.data(), env)
                        : posix_spawn(&pid, argv[0], actions.get(), &attributes, argv.data(), env);
  posix_spawnattr_destroy(&attributes);
  if (error != 0) {
    return Status(error == ENOENT ? StatusCode::kNotFound : StatusCode::kUnavailable,
                  "cannot start " + options.argv[0] + ": " + std::strerror(error));
  }
  return pid;
}

}  // namespace

Result<pid_t> Spawn(const SpawnOptions& options) { return SpawnWith(options, -1); }

Result<int> WaitFor(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return ErrnoError("cannot wait for process " + std::to_string(pid), errno);
  }
  return status;
}

Result<ProgramOutput> RunAndRead(SpawnOptions options) {
  int pipe_ends[2];
  if (::pipe2(pipe_ends, O_CLOEXEC) != 0) return ErrnoError("cannot make a pipe", errno);
  Result<pid_t> pid = SpawnWith(options, pipe_ends[1]);
  ::close(pipe_ends[1]);
  if (!pid.ok()) {
    ::close(pipe_ends[0]);
    return pid.status();
  }
  ProgramOutput output;
  char buffer[4096];
  for (ssize_t got; (got = ::read(pipe_ends[0], buffer, sizeof buffer)) != 0;) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) break;
    output.out.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(pipe_ends[0]);
  NIMBUS_ASSIGN_OR_RETURN(output.status, WaitFor(*pid));
  return output;
}

}  // namespace nimbus
