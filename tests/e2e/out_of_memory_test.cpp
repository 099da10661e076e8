// Workers that run out of memory, as Lithops users meet them (its issue #917) and as nimbus
// reports them: under an address-space limit (prlimit --as: an allocation or a mapping fails,
// and the worker says so), and in a cgroup with a memory limit (the kernel's OOM killer sends
// SIGKILL, and the worker's HELLO had said its limit). Either way the run ends by itself with
// a report that names the shard, what it needs against what the worker had, and what to do.
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "e2e_support.h"

namespace nimbus::testing {
namespace {

// 200,000 rows of 30 nonzeros over 2 workers: 3,000,000 nonzeros per shard, about 41 MB of
// data for a worker (nimbus's estimate). As a split store (a shard the master knows the size
// of) and as text each worker reads its part of (whose size is known once it is read).
class OutOfMemory : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const CommandResult gen = RunNimbus({"gen", "--rows", "200000", "--cols", "5000", "--nnz-per-row", "30", "--seed",
                                         "3", "--out", dir_->File("big.svm")});
    ASSERT_EQ(gen.exit_code, 0) << gen.err;
    const CommandResult split =
        RunNimbus({"split", "--data", dir_->File("big.svm"), "--shards", "2", "--out", dir_->File("shards")});
    ASSERT_EQ(split.exit_code, 0) << split.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  // `nimbus train` on the command runtime, each worker started by `launch_prefix nimbus worker`.
  static CommandResult TrainWith(const std::string& launch_prefix, const std::string& data = "shards") {
    return RunCommand({"timeout", "120", NIMBUS_BINARY, "train", "--quiet", "--data", dir_->File(data), "--l1",
                       "1e-4", "--workers", "2", "--runtime", "command", "--max-restarts", "1", "--launch",
                       launch_prefix + NIMBUS_BINARY + " worker {args}"});
  }
  static void ExpectReported(const CommandResult& run, const std::string& limit) {
    EXPECT_EQ(run.exit_code, 1) << run.err;  // ended by itself (timeout's would be 124), with an error
    for (const std::string& part : {std::string("ran out of memory"), std::string("shard shard-0000"),
                                    std::string("(100000 rows, 3000000 nonzeros) needs about 41 MB of data"),
                                    "the worker's limit is " + limit, std::string("Use more workers")}) {
      EXPECT_NE(run.err.find(part), std::string::npos) << "'" << part << "' missing from:\n" << run.err;
    }
  }
  static TempDir* dir_;
};
TempDir* OutOfMemory::dir_ = nullptr;

// A worker reading its part of the text past its address-space limit: the report names the
// part and its text's size against the limit.
TEST_F(OutOfMemory, AWorkerReadingItsPartPastItsLimitSaysSo) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's shadow memory needs more address space than any limit here leaves";
#endif
  const CommandResult run = TrainWith("prlimit --as=" + std::to_string(60 << 20) + " ", "big.svm");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  for (const std::string& part : {std::string("ran out of memory"), std::string("said BYE: fatal: out of memory"),
                                  " of " + dir_->File("big.svm") + " (", std::string("reading part "), std::string(" MB of text"),
                                  std::string("the worker's limit is 60 MB"), std::string("Use more workers")}) {
    EXPECT_NE(run.err.find(part), std::string::npos) << "'" << part << "' missing from:\n" << run.err;
  }
}

// --worker-memory-mb holds each process or command worker to its memory as a function's is
// held (in a cgroup of its own where one can be made, else by its address space): a worker
// whose part does not fit runs out, is reported by name against the limit and not retried; a
// limit that fits changes nothing.
TEST_F(OutOfMemory, TheProcessAndCommandRuntimesHoldEachWorkerToItsMemoryLimit) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's shadow memory is not the worker's";
#endif
  const std::vector<std::vector<std::string>> runtimes = {
      {"--runtime", "process"}, {"--runtime", "command", "--launch", std::string(NIMBUS_BINARY) + " worker {args}"}};
  for (const std::vector<std::string>& runtime : runtimes) {
    SCOPED_TRACE(runtime[1]);
    std::vector<std::string> args = {"timeout", "120", NIMBUS_BINARY, "train", "--quiet", "--data",
                                     dir_->File("big.svm"), "--l1", "1e-4", "--workers", "2", "--worker-memory-mb", "40"};
    args.insert(args.end(), runtime.begin(), runtime.end());
    const CommandResult run = RunCommand(args);
    EXPECT_EQ(run.exit_code, 1) << run.err;
    for (const std::string& part : {std::string("ran out of memory"), std::string("reading part "),
                                    std::string(" MB of text"), std::string("the worker's limit is 40 MB"),
                                    std::string("Use more workers")}) {
      EXPECT_NE(run.err.find(part), std::string::npos) << "'" << part << "' missing from:\n" << run.err;
    }
  }
  const CommandResult roomy = RunCommand({"timeout", "120", NIMBUS_BINARY, "train", "--quiet", "--data",
                                          dir_->File("big.svm"), "--l1", "1e-4", "--workers", "2", "--runtime",
                                          "process", "--worker-memory-mb", "1000", "--max-iter", "3"});
  EXPECT_EQ(roomy.exit_code, 0) << roomy.err;
}

TEST_F(OutOfMemory, AWorkerPastItsAddressSpaceLimitSaysSoAndIsNotRetried) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's shadow memory needs more address space than any limit here leaves";
#endif
  const CommandResult run = TrainWith("prlimit --as=" + std::to_string(60 << 20) + " ");
  ExpectReported(run, "60 MB");
  EXPECT_NE(run.err.find("said BYE: fatal: out of memory"), std::string::npos) << run.err;
}

// The memory cgroup of this process (v2, or v1's memory controller), where a child can be made.
std::string MemoryCgroup() {
  std::ifstream cgroups("/proc/self/cgroup");
  for (std::string line; std::getline(cgroups, line);) {
    if (const auto at = line.find(":memory:"); at != std::string::npos) return "/sys/fs/cgroup/memory" + line.substr(at + 8);
    if (line.starts_with("0::") && FileExists("/sys/fs/cgroup" + line.substr(3) + "/memory.max")) {
      return "/sys/fs/cgroup" + line.substr(3);
    }
  }
  return "";
}

TEST_F(OutOfMemory, AWorkerKilledByItsCgroupsMemoryLimitIsReportedAsOutOfMemory) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's runtime (shadow memory, quarantine) may fill the 20 MB before the worker says HELLO";
#endif
  const std::string parent = MemoryCgroup();
  const std::string cgroup = parent + "/nimbus-oom-" + std::to_string(::getpid());
  if (parent.empty() || ::mkdir(cgroup.c_str(), 0755) != 0) {
    GTEST_SKIP() << "no memory cgroup can be made here (" << (parent.empty() ? "none found" : cgroup) << ")";
  }
  const bool v1 = parent.starts_with("/sys/fs/cgroup/memory");
  WriteTextFile(cgroup + (v1 ? "/memory.limit_in_bytes" : "/memory.max"), std::to_string(20 << 20));
  const CommandResult run = TrainWith("echo $$ > " + cgroup + "/cgroup.procs && exec ");
  ExpectReported(run, "20 MB");
  EXPECT_NE(run.err.find("killed by signal 9"), std::string::npos) << run.err;
  for (int i = 0; i < 50 && ::rmdir(cgroup.c_str()) != 0; ++i) ::usleep(100000);  // once its processes are gone
}

}  // namespace
}  // namespace nimbus::testing
