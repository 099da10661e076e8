// Runtime benchmark (issue 3): what the process runtime costs over in-process threads.
//
// For each feature count d and worker count K it runs the same problem for a fixed number of
// rounds on `threads` and on `process` workers and reports, per round (medians over rounds
// 1..R), the round's wall time, the slowest worker's compute time, their difference (master
// plus transport: the overhead), its share of the round, and the bytes on the wire. For the
// process runtime it also splits the cold start (launch to the first REPLY) into process
// start, connect (to HELLO), shard load and the first round.
//
// usage: runtime_overhead NIMBUS [ROWS NNZ_PER_ROW ROUNDS]
#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nimbus/core/file_io.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/data/manifest.h"
#include "nimbus/data/store.h"
#include "nimbus/data/synthetic.h"
#include "nimbus/nimbus.h"

namespace nimbus {
namespace {

using Json = nlohmann::json;

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct RunFigures {
  double wall = 0, compute = 0, overhead = 0;  // per round, medians over rounds 1..R
  double master = 0;  // the master's own work per round
  double megabytes_per_round = 0;
  // Cold start, medians over workers: launch to process start, to HELLO, shard load, and
  // launch to the first REPLY.
  double process_start = 0, connect = 0, load = 0, first_reply = 0, load_bytes = 0;
};

// `rounds` ADMM rounds on the store's shards, on `runtime` (threads or process).
RunFigures Run(const std::string& store_path, RuntimeKind runtime, const std::string& binary, int rounds) {
  SolveOptions options;
  options.l1 = 1e-6;
  options.algorithm = Algorithm::kAdmm;
  options.admm.max_iterations = rounds;
  options.admm.eps_abs = 1e-300;  // run exactly `rounds` rounds
  options.admm.eps_rel = 1e-300;
  options.runtime.kind = runtime;
  options.runtime.worker_program = binary;
  if (const char* listen = std::getenv("BENCH_LISTEN")) options.runtime.listen = listen;
  std::vector<Json> events;
  options.on_trace = [&events](std::string_view line) { events.push_back(Json::parse(line)); };
  Result<SolveResult> solution = Solve(TrainingData::Store(store_path), options);
  if (!solution.ok() || !solution->summary.ok()) {
    std::fprintf(stderr, "run failed: %s\n",
                 solution.ok() ? solution->summary.message.c_str() : solution.status().ToString().c_str());
    std::exit(1);
  }
  RunFigures f;
  std::vector<double> wall, compute, overhead, master, start, connect, load, first;
  const Json* setup = nullptr;
  for (const Json& e : events) {
    if (e["event"] == "setup") {
      setup = &e;
      for (const Json& s : e["shards"]) {
        start.push_back(s["process_start"].get<double>() - s["invoke"].get<double>());
        connect.push_back(s["hello"].get<double>() - s["process_start"].get<double>());
        load.push_back(s["load_seconds"].get<double>());
        f.load_bytes += static_cast<double>(s["nnz"].get<int64_t>()) * 12;
      }
    }
    if (e["event"] != "round") continue;
    if (e["round"].get<int>() == 0 && setup != nullptr) {
      // Launch to the first REPLY, worker by worker.
      for (std::size_t i = 0; i < e["workers"].size(); ++i) {
        first.push_back(e["workers"][i]["end"].get<double>() - (*setup)["shards"][i]["invoke"].get<double>());
      }
      continue;
    }
    double slowest = 0;
    for (const Json& w : e["workers"]) slowest = std::max(slowest, w["compute_seconds"].get<double>());
    const double round_wall = e["wait_seconds"].get<double>() + e["master_seconds"].get<double>();
    wall.push_back(round_wall);
    compute.push_back(slowest);
    overhead.push_back(round_wall - slowest);
    master.push_back(e["master_seconds"].get<double>());
  }
  f.wall = Median(wall);
  f.compute = Median(compute);
  f.overhead = Median(overhead);
  f.master = Median(master);
  const Summary& s = solution->summary;
  f.megabytes_per_round = static_cast<double>(s.bytes_sent + s.bytes_received) / std::max(1, s.rounds) / 1e6;
  f.process_start = Median(start);
  f.connect = Median(connect);
  f.load = Median(load);
  f.first_reply = Median(first);
  f.load_bytes /= std::max<std::size_t>(1, load.size());
  return f;
}

// Field by field, the median over runs.
RunFigures MedianRun(const std::vector<RunFigures>& runs) {
  auto median = [&](double RunFigures::*field) {
    std::vector<double> values;
    for (const RunFigures& run : runs) values.push_back(run.*field);
    return Median(values);
  };
  RunFigures m;
  for (double RunFigures::*field :
       {&RunFigures::wall, &RunFigures::compute, &RunFigures::overhead, &RunFigures::master,
        &RunFigures::megabytes_per_round, &RunFigures::process_start, &RunFigures::connect, &RunFigures::load,
        &RunFigures::first_reply, &RunFigures::load_bytes}) {
    m.*field = median(field);
  }
  return m;
}

}  // namespace
}  // namespace nimbus

int main(int argc, char** argv) {
  using namespace nimbus;
  mallopt(M_MMAP_THRESHOLD, 256 << 20);  // as the nimbus binary does (apps/main.cpp)
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  if (argc < 2) {
    std::fprintf(stderr, "usage: runtime_overhead NIMBUS [ROWS NNZ_PER_ROW ROUNDS]\n");
    return 2;
  }
  const std::string binary = argv[1];
  const int64_t rows = argc > 2 ? std::atoll(argv[2]) : 100000;
  const int64_t nnz_per_row = argc > 3 ? std::atoll(argv[3]) : 20;
  const int rounds = argc > 4 ? std::atoi(argv[4]) : 8;
  // BENCH_DIMS=100000 BENCH_WORKERS=8 narrows the grid.
  const auto list = [](const char* name, std::vector<int64_t> fallback) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') return fallback;
    std::vector<int64_t> values;
    for (char* p = const_cast<char*>(text); *p != '\0';) {
      values.push_back(std::strtoll(p, &p, 10));
      if (*p == ',') ++p;
    }
    return values;
  };
  const std::vector<int64_t> dims = list("BENCH_DIMS", {10000, 100000, 1000000});
  const std::vector<int64_t> worker_counts = list("BENCH_WORKERS", {2, 4, 8, 16});
  const int64_t repeats = list("BENCH_REPEATS", {1}).front();

  Result<TemporaryDirectory> directory = TemporaryDirectory::Create("nimbus-bench-runtime");
  if (!directory.ok()) return 1;
  std::printf("runtime overhead: %lld rows x %lld nonzeros per row, %d rounds per run, %lld runs per runtime;\n"
              "per-round figures are medians of rounds 1..%d (and over runs); share = (round - slowest worker's\n"
              "compute time) / round\n\n",
              static_cast<long long>(rows), static_cast<long long>(nnz_per_row), rounds,
              static_cast<long long>(repeats), rounds);
  std::printf("| d | K | threads: round, round - slowest | process: round | process - threads | slowest worker |"
              " round - slowest | share | master | MB/round | cold start: process start, connect, load (MB/s),"
              " first REPLY |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const int64_t d : dims) {
    SyntheticOptions gen;
    gen.rows = rows;
    gen.cols = d;
    gen.nnz_per_row = nnz_per_row;
    gen.seed = 3;
    const std::string path = directory->path() + "/d" + std::to_string(d) + ".svm";
    if (!WriteSyntheticLibsvm(gen, path).ok()) return 1;
    Result<Dataset> data = ReadLibsvmFile(path);
    if (!data.ok()) return 1;
    data->matrix.cols = d;
    for (const int64_t workers : worker_counts) {
      const int k = static_cast<int>(workers);
      const std::string store_path = directory->path() + "/d" + std::to_string(d) + "k" + std::to_string(k);
      Result<std::unique_ptr<Store>> store = OpenStore(store_path, true);
      if (!store.ok() || !WriteShards(*data, k, path, **store).ok()) return 1;
      // Threads and processes in turn, `repeats` times; each figure is the median over the runs.
      std::vector<RunFigures> thread_runs, process_runs;
      for (int64_t r = 0; r < repeats; ++r) {
        thread_runs.push_back(Run(store_path, RuntimeKind::kThreads, binary, rounds));
        process_runs.push_back(Run(store_path, RuntimeKind::kProcess, binary, rounds));
      }
      const RunFigures t = MedianRun(thread_runs);
      const RunFigures p = MedianRun(process_runs);
      std::printf("| %lld | %d | %.1f ms, %.2f ms | %.1f ms | %+.1f ms | %.1f ms | %.2f ms | %.1f%% | %.2f ms | %.2f |"
                  " %.1f ms, %.1f ms, %.1f ms (%.0f MB/s), %.0f ms |\n",
                  static_cast<long long>(d), k, t.wall * 1e3, t.overhead * 1e3, p.wall * 1e3, (p.wall - t.wall) * 1e3,
                  p.compute * 1e3,
                  p.overhead * 1e3, 100 * p.overhead / p.wall, p.master * 1e3, p.megabytes_per_round,
                  p.process_start * 1e3,
                  p.connect * 1e3, p.load * 1e3, p.load_bytes / std::max(p.load, 1e-9) / 1e6, p.first_reply * 1e3);
      std::fflush(stdout);
    }
  }
  return 0;
}
