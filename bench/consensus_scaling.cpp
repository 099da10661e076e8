// Consensus benchmark (issue 6): what a round costs as the number of features d grows at a
// fixed number of nonzeros per row, for the dense and the general form of consensus and for
// the three ways workers meet: process workers around a master (star over ZeroMQ), MPI ranks
// around a master rank (star over MPI), and MPI ranks that all reduce (no master).
//
// For every d it generates power-law data (as text: a few features in most rows, most
// features in a few), splits it into K shards, runs each configuration for R rounds with a
// trace, and reports per round (medians over rounds 1..R-1): the round's wall time, the
// master's own work, master plus transport (the round less its slowest worker), its share of
// the round, and the bytes through the busiest node (the master; for allreduce, one rank).
// The peak memory is the largest process's (GNU time). Then it solves the largest problem to
// the default tolerance on threads, to show it fits in this machine's memory.
//
// The dense form is run up to DENSE_MAX_D features (default 10^6): beyond, K dense copies of
// the model and its companions do not fit (at d = 10^7 and K = 16 each worker holds about
// 1.5 GB and the kernel's OOM killer ends the run on a 24 GiB machine).
//
// usage: consensus_scaling NIMBUS [ROWS NNZ_PER_ROW ROUNDS WORKERS D1,D2,...]
//        (BENCH_DIR=DIR keeps the data and the traces, and reuses data already there;
//        DENSE_MAX_D=D runs the dense form up to d = D)
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Json = nlohmann::json;

std::string work_dir;
std::string nimbus;

void Run(const std::string& command) {
  if (std::system(command.c_str()) != 0) {
    std::fprintf(stderr, "failed: %s\n", command.c_str());
    std::exit(1);
  }
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Config {
  std::string name;    // as printed
  std::string prefix;  // what runs nimbus
  std::string extra;   // options of the runtime
};

struct Figures {
  double round_ms = 0, compute_ms = 0, overhead_ms = 0, master_ms = 0, share = 0;
  double megabytes = 0;  // through the busiest node per round
  double peak_gb = 0;
};

Figures Measure(const Config& config, const std::string& shards, const std::string& form, int rounds,
                const std::string& tag) {
  const std::string trace = work_dir + "/" + tag + ".jsonl";
  const std::string summary = work_dir + "/" + tag + ".json";
  const std::string memory = work_dir + "/" + tag + ".rss";
  Run("/usr/bin/time -f %M -o " + memory + " " + config.prefix + " " + nimbus + " train --quiet --data " + shards +
      " --l1 1e-5 --consensus " + form + " --max-iter " + std::to_string(rounds) +
      " --eps-abs 0 --eps-rel 1e-300 --trace " + trace + " --summary-json " + summary + " " + config.extra);
  Figures f;
  std::vector<double> round, compute, overhead, master, bytes;
  std::istringstream lines(Read(trace));
  for (std::string line; std::getline(lines, line);) {
    const Json e = Json::parse(line);
    if (e["event"] != "round" || e["round"].get<int>() == 0) continue;
    const double wall = e["wait_seconds"].get<double>() + e["master_seconds"].get<double>();
    double slowest = 0, moved = 0;
    for (const Json& w : e["workers"]) {
      slowest = std::max(slowest, w["compute_seconds"].get<double>());
      moved += static_cast<double>(w["bytes_in"].get<int64_t>() + w["bytes_out"].get<int64_t>());
    }
    round.push_back(wall);
    compute.push_back(slowest);
    overhead.push_back(wall - slowest);
    master.push_back(e["master_seconds"].get<double>());
    bytes.push_back(moved);
  }
  f.round_ms = 1e3 * Median(round);
  f.compute_ms = 1e3 * Median(compute);
  f.overhead_ms = 1e3 * Median(overhead);
  f.master_ms = 1e3 * Median(master);
  f.share = f.overhead_ms / f.round_ms;
  const Json s = Json::parse(Read(summary));
  f.megabytes = Median(bytes) / 1e6;
  if (f.megabytes == 0) {  // allreduce: every rank moves the same; rank 0's count
    f.megabytes = static_cast<double>(s["bytes_sent"].get<int64_t>() + s["bytes_received"].get<int64_t>()) /
                  s["rounds"].get<double>() / 1e6;
  }
  f.peak_gb = std::atof(Read(memory).c_str()) / 1e6;  // KiB
  return f;
}

std::vector<long> ParseList(const std::string& text) {
  std::vector<long> values;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) values.push_back(std::atol(item.c_str()));
  return values;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: consensus_scaling NIMBUS [ROWS NNZ_PER_ROW ROUNDS WORKERS D1,D2,...]\n");
    return 2;
  }
  nimbus = argv[1];
  const long rows = argc > 2 ? std::atol(argv[2]) : 200000;
  const long nnz = argc > 3 ? std::atol(argv[3]) : 40;
  const int rounds = argc > 4 ? std::atoi(argv[4]) : 6;
  const int workers = argc > 5 ? std::atoi(argv[5]) : 16;
  const std::vector<long> dims = ParseList(argc > 6 ? argv[6] : "10000,80000,1000000,10000000");
  const char* dense_max = std::getenv("DENSE_MAX_D");
  const long dense_max_d = dense_max != nullptr ? std::atol(dense_max) : 1000000;
  const char* kept = std::getenv("BENCH_DIR");
  if (kept != nullptr) {
    work_dir = kept;
    Run("mkdir -p " + work_dir);
  } else {
    char pattern[] = "/tmp/nimbus-consensus-XXXXXX";
    work_dir = mkdtemp(pattern);
  }
  const std::string mpirun = "mpirun --allow-run-as-root --oversubscribe -n ";
  const std::vector<Config> configs = {
      {"process star", "", "--runtime process --workers " + std::to_string(workers)},
      {"mpi star", mpirun + std::to_string(workers + 1), "--runtime mpi"},
      {"mpi allreduce", mpirun + std::to_string(workers), "--runtime mpi --topology allreduce"},
  };
  std::printf("consensus benchmark: %ld rows, %ld nonzeros per row (power law), K = %d, %d rounds; files in %s\n", rows,
              nnz, workers, rounds, work_dir.c_str());
  std::printf("per round, medians over rounds 1..%d; overhead = master + transport = round - slowest worker\n\n",
              rounds - 1);
  std::printf("%10s  %-8s %-14s %10s %10s %10s %10s %7s %12s %8s\n", "d", "form", "topology", "round ms", "slowest",
              "master ms", "overhead", "share", "MB/round", "peak GB");
  std::string largest;
  for (const long d : dims) {
    const std::string data = work_dir + "/d" + std::to_string(d) + ".svm";
    const std::string shards = work_dir + "/d" + std::to_string(d) + "-shards";
    if (access((shards + "/manifest.json").c_str(), F_OK) != 0) {
      Run(nimbus + " gen --rows " + std::to_string(rows) + " --cols " + std::to_string(d) + " --nnz-per-row " +
          std::to_string(nnz) + " --power-law 1 --seed 1 --out " + data + " > /dev/null");
      Run(nimbus + " split --data " + data + " --shards " + std::to_string(workers) + " --out " + shards + " > /dev/null");
    }
    largest = shards;
    for (const std::string form : {"general", "dense"}) {
      if (form == "dense" && d > dense_max_d) {
        std::printf("%10ld  %-8s not run: K dense copies of the model do not fit (DENSE_MAX_D)\n", d, form.c_str());
        continue;
      }
      for (const Config& config : configs) {
        const std::string tag = "d" + std::to_string(d) + "-" + form + "-" + config.name.substr(0, config.name.find(' ')) +
                                "-" + config.name.substr(config.name.find(' ') + 1);
        const Figures f = Measure(config, shards, form, rounds, tag);
        std::printf("%10ld  %-8s %-14s %10.1f %10.1f %10.2f %10.1f %6.1f%% %12.2f %8.2f\n", d, form.c_str(),
                    config.name.c_str(), f.round_ms, f.compute_ms, f.master_ms, f.overhead_ms, 100 * f.share,
                    f.megabytes, f.peak_gb);
        std::fflush(stdout);
      }
    }
  }
  // Lean messages: whole solves to the default tolerance on process workers, doubles against
  // float32, at the largest d the dense form ran (or the largest d).
  std::string lean_shards = largest;
  long lean_d = dims.back();
  for (const long d : dims) {
    if (d <= dense_max_d) {
      lean_shards = work_dir + "/d" + std::to_string(d) + "-shards";
      lean_d = d;
    }
  }
  std::printf("\nlean messages, d = %ld, general form, process star, whole solves to the default tolerance:\n", lean_d);
  std::printf("%-10s %10s %8s %12s %10s %16s\n", "precision", "iterations", "rounds", "lean rounds", "MB/round",
              "solve s");
  for (const std::string precision : {"float64", "float32"}) {
    const std::string tag = work_dir + "/lean-" + precision;
    Run(nimbus + " train --quiet --data " + lean_shards + " --l1 1e-5 --runtime process --message-precision " +
        precision + " --summary-json " + tag + ".json");
    const Json s = Json::parse(Read(tag + ".json"));
    std::printf("%-10s %10d %8d %12d %10.2f %16.2f\n", precision.c_str(), s["iterations"].get<int>(),
                s["rounds"].get<int>(), s["lean_rounds"].get<int>(),
                static_cast<double>(s["bytes_sent"].get<int64_t>() + s["bytes_received"].get<int64_t>()) /
                    s["rounds"].get<double>() / 1e6,
                s["solve_seconds"].get<double>());
    std::fflush(stdout);
  }

  // The largest problem, solved: general form, threads (one process holds the data, every
  // worker's state and the master).
  const std::string summary = work_dir + "/largest-solve.json";
  const std::string memory = work_dir + "/largest-solve.rss";
  Run("/usr/bin/time -f %M -o " + memory + " " + nimbus + " train --quiet --data " + largest +
      " --l1 1e-5 --summary-json " + summary);
  const Json s = Json::parse(Read(summary));
  std::printf("\nlargest d solved on threads (K = %d, general form, default tolerance): %s after %d iterations, "
              "objective %.10g, %.1f s, peak memory %.2f GB\n",
              workers, s["termination"].get<std::string>().c_str(), s["iterations"].get<int>(),
              s["objective"].get<double>(), s["setup_seconds"].get<double>() + s["solve_seconds"].get<double>(),
              std::atof(Read(memory).c_str()) / 1e6);
  if (kept == nullptr) Run("rm -rf " + work_dir);
  return 0;
}
