// End to end: shards in S3 (moto_server), the Invoke API against moto_server's Lambda, and whole
// solves whose workers are functions run by `nimbus lambda emulate`'s engine.
#include <signal.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "e2e_support.h"
#include "nimbus/cloud/lambda.h"
#include "nimbus/cloud/s3.h"
#include "nimbus/core/zip_writer.h"
#include "nimbus/runtime/lambda_emulator.h"

namespace nimbus::testing {
namespace {

using Json = nlohmann::json;

AwsConfig ConfigFor(const MotoServer& server) {
  AwsConfig config;
  config.credentials = {"testing", "testing", ""};
  config.credentials_source = "the test";
  config.endpoint_url = server.endpoint();
  return config;
}

TEST(S3Data, TrainOnShardsInS3GivesTheLocalModel) {
  MotoServer server;
  server.ExportEnvironment();
  ASSERT_TRUE(S3Client(ConfigFor(server)).CreateBucket("data").ok());
  TempDir dir;
  const CommandResult split =
      RunNimbus({"split", "--data", HeartScalePath(), "--shards", "3", "--out", "s3://data/heart/v1"});
  ASSERT_EQ(split.exit_code, 0) << split.err;
  EXPECT_NE(split.out.find("wrote 3 shards"), std::string::npos) << split.out;
  Train({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "3", "--out", dir.File("local.json")});
  Train({"--data", "s3://data/heart/v1", "--l1", "0.01", "--out", dir.File("threads.json")});
  Train({"--data", "s3://data/heart/v1", "--l1", "0.01", "--runtime", "process", "--out", dir.File("process.json")});
  const std::string expected = ReadTextFile(dir.File("local.json"));
  EXPECT_EQ(ReadTextFile(dir.File("threads.json")), expected);
  EXPECT_EQ(ReadTextFile(dir.File("process.json")), expected);

  const CommandResult missing = RunNimbus({"train", "--data", "s3://data/nothing-here", "--l1", "0.01"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("s3://data/nothing-here: no such object, nor objects under it"), std::string::npos) << missing.err;
  const CommandResult no_bucket = RunNimbus({"train", "--data", "s3://no-such-bucket/x", "--l1", "0.01"});
  EXPECT_NE(no_bucket.err.find("s3://no-such-bucket: no such bucket"), std::string::npos) << no_bucket.err;
}

TEST(LambdaInvoke, MotoLambdaAcceptsCreateFunctionAndAnEventInvoke) {
  MotoServer server;
  const AwsConfig config = ConfigFor(server);
  // moto checks that the function's role exists.
  AwsClient iam(config, "iam");
  AwsClient::Call role;
  role.method = "POST";
  role.headers = {{"content-type", "application/x-www-form-urlencoded"}};
  role.body = "Action=CreateRole&RoleName=nimbus-worker&AssumeRolePolicyDocument=%7B%7D&Version=2010-05-08";
  Result<HttpResponse> created_role = iam.Send(role);
  ASSERT_TRUE(created_role.ok() && created_role->status == 200) << (created_role.ok() ? created_role->body : "");

  ZipWriter zip;
  ASSERT_TRUE(zip.Add("bootstrap", "#!/bin/sh\nexit 0\n", 0755).ok());
  LambdaClient lambda(config);
  ASSERT_TRUE(lambda.CreateFunction("nimbus-worker", "arn:aws:iam::123456789012:role/nimbus-worker", zip.Finish(), 1769, 900)
                  .ok());
  const Status invoked = lambda.InvokeAsync("nimbus-worker", R"({"connect":"tcp://127.0.0.1:1","run":1,"worker":0})");
  EXPECT_TRUE(invoked.ok()) << invoked.ToString();  // 202 Accepted
  const Status missing = lambda.InvokeAsync("no-such-function", "{}");
  EXPECT_EQ(missing.code(), StatusCode::kNotFound) << missing.ToString();
}

// The emulator in this process, serving functions that run `bootstrap`.
class Emulated {
 public:
  explicit Emulated(const std::string& bootstrap = NIMBUS_LAMBDA_BINARY) {
    ::setenv("AWS_ACCESS_KEY_ID", "testing", 1);  // the master signs its Invoke requests
    ::setenv("AWS_SECRET_ACCESS_KEY", "testing", 1);
    ::setenv("AWS_REGION", "us-east-1", 1);
    ::unsetenv("AWS_ENDPOINT_URL");
    LambdaEmulatorOptions options;
    options.bootstrap = bootstrap;
    options.function = "nimbus-worker";
    emulator_ = std::make_unique<LambdaEmulator>(options);
    const Status started = emulator_->Start();
    EXPECT_TRUE(started.ok()) << started.ToString();
  }
  ~Emulated() { emulator_->Stop(); }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(emulator_->port()); }
  LambdaEmulator& emulator() { return *emulator_; }
  std::vector<std::string> TrainArgs() const {
    return {"--runtime", "lambda", "--lambda-function", "nimbus-worker", "--lambda-endpoint", endpoint()};
  }

 private:
  std::unique_ptr<LambdaEmulator> emulator_;
};

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(LambdaEmulator, FourFunctionsSolveAsThreadsDo) {
  Emulated lambda;
  TempDir dir;
  Train({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "4", "--out", dir.File("threads.json")});
  Train(Concat({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "4", "--out", dir.File("lambda.json"),
                "--summary-json", dir.File("s.json")},
               lambda.TrainArgs()));
  const double threads = ObjectiveOf(dir.File("threads.json"), HeartScalePath(), 0.01, 0);
  EXPECT_NEAR(ObjectiveOf(dir.File("lambda.json"), HeartScalePath(), 0.01, 0), threads, 1e-9 * threads);
  EXPECT_EQ(Json::parse(ReadTextFile(dir.File("s.json")))["runtime"], "lambda");
  EXPECT_EQ(lambda.emulator().stats().cold_starts, 4);
  // A second run finds the instances warm.
  Train(Concat({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "4"}, lambda.TrainArgs()));
  EXPECT_EQ(lambda.emulator().stats().warm_starts, 4);
  EXPECT_EQ(lambda.emulator().stats().cold_starts, 4);
}

// The column method's blocks on functions, a block of columns each: the threads model.
TEST(LambdaEmulator, TheColumnMethodsBlocksOnFunctionsGiveTheThreadsModel) {
  Emulated lambda;
  TempDir dir;
  const std::vector<std::string> args = {"--data", HeartScalePath(), "--l1", "0.01", "--algorithm", "columns",
                                         "--workers", "3"};
  Train(Concat(args, {"--out", dir.File("threads.json")}));
  Train(Concat(Concat(args, {"--out", dir.File("lambda.json"), "--summary-json", dir.File("s.json")}),
               lambda.TrainArgs()));
  const std::string expected = ReadTextFile(dir.File("threads.json"));
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(ReadTextFile(dir.File("lambda.json")), expected);
  EXPECT_EQ(Json::parse(ReadTextFile(dir.File("s.json")))["runtime"], "lambda");
  EXPECT_EQ(lambda.emulator().stats().cold_starts, 3);
}

// LIBSVM text in S3, no split step: each function reads its own byte range by ranged GETs
// (the text cut mid-line into three), and the model is the one threads make from a local copy.
TEST(LambdaEmulator, FunctionsReadTheirOwnRangesOfTextInS3) {
  Emulated lambda;
  MotoServer server;
  server.ExportEnvironment();  // the master's S3 and, through the emulator's environment, the functions'
  S3Client s3(ConfigFor(server));
  ASSERT_TRUE(s3.CreateBucket("data").ok());
  ASSERT_TRUE(s3.PutObject("data", "text/heart.svm", ReadTextFile(HeartScalePath())).ok());
  TempDir dir;
  Train({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "3", "--out", dir.File("threads.json")});
  Train(Concat({"--data", "s3://data/text", "--l1", "0.01", "--workers", "3", "--out", dir.File("lambda.json"),
                "--summary-json", dir.File("s.json")},
               lambda.TrainArgs()));
  const Json summary = Json::parse(ReadTextFile(dir.File("s.json")));
  EXPECT_EQ(summary["runtime"], "lambda");
  EXPECT_EQ(summary["rows"], 270);
  EXPECT_EQ(lambda.emulator().stats().cold_starts, 3);
  const double threads = ObjectiveOf(dir.File("threads.json"), HeartScalePath(), 0.01, 0);
  EXPECT_NEAR(ObjectiveOf(dir.File("lambda.json"), HeartScalePath(), 0.01, 0), threads, 1e-9 * threads);
}

// Kills function instance `index` in the middle of a run: once its trace has its first rounds
// (the functions have said HELLO and loaded their shards, however slowly they start, as under
// sanitizers). Bounded: 12 s at most.
std::thread KillAFunctionMidRun(Emulated& lambda, const std::string& trace, std::size_t index) {
  return std::thread([&lambda, trace, index] {
    for (int i = 0; i < 600; ++i) {
      if (lambda.emulator().instance_pids().size() >= 4 && FileExists(trace) &&
          ReadTextFile(trace).find("\"round\":2,") != std::string::npos) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const std::vector<int64_t> pids = lambda.emulator().instance_pids();
    if (pids.size() > index) ::kill(static_cast<pid_t>(pids[index]), SIGKILL);
  });
}

TEST(LambdaEmulator, AFunctionKilledMidRunIsReinvokedAndTheAnswerHolds) {
  Emulated lambda;
  TempDir dir;
  Train({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "4", "--out", dir.File("threads.json")});
  // Rounds of at least 40 ms make the run long enough to kill a function in the middle of it.
  std::thread killer = KillAFunctionMidRun(lambda, dir.File("trace.jsonl"), 1);
  Train(Concat({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "4", "--inject-delay", "40", "--heartbeat",
                "0.2", "--out", dir.File("lambda.json"), "--summary-json", dir.File("s.json"), "--trace",
                dir.File("trace.jsonl")},
               lambda.TrainArgs()));
  killer.join();
  const Json summary = Json::parse(ReadTextFile(dir.File("s.json")));
  EXPECT_GE(summary["worker_restarts"].get<int>(), 1);
  // The Invoke response said how: Lambda's words for a killed runtime, which the master reports
  // as running out of memory (what kills a function's runtime, most often).
  const std::string trace = ReadTextFile(dir.File("trace.jsonl"));
  EXPECT_NE(trace.find("ran out of memory (its process ended (the function failed: Runtime.ExitError: RequestId: "),
            std::string::npos) << trace;
  EXPECT_NE(trace.find("Runtime exited with error: signal: killed"), std::string::npos) << trace;
  EXPECT_GE(lambda.emulator().stats().crashes, 1);
  const double threads = ObjectiveOf(dir.File("threads.json"), HeartScalePath(), 0.01, 0);
  EXPECT_NEAR(ObjectiveOf(dir.File("lambda.json"), HeartScalePath(), 0.01, 0), threads, 1e-9 * threads);
}

// Distributed Newton (the default for L2) over functions: the threads model bit for bit, and
// again with a function killed in the middle of the run.
TEST(LambdaEmulator, NewtonRoundsRunOnFunctionsAndSurviveAKill) {
  Emulated lambda;
  TempDir dir;
  const std::vector<std::string> problem{"--data", HeartScalePath(), "--l2", "0.01", "--workers", "4"};
  Train(Concat(problem, {"--out", dir.File("threads.json")}));
  Train(Concat(Concat(problem, {"--out", dir.File("lambda.json"), "--summary-json", dir.File("s.json")}),
               lambda.TrainArgs()));
  EXPECT_EQ(Json::parse(ReadTextFile(dir.File("s.json")))["algorithm"], "newton");
  const std::string expected = ReadTextFile(dir.File("threads.json"));
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(ReadTextFile(dir.File("lambda.json")), expected);
  std::thread killer = KillAFunctionMidRun(lambda, dir.File("killed.jsonl"), 2);
  Train(Concat(Concat(problem, {"--inject-delay", "40", "--heartbeat", "0.2", "--out", dir.File("killed.json"),
                                "--summary-json", dir.File("k.json"), "--trace", dir.File("killed.jsonl")}),
               lambda.TrainArgs()));
  killer.join();
  EXPECT_GE(Json::parse(ReadTextFile(dir.File("k.json")))["worker_restarts"].get<int>(), 1);
  EXPECT_EQ(ReadTextFile(dir.File("killed.json")), expected);
}

TEST(LambdaPackage, TheZipRunsAsAFunction) {
  TempDir dir;
  const CommandResult package = RunNimbus({"lambda", "package", "--out", dir.File("nimbus.zip"), "--binary",
                                           NIMBUS_LAMBDA_BINARY});
  ASSERT_EQ(package.exit_code, 0) << package.err;
  const CommandResult listing = RunCommand({"unzip", "-l", dir.File("nimbus.zip")});
  ASSERT_EQ(listing.exit_code, 0) << listing.err;
  for (const char* member : {"bootstrap", "bin/nimbus-lambda", "lib/ld-linux-x86-64.so.2", "lib/libc.so.6", "lib/libzmq.so.5"}) {
    EXPECT_NE(listing.out.find(member), std::string::npos) << member << " missing from:\n" << listing.out;
  }
  ASSERT_EQ(RunCommand({"unzip", "-q", dir.File("nimbus.zip"), "-d", dir.File("task")}).exit_code, 0);
  // The unpacked bootstrap, with its own loader and libraries, serves a solve.
  Emulated lambda(dir.File("task/bootstrap"));
  Train(Concat({"--data", HeartScalePath(), "--l1", "0.01", "--workers", "2", "--out", dir.File("m.json")},
               lambda.TrainArgs()));
  EXPECT_TRUE(FileExists(dir.File("m.json")));
}

// A program with a loss of its own (examples/poisson) packaged as the function: the functions
// run that program, whose WorkerMain serves invocations with the loss it registered.
TEST(LambdaPackage, AProgramWithItsOwnLossIsItsOwnFunction) {
  TempDir dir;
  const CommandResult package = RunNimbus({"lambda", "package", "--out", dir.File("poisson.zip"), "--binary",
                                           NIMBUS_POISSON_EXAMPLE});
  ASSERT_EQ(package.exit_code, 0) << package.err;
  ASSERT_EQ(RunCommand({"unzip", "-q", dir.File("poisson.zip"), "-d", dir.File("task")}).exit_code, 0);
  // Counts whose mean grows with the one feature.
  std::string rows;
  for (int r = 0; r < 60; ++r) rows += std::to_string(r % 7) + " 1:" + std::to_string(0.05 * (r % 7) + 0.01 * r) + "\n";
  WriteTextFile(dir.File("counts.svm"), rows);
  Emulated lambda(dir.File("task/bootstrap"));
  const CommandResult on_lambda =
      RunCommand({NIMBUS_POISSON_EXAMPLE, dir.File("counts.svm"), "0.01", "lambda:nimbus-worker@" + lambda.endpoint(), "2"});
  ASSERT_EQ(on_lambda.exit_code, 0) << on_lambda.out << on_lambda.err;
  EXPECT_NE(on_lambda.out.find("on 2 lambda workers"), std::string::npos) << on_lambda.out;
  const CommandResult on_threads = RunCommand({NIMBUS_POISSON_EXAMPLE, dir.File("counts.svm"), "0.01", "threads", "2"});
  ASSERT_EQ(on_threads.exit_code, 0) << on_threads.err;
  const double lambda_objective = std::strtod(on_lambda.out.c_str() + on_lambda.out.find(' '), nullptr);
  const double threads_objective = std::strtod(on_threads.out.c_str() + on_threads.out.find(' '), nullptr);
  EXPECT_NEAR(lambda_objective, threads_objective, 1e-9 * std::abs(threads_objective));
  EXPECT_EQ(lambda.emulator().stats().cold_starts, 2);
}

// An AVX-512 mask register (%k0 to %k7) among the operands. (No std::regex here: g++ 12 warns
// inside <regex> under -O2 with sanitizers, and the sanitizer build treats warnings as errors.)
bool UsesMaskRegister(const std::string& instruction) {
  for (auto at = instruction.find("%k"); at != std::string::npos; at = instruction.find("%k", at + 2)) {
    if (at + 2 < instruction.size() && instruction[at + 2] >= '0' && instruction[at + 2] <= '7') return true;
  }
  return false;
}

// A scalar instruction of x86-64-v3 (BMI1, BMI2, LZCNT, MOVBE), with or without its w/l/q size suffix.
bool IsX8664V3Scalar(const std::string& mnemonic) {
  static const std::set<std::string> kScalarV3 = {"andn", "bextr", "blsi", "blsmsk", "blsr", "bzhi", "mulx", "pdep",
                                                  "pext", "rorx",  "sarx", "shlx", "shrx",   "lzcnt", "movbe"};
  if (kScalarV3.contains(mnemonic)) return true;
  const bool sized = !mnemonic.empty() && std::string("wlq").find(mnemonic.back()) != std::string::npos;
  return sized && kScalarV3.contains(mnemonic.substr(0, mnemonic.size() - 1));
}

// The instructions of `program` beyond x86-64-v2, from its disassembly, as "function: instruction"
// lines: anything VEX or EVEX encoded (AVX, AVX2, FMA, AVX-512: a mnemonic starting with v, or
// a ymm, zmm or mask register) and the scalar extensions of x86-64-v3 (BMI1, BMI2, LZCNT,
// MOVBE). tzcnt is not among them: compilers emit it for every CPU, where older ones run it as bsf.
std::vector<std::string> InstructionsBeyondX8664V2(const std::string& program) {
  const CommandResult disassembly = RunCommand({"objdump", "-d", "--no-show-raw-insn", program});
  EXPECT_EQ(disassembly.exit_code, 0) << disassembly.err;
  std::vector<std::string> found;
  std::istringstream lines(disassembly.out);
  std::string function;
  for (std::string line; std::getline(lines, line);) {
    if (line.ends_with(">:") && line.find(" <") != std::string::npos) {  // "0000000000401000 <main>:"
      function = line.substr(line.find(" <") + 2, line.size() - line.find(" <") - 4);
      continue;
    }
    const auto tab = line.find(":\t");  // "  401000:\tmnemonic operands <symbol>"
    if (tab == std::string::npos || line.find_first_not_of(" 0123456789abcdef") != tab) continue;
    std::string instruction = line.substr(tab + 2);
    instruction = instruction.substr(0, instruction.find('<'));  // a symbol's name is no operand
    const std::string mnemonic = instruction.substr(0, instruction.find_first_of(" \t"));
    const bool vector_encoded = (mnemonic.starts_with("v") && mnemonic != "verr" && mnemonic != "verw") ||
                                (instruction.find("%ymm") != std::string::npos) ||
                                (instruction.find("%zmm") != std::string::npos) ||
                                UsesMaskRegister(instruction);
    if (vector_encoded || IsX8664V3Scalar(mnemonic)) found.push_back(function + ": " + instruction);
  }
  return found;
}

// Up to the first 5 of them, for a failure's message.
std::string FirstFew(const std::vector<std::string>& instructions) {
  std::string text;
  for (std::size_t i = 0; i < instructions.size() && i < 5; ++i) text += "  " + instructions[i] + "\n";
  return text;
}

// What `nimbus lambda package` ships must run on any Lambda host: the build records a level of
// x86-64-v2 at most, and the packaged binary's code has no instruction beyond it. A build with
// -DNIMBUS_NATIVE=ON on an AVX2 machine fails here twice (the package refuses it; objdump
// finds its AVX code).
TEST(LambdaPackage, ThePackagedBinaryNeedsNoMoreThanX8664V2) {
  TempDir dir;
  const CommandResult package = RunNimbus({"lambda", "package", "--out", dir.File("nimbus.zip"), "--binary",
                                           NIMBUS_LAMBDA_BINARY});
  ASSERT_EQ(package.exit_code, 0) << package.err;
  EXPECT_TRUE(package.out.find("bin/nimbus-lambda (built for x86-64-v1)") != std::string::npos ||
              package.out.find("bin/nimbus-lambda (built for x86-64-v2)") != std::string::npos)
      << package.out;
  EXPECT_EQ(package.err, "");
  ASSERT_EQ(RunCommand({"unzip", "-q", dir.File("nimbus.zip"), "bin/nimbus-lambda", "-d", dir.path()}).exit_code, 0);
  const std::vector<std::string> beyond = InstructionsBeyondX8664V2(dir.File("bin/nimbus-lambda"));
  EXPECT_TRUE(beyond.empty()) << beyond.size() << " instructions beyond x86-64-v2 in bin/nimbus-lambda, such as\n"
                              << FirstFew(beyond);
}

// The check above is no check unless it finds such code where there is some: the program built
// for x86-64-v3 has AVX in its loop. The package refuses it, saying why and what to do, unless
// told to allow it.
TEST(LambdaPackage, ABinaryBuiltForMoreThanX8664V2IsRefused) {
  EXPECT_FALSE(InstructionsBeyondX8664V2(CPU_SPECIFIC_PROGRAM).empty());
  TempDir dir;
  const CommandResult refused =
      RunNimbus({"lambda", "package", "--out", dir.File("p.zip"), "--binary", CPU_SPECIFIC_PROGRAM});
  EXPECT_EQ(refused.exit_code, 2);
  for (const char* part : {"is built for x86-64-v3:", "instructions beyond x86-64-v2", "illegal instruction",
                           "-DNIMBUS_NATIVE=OFF", "--allow-cpu-specific"}) {
    EXPECT_NE(refused.err.find(part), std::string::npos) << part << " not in:\n" << refused.err;
  }
  EXPECT_FALSE(FileExists(dir.File("p.zip")));
  const CommandResult allowed = RunNimbus(
      {"lambda", "package", "--out", dir.File("p.zip"), "--binary", CPU_SPECIFIC_PROGRAM, "--allow-cpu-specific"});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_NE(allowed.err.find("warning: " CPU_SPECIFIC_PROGRAM " is built for x86-64-v3"), std::string::npos)
      << allowed.err;
  EXPECT_NE(allowed.out.find("(built for x86-64-v3)"), std::string::npos) << allowed.out;
  EXPECT_TRUE(FileExists(dir.File("p.zip")));
}

// A program without nimbus in it records nothing: packaged, with a warning that nothing was
// checked. What is not an ELF program cannot be a function's binary at all.
TEST(LambdaPackage, AProgramWithoutABuildTargetIsPackagedWithAWarning) {
  TempDir dir;
  const CommandResult unknown = RunNimbus({"lambda", "package", "--out", dir.File("p.zip"), "--binary", "/bin/true"});
  EXPECT_EQ(unknown.exit_code, 0) << unknown.err;
  EXPECT_NE(unknown.err.find("warning: /bin/true records no build target"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.out.find("(no build target recorded)"), std::string::npos) << unknown.out;
  WriteTextFile(dir.File("script"), "#!/bin/sh\nexit 0\n");
  const CommandResult script = RunNimbus({"lambda", "package", "--out", dir.File("s.zip"), "--binary", dir.File("script")});
  EXPECT_EQ(script.exit_code, 2);
  EXPECT_NE(script.err.find("script: not a 64-bit little-endian ELF file"), std::string::npos) << script.err;
}

TEST(LambdaBootstrap, ABadEventIsReportedAsAFunctionError) {
  Emulated lambda;
  HttpRequest request;
  request.method = "POST";
  request.url = lambda.endpoint() + "/2015-03-31/functions/nimbus-worker/invocations";
  request.headers = {{"Authorization", "AWS4-HMAC-SHA256 Credential=testing/20261130/us-east-1/lambda/aws4_request"},
                     {"X-Amz-Invocation-Type", "RequestResponse"}};
  request.body = "this is not an event";
  Result<HttpResponse> response = HttpSend(request);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->headers["x-amz-function-error"], "Unhandled");
  EXPECT_NE(response->body.find("InvalidEvent"), std::string::npos) << response->body;
  // A number beyond double's range (what fuzzing found throwing in the JSON readers) is a bad
  // event too, not a crashed function.
  request.body = R"({"connect": "tcp://127.0.0.1:1", "worker": 1e999})";
  response = HttpSend(request);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->headers["x-amz-function-error"], "Unhandled");
  EXPECT_NE(response->body.find("InvalidEvent"), std::string::npos) << response->body;
  // A worker number written as a double beyond any integer, too (its cast would be undefined).
  request.body = R"({"connect": "tcp://127.0.0.1:1", "run": 1, "worker": 1e300})";
  response = HttpSend(request);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_NE(response->body.find("InvalidEvent"), std::string::npos) << response->body;
  // A malformed CurveZMQ key, too.
  request.body = R"({"connect": "tcp://127.0.0.1:1", "run": 1, "worker": 0, "server_key": "short"})";
  response = HttpSend(request);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_NE(response->body.find("server_key: not a CURVE key"), std::string::npos) << response->body;
  // Unsigned requests and unknown functions are refused as Lambda refuses them.
  request.headers.erase(request.headers.begin());
  EXPECT_EQ(HttpSend(request)->status, 403);
  request.url = lambda.endpoint() + "/2015-03-31/functions/other/invocations";
  EXPECT_EQ(HttpSend(request)->status, 404);
}

TEST(LambdaCli, HelpAndErrors) {
  EXPECT_EQ(RunNimbus({"lambda", "--help"}).exit_code, 0);
  EXPECT_EQ(RunNimbus({"lambda", "package", "--help"}).exit_code, 0);
  EXPECT_EQ(RunNimbus({"lambda", "frobnicate"}).exit_code, 2);
  const CommandResult bad = RunNimbus({"lambda", "emulate", "--bootstrap", "/nonexistent/bootstrap"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("is not an executable"), std::string::npos) << bad.err;
  const CommandResult outside = RunCommand({NIMBUS_LAMBDA_BINARY});
  EXPECT_EQ(outside.exit_code, 2);
  EXPECT_NE(outside.err.find("AWS_LAMBDA_RUNTIME_API is not set"), std::string::npos) << outside.err;
}

}  // namespace
}  // namespace nimbus::testing
