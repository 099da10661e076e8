// Test helpers: temporary directories, running the nimbus binary and liblinear, small files.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace nimbus::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct CommandResult {
  int exit_code = -1;  // 128 + signal when killed by a signal
  std::string out;
  std::string err;
  // RunCommand: the peak resident set, in KiB, of the command or of the largest of the
  // descendants it waited for (wait4's ru_maxrss, what /usr/bin/time -v reports).
  long max_rss_kb = 0;
};

// Runs argv[0] with arguments (no shell), capturing standard output and error.
CommandResult RunCommand(const std::vector<std::string>& argv);
// Runs argv with its standard output and error on a pseudo-terminal; `out` gets both.
CommandResult RunInTerminal(const std::vector<std::string>& argv);
// Runs the nimbus binary under test with these arguments.
CommandResult RunNimbus(const std::vector<std::string>& args);

void WriteTextFile(const std::string& path, const std::string& contents);
std::string ReadTextFile(const std::string& path);
bool FileExists(const std::string& path);
// The names in a directory, sorted.
std::vector<std::string> ListDirectory(const std::string& path);

// A program running beside a test (a server, a proxy), with this process's environment and
// `extra_environment` ("NAME=value"), its output and errors in `log`. Ended on destruction:
// SIGTERM, then SIGKILL after 2 s.
class BackgroundProcess {
 public:
  BackgroundProcess(const std::vector<std::string>& argv, const std::string& log,
                    const std::vector<std::string>& extra_environment = {});
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;
  bool started() const { return pid_ > 0; }
  int pid() const { return pid_; }
  bool Exited();  // it has ended (and was reaped)

 private:
  int pid_ = -1;
  bool exited_ = false;
};

// A moto_server (the AWS emulator in the machine image's Python) on 127.0.0.1 and a free port,
// stopped on destruction. With `authenticate_after` > 0 it checks signatures and IAM
// permissions after that many requests (the first ones may create users and keys).
class MotoServer {
 public:
  explicit MotoServer(int authenticate_after = 0);
  ~MotoServer();
  MotoServer(const MotoServer&) = delete;
  MotoServer& operator=(const MotoServer&) = delete;
  const std::string& endpoint() const { return endpoint_; }  // http://127.0.0.1:PORT
  // Points the AWS environment of this process (and its children) at this server.
  void ExportEnvironment(const std::string& access_key = "testing", const std::string& secret_key = "testing") const;

 private:
  TempDir log_dir_;
  std::unique_ptr<BackgroundProcess> process_;
  std::string endpoint_;
};

// A free TCP port on 127.0.0.1 (bound, read, released).
int FreePort();

// liblinear's example data set (270 rows, 13 features, labels +1/-1).
std::string HeartScalePath();

// Trains liblinear (`liblinear-train -s SOLVER -c C -e EPS -q`) and returns the model path.
std::string TrainLiblinear(int solver, double c, double eps, const std::string& data, const std::string& model);

}  // namespace nimbus::testing
