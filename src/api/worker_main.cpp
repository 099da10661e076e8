// A worker process's main: `nimbus worker`, or the same in a user's own program that runs
// workers with the losses it registered (nimbus.h: IsWorkerInvocation, WorkerMain).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "nimbus/core/args.h"
#include "nimbus/core/clock.h"
#include "nimbus/nimbus.h"
#include "nimbus/runtime/launcher.h"
#ifdef NIMBUS_HAVE_AWS
#include "nimbus/runtime/lambda.h"
#endif
#include "nimbus/runtime/worker_process.h"
#include "nimbus/transport/transport.h"

namespace nimbus {
namespace {

bool NamesWorker(int argc, char** argv) { return argc >= 2 && std::strcmp(argv[1], "worker") == 0; }

// Inside a Lambda function: its runtime sets this for the bootstrap.
bool InLambdaFunction() { return std::getenv("AWS_LAMBDA_RUNTIME_API") != nullptr; }

}  // namespace

bool IsWorkerInvocation(int argc, char** argv) { return NamesWorker(argc, argv) || InLambdaFunction(); }

namespace {

// `nimbus worker`'s arguments (argv[0] the program, argv[1] "worker") into *options, the
// client secret key given apart. Returns -1 when the worker may run, else the exit code (help
// printed, or an error reported).
int ParseWorkerArguments(int argc, char** argv, const char* secret, WorkerProcessOptions* options) {
  int64_t run = 0, worker = -1, invocation = 1;
  std::string connect, server_key, client_key;
  ArgParser parser("worker",
                   "--connect tcp://HOST:PORT --run RUN --worker I --invocation J [--max-lifetime S]\n"
                   "       [--server-key KEY --client-key KEY]   (with NIMBUS_CLIENT_SECRET in the environment)",
                   "Runs one worker of a nimbus run: dials out to the master, loads the shard it is assigned and\n"
                   "serves ADMM rounds until the master says BYE, the master is lost, or its lifetime budget\n"
                   "runs out (then it finishes its round and hands over). Masters start workers with these\n"
                   "arguments; a launch command (--runtime command) passes them on as {args}.\n"
                   "A worker proves it belongs to the run with the run's CurveZMQ keys: the master's public key\n"
                   "(--server-key), the run's client public key (--client-key) and its secret key, which is\n"
                   "read from the environment variable NIMBUS_CLIENT_SECRET (never an argument, which other\n"
                   "users could read). Without --server-key the worker speaks plaintext, which only a master\n"
                   "started with --insecure accepts.");
  parser.AddString("connect", "ENDPOINT", "the master's address", &connect);
  parser.AddInt("run", "RUN", "the run's id (from the master)", &run);
  parser.AddInt("worker", "I", "which worker (and shard) this is", &worker);
  parser.AddInt("invocation", "J", "which start of that worker this is", &invocation);
  parser.AddDouble("max-lifetime", "SECONDS", "hand over after this long (0: never)", &options->max_lifetime);
  parser.AddString("server-key", "KEY", "the master's CurveZMQ public key (Z85)", &server_key);
  parser.AddString("client-key", "KEY", "the run's CurveZMQ client public key (Z85)", &client_key);
  parser.AddInt("parent", "PID", "end with this process (a relay's workers end with their relay)",
                &options->parent_pid);
  parser.AddDouble("connect-timeout", "SECONDS", "give up if the master does not answer for this long",
                   &options->connect_timeout_seconds);
  parser.Require("connect");
  parser.Require("run");
  parser.Require("worker");
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code)) return exit_code;
  if (worker < 0) return ReportError("worker", InvalidArgument("--worker: must be >= 0"));
  if (invocation < 1) return ReportError("worker", InvalidArgument("--invocation: must be >= 1"));
  if (options->max_lifetime < 0) return ReportError("worker", InvalidArgument("--max-lifetime: must be >= 0"));
  if (!server_key.empty() || !client_key.empty()) {
    if (server_key.empty() || client_key.empty() || secret == nullptr || *secret == '\0') {
      return ReportError("worker", InvalidArgument("a secure worker needs --server-key, --client-key and the secret "
                                                   "key in NIMBUS_CLIENT_SECRET"));
    }
    options->credentials.server_public = server_key;
    options->credentials.client = {client_key, secret};
    for (const auto& [key, what] : {std::pair{&server_key, "--server-key"}, std::pair{&client_key, "--client-key"},
                                    std::pair{&options->credentials.client.secret_key, "NIMBUS_CLIENT_SECRET"}}) {
      if (Status valid = CheckCurveKey(*key, what); !valid.ok()) return ReportError("worker", valid);
    }
  }
  options->connect = connect;
  options->run_id = static_cast<uint64_t>(run);
  options->worker = static_cast<int>(worker);
  options->invocation = static_cast<uint64_t>(invocation);
  return -1;
}

// The part's rows as a worker's own copy (its plan renumbers them in place).
Result<std::shared_ptr<HeldRows>> CopyHeldPart(const HeldPart& part) {
  const CsrView& m = part.matrix;
  if (m.rows < 0 || static_cast<int64_t>(part.labels.size()) != m.rows) {
    return InvalidArgument("part " + part.key + ": " + std::to_string(part.labels.size()) + " labels for " +
                           std::to_string(m.rows) + " rows");
  }
  if (!part.weights.empty() && static_cast<int64_t>(part.weights.size()) != m.rows) {
    return InvalidArgument("part " + part.key + ": " + std::to_string(part.weights.size()) + " weights for " +
                           std::to_string(m.rows) + " rows");
  }
  if (m.rows > 0 && m.row_ptr[m.rows] < m.row_ptr[0]) return InvalidArgument("part " + part.key + ": row_ptr descends");
  auto held = std::make_shared<HeldRows>();
  held->key = part.key;
  RowBlock& rows = held->rows;
  const auto nnz = static_cast<std::size_t>(m.rows > 0 ? m.row_ptr[m.rows] - m.row_ptr[0] : 0);
  NIMBUS_RETURN_IF_ERROR(rows.row_ptr.Ensure(static_cast<std::size_t>(m.rows) + 1));
  NIMBUS_RETURN_IF_ERROR(rows.col_idx.Ensure(nnz));
  NIMBUS_RETURN_IF_ERROR(rows.values.Ensure(nnz));
  NIMBUS_RETURN_IF_ERROR(rows.labels.Ensure(static_cast<std::size_t>(m.rows)));
  for (int64_t r = 0; r <= m.rows; ++r) rows.row_ptr.push_back(m.rows > 0 ? m.row_ptr[r] - m.row_ptr[0] : 0);
  for (int64_t k = m.rows > 0 ? m.row_ptr[0] : 0; k < (m.rows > 0 ? m.row_ptr[m.rows] : 0); ++k) {
    rows.col_idx.push_back(m.col_idx[k]);
    rows.values.push_back(m.Value(k));
  }
  for (const double y : part.labels) rows.labels.push_back(y);
  held->weights.assign(part.weights.begin(), part.weights.end());
  if (Status structure = CheckCsrStructure(rows.View(m.cols)); !structure.ok()) {
    return InvalidArgument("part " + part.key + ": " + structure.message());
  }
  return held;
}

}  // namespace

int WorkerMain(int argc, char** argv, double process_start_wall) {
  if (process_start_wall <= 0) process_start_wall = WallSeconds();
#ifdef NIMBUS_HAVE_AWS
  // A program packaged as a function's bootstrap (nimbus lambda package --binary) serves the
  // function's invocations, each one worker.
  if (!NamesWorker(argc, argv) && InLambdaFunction()) return RunLambdaBootstrap();
#endif
  WorkerProcessOptions options;
  if (const int exit_code = ParseWorkerArguments(argc, argv, std::getenv(kClientSecretVariable), &options);
      exit_code >= 0) {
    return exit_code;
  }
  options.process_start_wall = process_start_wall;
  return RunWorkerProcess(options);
}

int ServeWorker(const std::vector<std::string>& arguments, const std::string& client_secret, const HeldPart& part) {
  const double start_wall = WallSeconds();
  std::vector<std::string> words = {"nimbus", "worker"};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  WorkerProcessOptions options;
  if (const int exit_code =
          ParseWorkerArguments(static_cast<int>(words.size()), argv.data(), client_secret.c_str(), &options);
      exit_code >= 0) {
    return exit_code;
  }
  Result<std::shared_ptr<HeldRows>> held = CopyHeldPart(part);
  if (!held.ok()) return ReportError("worker", held.status());
  options.held = std::move(held).value();
  options.process_start_wall = start_wall;
  return RunWorkerProcess(options);
}

}  // namespace nimbus
