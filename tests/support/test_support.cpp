#include "support/test_support.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <pty.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace nimbus::testing {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/nimbus-test-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

CommandResult RunCommand(const std::vector<std::string>& argv) {
  TempDir capture;
  const std::string out_path = capture.File("out"), err_path = capture.File("err");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  CommandResult result;
  const int spawn_error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) {
    result.err = "cannot start " + argv[0];
    return result;
  }
  int status = 0;
  struct rusage usage {};
  while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.max_rss_kb = usage.ru_maxrss;
  result.out = ReadTextFile(out_path);
  result.err = ReadTextFile(err_path);
  return result;
}

CommandResult RunInTerminal(const std::vector<std::string>& argv) {
  CommandResult result;
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0) {
    result.err = "forkpty failed";
    return result;
  }
  if (pid == 0) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  char buffer[4096];
  while (true) {  // ends when the child closes the terminal (EIO) or at EOF
    const ssize_t n = ::read(master, buffer, sizeof buffer);
    if (n > 0) {
      result.out.append(buffer, static_cast<std::size_t>(n));
    } else if (!(n < 0 && errno == EINTR)) {
      break;
    }
  }
  ::close(master);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

CommandResult RunNimbus(const std::vector<std::string>& args) {
  std::vector<std::string> argv{NIMBUS_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

void WriteTextFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool FileExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::vector<std::string> ListDirectory(const std::string& path) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(path)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

namespace {

bool Accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv, const std::string& log,
                                     const std::vector<std::string>& extra_environment) {
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) environment.emplace_back(*e);
  environment.insert(environment.end(), extra_environment.begin(), extra_environment.end());
  std::vector<char*> env, args;
  for (std::string& e : environment) env.push_back(e.data());
  env.push_back(nullptr);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  const int error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    ADD_FAILURE() << "cannot start " << argv[0] << ": " << std::strerror(error);
    return;
  }
  pid_ = pid;
}

BackgroundProcess::~BackgroundProcess() {
  if (pid_ <= 0 || exited_) return;
  ::kill(pid_, SIGTERM);
  int status = 0;
  for (int i = 0; i < 100; ++i) {
    if (::waitpid(pid_, &status, WNOHANG) == pid_) return;
    ::usleep(20000);
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, &status, 0);
}

bool BackgroundProcess::Exited() {
  int status = 0;
  if (!exited_ && pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == pid_) exited_ = true;
  return exited_ || pid_ <= 0;
}

MotoServer::MotoServer(int authenticate_after) {
  const int port = FreePort();
  endpoint_ = "http://127.0.0.1:" + std::to_string(port);
  std::vector<std::string> environment;
  if (authenticate_after > 0) environment.push_back("INITIAL_NO_AUTH_ACTION_COUNT=" + std::to_string(authenticate_after));
  const std::string log = log_dir_.File("moto.log");
  process_ = std::make_unique<BackgroundProcess>(
      std::vector<std::string>{"moto_server", "-H", "127.0.0.1", "-p", std::to_string(port)}, log, environment);
  if (!process_->started()) {
    ADD_FAILURE() << "moto_server comes with the machine image's Python (PATH: $HOME/.pyenv/shims)";
    return;
  }
  for (int i = 0; i < 300 && !Accepts(port); ++i) ::usleep(50000);  // up to 15 s
  if (!Accepts(port)) ADD_FAILURE() << "moto_server did not start: " << ReadTextFile(log);
}

MotoServer::~MotoServer() = default;

void MotoServer::ExportEnvironment(const std::string& access_key, const std::string& secret_key) const {
  ::setenv("AWS_ENDPOINT_URL", endpoint_.c_str(), 1);
  ::setenv("AWS_ACCESS_KEY_ID", access_key.c_str(), 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", secret_key.c_str(), 1);
  ::unsetenv("AWS_SESSION_TOKEN");
  ::setenv("AWS_REGION", "us-east-1", 1);
}

std::string HeartScalePath() { return "/usr/share/doc/liblinear-tools/examples/heart_scale"; }

std::string TrainLiblinear(int solver, double c, double eps, const std::string& data, const std::string& model) {
  char c_text[40], eps_text[40];
  std::snprintf(c_text, sizeof c_text, "%.17g", c);
  std::snprintf(eps_text, sizeof eps_text, "%g", eps);
  const CommandResult result =
      RunCommand({"liblinear-train", "-s", std::to_string(solver), "-c", c_text, "-e", eps_text, "-q", data, model});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return model;
}

}  // namespace nimbus::testing
