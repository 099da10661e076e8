// Load benchmark (issue 7): many worker processes at once on this machine, run after run in
// one master process. For each of RUNS solves with K `nimbus worker` processes (small shards)
// it reports the master's open file descriptors and threads before and after, its resident
// memory, how long the K starts took, the rounds, the slowest master step, the restarts and
// dropped messages (a master too busy to hear heartbeats replaces workers), and whether the
// model is the first run's, bit for bit. A leak shows as descriptors, threads or memory
// growing from run to run.
//
// usage: load NIMBUS [WORKERS RUNS ROWS_PER_WORKER]     (defaults: 256 10 200)
#include <dirent.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "nimbus/core/file_io.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/data/manifest.h"
#include "nimbus/data/store.h"
#include "nimbus/data/synthetic.h"
#include "nimbus/nimbus.h"

namespace {

int OpenDescriptors() {
  int count = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (readdir(dir) != nullptr) ++count;
    closedir(dir);
    count -= 3;  // ".", ".." and the directory itself
  }
  return count;
}

// A field of /proc/self/status ("VmRSS", "Threads"), as its first number.
long StatusField(const std::string& name) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + ":", 0) == 0) return std::atol(line.c_str() + name.size() + 1);
  }
  return -1;
}

void Check(const nimbus::Status& status) {
  if (!status.ok()) {
    std::fprintf(stderr, "load: %s\n", status.ToString().c_str());
    std::exit(1);
  }
}

// The slowest master step of a run, from its trace's round events.
struct MasterSteps {
  void Add(std::string_view line) {
    const auto at = line.find("\"master_seconds\":");
    if (line.find("\"event\":\"round\"") == std::string_view::npos || at == std::string_view::npos) return;
    slowest = std::max(slowest, std::strtod(std::string(line.substr(at + 17, 32)).c_str(), nullptr));
  }
  double slowest = 0;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace nimbus;
  if (argc < 2) {
    std::fprintf(stderr, "usage: load NIMBUS [WORKERS RUNS ROWS_PER_WORKER [insecure]]\n");
    return 2;
  }
  const std::string binary = argv[1];
  const int workers = argc > 2 ? std::atoi(argv[2]) : 256;
  const int runs = argc > 3 ? std::atoi(argv[3]) : 10;
  const int64_t rows_per_worker = argc > 4 ? std::atoll(argv[4]) : 200;
  // By default the run's workers authenticate with CurveZMQ as in every run; "insecure"
  // measures plaintext for comparison.
  const bool insecure = argc > 5 && std::string(argv[5]) == "insecure";

  Result<TemporaryDirectory> directory = TemporaryDirectory::Create("nimbus-bench-load");
  Check(directory.status());
  SyntheticOptions gen;
  gen.rows = workers * rows_per_worker;
  gen.cols = 2000;
  gen.nnz_per_row = 10;
  gen.seed = 11;
  const std::string path = directory->path() + "/data.svm";
  Check(WriteSyntheticLibsvm(gen, path).status());
  Result<Dataset> data = ReadLibsvmFile(path);
  Check(data.status());
  const std::string store_path = directory->path() + "/shards";
  Result<std::unique_ptr<Store>> store = OpenStore(store_path, true);
  Check(store.status());
  Result<Manifest> manifest = WriteShards(*data, workers, path, **store);
  Check(manifest.status());
  SolveOptions options;
  options.l1 = 1e-4;
  options.algorithm = Algorithm::kAdmm;
  options.runtime.kind = RuntimeKind::kProcess;
  options.runtime.worker_program = binary;
  options.runtime.insecure = insecure;
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);

  std::printf("load: %d worker processes, %lld rows each (%lld x %lld, %lld nonzeros), %d runs in one master, %s; "
              "open files limit %llu\n\n",
              workers, static_cast<long long>(rows_per_worker), static_cast<long long>(data->rows()),
              static_cast<long long>(data->cols()), static_cast<long long>(data->nnz()), runs,
              insecure ? "plaintext (--insecure)" : "CurveZMQ",
              static_cast<unsigned long long>(files.rlim_cur));
  std::printf("| run | fds before | fds after | threads after | RSS after | start of all K | rounds | solve |"
              " slowest master step | restarts | dropped | same model |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<double> first_model;
  for (int run = 1; run <= runs; ++run) {
    const int fds_before = OpenDescriptors();
    MasterSteps steps;
    options.on_trace = [&steps](std::string_view line) { steps.Add(line); };
    Result<SolveResult> solution = Solve(TrainingData::Store(store_path), options);
    Check(solution.status());
    if (first_model.empty()) first_model = solution->model.weights;
    const Summary& s = solution->summary;
    std::printf("| %d | %d | %d | %ld | %.0f MB | %.2f s | %d | %.2f s | %.1f ms | %lld | %lld | %s |\n", run,
                fds_before, OpenDescriptors(), StatusField("Threads"), StatusField("VmRSS") / 1024.0,
                s.setup_seconds, s.rounds, s.solve_seconds, steps.slowest * 1e3,
                static_cast<long long>(s.worker_restarts), static_cast<long long>(s.messages_dropped),
                solution->model.weights == first_model ? "yes" : "NO");
    std::fflush(stdout);
  }
  return 0;
}
