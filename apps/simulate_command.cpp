// nimbus simulate: predicted runs at many K and d from a profile of this machine, the
// calibration that measures the profile, and the check of the predictions against `nimbus
// scale`.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "calibration.h"
#include "cli_common.h"
#include "commands.h"
#include "nimbus/core/file_io.h"
#include "nimbus/core/format.h"
#include "nimbus/metrics/plot.h"
#include "nimbus/metrics/simulator.h"
#include "nimbus/runtime/launcher.h"
#include "scaling.h"
#include "solve_setup.h"

namespace nimbus::cli {
namespace {

int RunCalibrate(int argc, char** argv) {
  ProblemFlags problem;
  SolveOptions& solve_options = problem.options;
  std::string workers_text = "1,2,4,8,16", out = "nimbus-profile.json";
  bool quiet = false;
  int64_t repeat = 2;
  ArgParser parser("simulate calibrate", "--data FILE.svm [--workers 1,2,4,8,16] [--out PROFILE.json]",
                   "Measures the profile that 'nimbus simulate' runs on: the problem solved to the tolerance at each\n"
                   "K on the threads runtime with the master 'nimbus train' would run (--algorithm; workers computing\n"
                   "one at a time, so each worker's round is timed on its own): rounds, work and message vectors per\n"
                   "round; a few rounds of a wide generated problem, messages through ZeroMQ on 127.0.0.1, worker\n"
                   "process starts and shard loads. Takes about as long as the solves.");
  AddProblemOptions(parser, &problem);
  AddAlgorithmOptions(parser, &solve_options);
  parser.AddString("workers", "K1,K2,...", "the worker counts to measure, ascending", &workers_text);
  parser.AddInt("repeat", "N", "solves per K (the fastest counts)", &repeat);
  parser.AddString("out", "PROFILE.json", "where to write the profile", &out);
  parser.AddSwitch("quiet", "print nothing but errors", &quiet);
  parser.Require("data");
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code, 3)) return exit_code;
  const std::string command = "simulate calibrate";
  if (Status valid = ApplyProblemFlags(parser, &problem); !valid.ok()) return ReportError(command, valid);
  if (Status valid = solve_options.Validate(); !valid.ok()) return ReportError(command, valid);
  Result<std::vector<int64_t>> workers = ParseCountList(workers_text, "workers", 4096, /*ascending=*/true);
  if (!workers.ok()) return ReportError(command, workers.status());
  if (repeat < 1 || repeat > 100) return ReportError(command, InvalidArgument("--repeat: must be in [1, 100]"));
  if (Status writable = CheckWritableLocation(out); !writable.ok()) return ReportError(command, writable);
  Result<Plan> plan = PlanDataInMemory(TrainingDataOf(problem), workers->front(), solve_options.loss);
  if (!plan.ok()) return ReportError(command, plan.status());
  if (!plan->data) return ReportError(command, InvalidArgument("--data: give a LIBSVM file (it is split anew for each K)"));
  if (Status valid = SetProblem(solve_options, &*plan); !valid.ok()) {
    return ReportError(command, valid);
  }

  CalibrationOptions options;
  options.workers.assign(workers->begin(), workers->end());
  options.master = ChooseMaster(solve_options);
  options.worker = WorkerOptionsOf(solve_options);
  options.repetitions = static_cast<int>(repeat);
  options.executable = CurrentExecutable();
  if (!quiet) options.progress = [](const std::string& line) { std::fprintf(stderr, "  %s\n", line.c_str()); };
  Result<Profile> profile = Calibrate(*plan, options);
  if (!profile.ok()) return ReportError(command, profile.status());
  if (Status written = WriteFileAtomically(out, profile->ToJson()); !written.ok()) return ReportError(command, written);
  if (!quiet) {
    std::printf("wrote the profile of %s (%d cores, %s) to %s\n", profile->machine.c_str(), profile->cores,
                NameOf(profile->algorithm).data(), out.c_str());
  }
  return kExitOk;
}

// --latency-ms and friends: a platform's figures, each overriding the default when given.
struct PlatformFlags {
  std::string name = "lambda";
  int64_t cores = 0;
  double compute_speed = 0, latency_ms = 0, master_gbps = 0, worker_mbps = 0, launch_ms = 0, cold_start_ms = 0,
         cold_start_sigma = 0, storage_mbs = 0, storage_latency_ms = 0, jitter = 0, straggler_probability = 0,
         straggler_slowdown = 0;
  double relay_read_ns_per_byte = 0, relay_write_ns_per_byte = 0;
};

// The help shows Lambda's figures; --platform local takes its own from the profile.
void AddPlatformOptions(ArgParser& parser, PlatformFlags* f) {
  const Platform lambda = Platform::Lambda();
  f->cores = lambda.cores;
  f->compute_speed = lambda.compute_speed;
  f->latency_ms = lambda.latency_seconds * 1e3;
  f->master_gbps = lambda.master_bandwidth * 8 / 1e9;
  f->worker_mbps = lambda.worker_bandwidth * 8 / 1e6;
  f->launch_ms = lambda.launch_seconds * 1e3;
  f->cold_start_ms = lambda.cold_start_median * 1e3;
  f->cold_start_sigma = lambda.cold_start_sigma;
  f->storage_mbs = lambda.storage_bandwidth / 1e6;
  f->storage_latency_ms = lambda.storage_latency_seconds * 1e3;
  f->jitter = lambda.jitter_sigma;
  f->straggler_probability = lambda.straggler_probability;
  f->straggler_slowdown = lambda.straggler_slowdown;
  parser.AddString("platform", "NAME", "lambda (functions and an EC2 master) or local (processes on this machine;\n"
                   "                            the figures below then default to the profile's)", &f->name);
  parser.AddInt("cores", "N", "CPUs the workers share; 0: one each", &f->cores);
  parser.AddDouble("compute-speed", "X", "a worker's speed over one core of the profiled machine", &f->compute_speed);
  parser.AddDouble("latency-ms", "MS", "one message, one way", &f->latency_ms);
  parser.AddDouble("master-gbps", "GBIT/S", "the master's link, each direction", &f->master_gbps);
  parser.AddDouble("worker-mbps", "MBIT/S", "one worker's link", &f->worker_mbps);
  parser.AddDouble("launch-ms", "MS", "the master's time to launch one worker", &f->launch_ms);
  parser.AddDouble("cold-start-ms", "MS", "median launch-to-running time (lognormal)", &f->cold_start_ms);
  parser.AddDouble("cold-start-sigma", "S", "sigma of the cold start's log", &f->cold_start_sigma);
  parser.AddDouble("storage-mbs", "MB/S", "a worker's shard load bandwidth", &f->storage_mbs);
  parser.AddDouble("storage-latency-ms", "MS", "before a shard's first byte", &f->storage_latency_ms);
  parser.AddDouble("jitter", "S", "sigma of the lognormal noise on a worker's round", &f->jitter);
  parser.AddDouble("straggler-probability", "P", "chance per worker and round of a straggling round",
                   &f->straggler_probability);
  parser.AddDouble("straggler-slowdown", "X", "how many times slower a straggling round is", &f->straggler_slowdown);
  parser.AddDouble("relay-read-ns-per-byte", "NS", "shared cores: a relay on the same machine forwards every message\n"
                   "                            on one thread (as bench/link.sh's proxy does), at this CPU per byte\n"
                   "                            in reading it (the delay starts after) ...", &f->relay_read_ns_per_byte);
  parser.AddDouble("relay-write-ns-per-byte", "NS", "... and at this CPU per byte in writing it on, once due",
                   &f->relay_write_ns_per_byte);
}

Result<Platform> MakePlatform(const ArgParser& parser, const PlatformFlags& f, const Profile& profile) {
  Platform platform;
  if (f.name == "lambda") {
    platform = Platform::Lambda();
  } else if (f.name == "local") {
    platform = Platform::Local(profile);
  } else {
    return InvalidArgument("--platform: '" + f.name + "' is not one of lambda, local");
  }
  if (parser.Given("cores")) platform.cores = static_cast<int>(f.cores);
  if (parser.Given("compute-speed")) platform.compute_speed = f.compute_speed;
  if (parser.Given("latency-ms")) platform.latency_seconds = f.latency_ms / 1e3;
  if (parser.Given("master-gbps")) platform.master_bandwidth = f.master_gbps * 1e9 / 8;
  if (parser.Given("worker-mbps")) platform.worker_bandwidth = f.worker_mbps * 1e6 / 8;
  if (parser.Given("launch-ms")) platform.launch_seconds = f.launch_ms / 1e3;
  if (parser.Given("cold-start-ms")) platform.cold_start_median = f.cold_start_ms / 1e3;
  if (parser.Given("cold-start-sigma")) platform.cold_start_sigma = f.cold_start_sigma;
  if (parser.Given("storage-mbs")) platform.storage_bandwidth = f.storage_mbs * 1e6;
  if (parser.Given("storage-latency-ms")) platform.storage_latency_seconds = f.storage_latency_ms / 1e3;
  if (parser.Given("jitter")) platform.jitter_sigma = f.jitter;
  if (parser.Given("straggler-probability")) platform.straggler_probability = f.straggler_probability;
  if (parser.Given("straggler-slowdown")) platform.straggler_slowdown = f.straggler_slowdown;
  if (parser.Given("relay-read-ns-per-byte")) platform.relay_read_seconds_per_byte = f.relay_read_ns_per_byte / 1e9;
  if (parser.Given("relay-write-ns-per-byte")) platform.relay_write_seconds_per_byte = f.relay_write_ns_per_byte / 1e9;
  NIMBUS_RETURN_IF_ERROR(platform.Validate().WithContext("--platform " + f.name));
  return platform;
}

std::string DescribePlatform(const Platform& p) {
  auto link = [](double bytes_per_second, double unit, const char* name) {
    return bytes_per_second >= Platform::kNoWire ? std::string("no wire")
                                                 : Format("%.4g %s", 8 * bytes_per_second / unit, name);
  };
  return Format("platform %s: %s, speed %.2fx, latency %.3f ms, master %s, worker %s, cold start "
                "median %.0f ms (sigma %.2f), shard loads %.0f MB/s, jitter %.2f, stragglers %.3f x%.1f%s",
                p.name.c_str(),
                p.cores > 0 ? Format("%d shared cores (a message end: %.0f us + %.2f ns per byte)", p.cores,
                                     1e6 * p.message_cpu_seconds, 1e9 * p.message_cpu_seconds_per_byte).c_str()
                            : "a CPU per worker",
                p.compute_speed, 1e3 * p.latency_seconds, link(p.master_bandwidth, 1e9, "Gbit/s").c_str(),
                link(p.worker_bandwidth, 1e6, "Mbit/s").c_str(),
                1e3 * p.cold_start_median, p.cold_start_sigma, p.storage_bandwidth / 1e6, p.jitter_sigma,
                p.straggler_probability, p.straggler_slowdown,
                p.relay_read_seconds_per_byte + p.relay_write_seconds_per_byte > 0
                    ? Format(", through a relay on the same cores (%.2f ns per byte reading, %.2f writing)",
                             1e9 * p.relay_read_seconds_per_byte, 1e9 * p.relay_write_seconds_per_byte).c_str()
                    : "");
}

std::string SpreadText(double spread) { return spread > 0 ? Format("+%.1f%%", 100 * spread) : "-"; }

// The predictions for a `nimbus scale` run on this machine beside what it measured.
int Validate(const Profile& profile, Platform platform, const std::string& scale_path, double tolerance,
             const std::string& out, bool quiet) {
  const std::string command = "simulate";
  Result<ScaleResult> scale = ScaleResult::Read(scale_path);
  if (!scale.ok()) return ReportError(command, scale.status());
  if (scale->rows != profile.rows || scale->cols != profile.cols || scale->nnz != profile.nnz) {
    return ReportError(command, InvalidArgument(Format("--validate: %s is of another problem (%lld rows, %lld features, "
                                                       "%lld nonzeros) than the profile (%lld, %lld, %lld)",
                                                       scale_path.c_str(), static_cast<long long>(scale->rows),
                                                       static_cast<long long>(scale->cols),
                                                       static_cast<long long>(scale->nnz),
                                                       static_cast<long long>(profile.rows),
                                                       static_cast<long long>(profile.cols),
                                                       static_cast<long long>(profile.nnz))));
  }
  if (scale->algorithm != profile.algorithm) {
    return ReportError(command, InvalidArgument("--validate: " + scale_path + " ran " + NameOf(scale->algorithm).data() +
                                                ", the profile measured " + NameOf(profile.algorithm).data() +
                                                " (give both the same --algorithm)"));
  }
  if (scale->runtime == RuntimeKind::kThreads) {  // messages in memory, workers already running
    platform.latency_seconds = platform.message_cpu_seconds = platform.message_cpu_seconds_per_byte = 0;
    platform.master_bandwidth = platform.worker_bandwidth = Platform::kNoWire;
    platform.launch_seconds = platform.cold_start_median = 0;
  } else if (scale->runtime != RuntimeKind::kProcess) {
    return ReportError(command, InvalidArgument("--validate: the scale run used the " + std::string(NameOf(scale->runtime)) +
                                                " runtime; the local platform models threads and process"));
  }
  std::string table = "predicted (" + platform.name + " platform) against measured (nimbus scale --runtime " +
                      NameOf(scale->runtime).data() + ", " + NameOf(scale->algorithm).data() + ")\n";
  table += "      K    rounds        ms/round             time to solution s      spread of the solves\n";
  table += "         meas. pred.  meas.    pred.   error  meas.    pred.   error  calibration  scale\n";
  std::string dat = "# workers measured_s predicted_s measured_round_ms predicted_round_ms calibration_spread scale_spread\n";
  double worst = 0, widest = 0;
  for (const ScalePoint& point : scale->points) {
    Scenario scenario;
    scenario.rows = scale->rows;
    scenario.cols = scale->cols;
    scenario.nnz = scale->nnz;
    scenario.workers = point.workers;
    Result<Prediction> predicted = Simulate(profile, platform, scenario, Prices{});
    if (!predicted.ok()) return ReportError(command, predicted.status());
    const double round_error = predicted->round_seconds / point.seconds_per_round() - 1;
    const double total_error = predicted->total_seconds / point.time_to_solution() - 1;
    worst = std::max({worst, std::abs(total_error), std::abs(round_error)});
    const double calibration_spread = profile.At(point.workers).spread;
    widest = std::max({widest, calibration_spread, point.spread});
    table += Format("  %5d  %5d %5d  %7.2f  %7.2f  %+5.1f%%  %7.3f  %7.3f  %+5.1f%%  %10s  %5s\n", point.workers,
                    point.rounds, predicted->rounds, 1e3 * point.seconds_per_round(), 1e3 * predicted->round_seconds,
                    100 * round_error, point.time_to_solution(), predicted->total_seconds, 100 * total_error,
                    SpreadText(calibration_spread).c_str(), SpreadText(point.spread).c_str());
    dat += Format("%d %.6f %.6f %.6f %.6f %.6f %.6f\n", point.workers, point.time_to_solution(), predicted->total_seconds,
                  1e3 * point.seconds_per_round(), 1e3 * predicted->round_seconds, calibration_spread, point.spread);
  }
  table += Format("  largest error %.1f%% (tolerance %.0f%%)\n", 100 * worst, 100 * tolerance);
  table += "  spread: how much slower the slowest of each side's --repeat solves was than the fastest, which\n"
           "  each side keeps; this machine's own noise, which a single comparison cannot get below.\n";
  if (!quiet) std::fputs(table.c_str(), stdout);
  if (!out.empty()) {
    if (Status made = MakeDirectories(out); !made.ok()) return ReportError(command, made);
    for (const auto& [name, text] : {std::pair{"validation.txt", &table}, std::pair{"validation.dat", &dat}}) {
      if (Status written = WriteFileAtomically(out + "/" + name, *text); !written.ok()) return ReportError(command, written);
    }
  }
  if (worst > tolerance) {
    std::fprintf(stderr, "nimbus simulate: the predictions are off by %.1f%%, more than the tolerance of %.0f%%\n",
                 100 * worst, 100 * tolerance);
    if (widest > tolerance) {
      std::fprintf(stderr, "nimbus simulate: the solves on one side disagreed among themselves by up to %.0f%%: "
                           "measure both again, with more --repeat\n", 100 * widest);
    }
    return kExitFailure;
  }
  return kExitOk;
}

// The simulated problem's size beyond d and K.
struct SimulatedSize {
  int64_t rows = 0;
  double nnz_per_row = 0;
  int64_t iterations = 0;  // 0: the profile's
  int64_t seed = 1;
};

// The predictions at every d and K: a table to read, gnuplot data (an index per d), JSON.
struct SimulationOutput {
  std::string table, dat, json;
};

Result<SimulationOutput> SimulateGrid(const Profile& profile, const Platform& platform,
                                      const std::vector<int64_t>& features, const std::vector<int64_t>& workers,
                                      const SimulatedSize& size, const Prices& prices) {
  SimulationOutput o;
  std::string& table = o.table;
  std::string& dat = o.dat;
  std::string& json = o.json;
  json = "[\n";
  bool first_json = true;
  for (const int64_t d : features) {
    const double per_row = std::min(size.nnz_per_row, static_cast<double>(d));
    table += Format("d = %lld features, %lld rows, %.0f nonzeros per row\n", static_cast<long long>(d),
                    static_cast<long long>(size.rows), per_row);
    table += "      K  iterations  rounds  setup s  ms/round  to solution s  speedup  efficiency  per round: speedup"
             "  efficiency  communication  cold start  shard load  $/solve\n";
    dat += Format("# d = %lld\n# workers iterations setup_s round_ms total_s speedup efficiency communication_share "
                  "compute_share cold_start_share dollars round_speedup round_efficiency load_s rounds\n",
                  static_cast<long long>(d));
    double baseline_seconds = 0, baseline_round = 0, baseline_workers = 0;  // the first K simulated
    for (const int64_t k : workers) {
      Scenario scenario;
      scenario.rows = size.rows;
      scenario.cols = d;
      scenario.nnz = static_cast<int64_t>(std::llround(per_row * static_cast<double>(size.rows)));
      scenario.workers = static_cast<int>(k);
      scenario.iterations = static_cast<int>(size.iterations);
      scenario.seed = static_cast<uint64_t>(size.seed);
      if (k > size.rows) continue;
      Result<Prediction> p = Simulate(profile, platform, scenario, prices);
      if (!p.ok()) return p.status();
      if (baseline_seconds == 0) {
        baseline_seconds = p->total_seconds;
        baseline_round = p->round_seconds;
        baseline_workers = static_cast<double>(k);
      }
      const double speedup = baseline_seconds / p->total_seconds;
      const double efficiency = speedup * baseline_workers / static_cast<double>(k);
      const double round_speedup = baseline_round / p->round_seconds;
      const double round_efficiency = round_speedup * baseline_workers / static_cast<double>(k);
      table += Format("  %5lld  %10d  %6d  %7.3f  %8.2f  %13.3f  %7.2f  %10.2f  %18.2f  %10.2f  %12.1f%%  %9.1f%%"
                      "  %8.2f s  %7.4f\n",
                      static_cast<long long>(k), p->iterations, p->rounds, p->setup_seconds, 1e3 * p->round_seconds,
                      p->total_seconds, speedup, efficiency, round_speedup, round_efficiency,
                      100 * p->communication_share, 100 * p->cold_start_share, p->load_seconds, p->dollars);
      dat += Format("%lld %d %.6f %.6f %.6f %.6f %.6f %.6f %.6f %.6f %.6f %.6f %.6f %.6f %d\n", static_cast<long long>(k),
                    p->iterations, p->setup_seconds, 1e3 * p->round_seconds, p->total_seconds, speedup, efficiency,
                    p->communication_share, p->compute_share, p->cold_start_share, p->dollars, round_speedup,
                    round_efficiency, p->load_seconds, p->rounds);
      json += std::string(first_json ? "" : ",\n") +
              Format("  {\"features\": %lld, \"workers\": %lld, \"iterations\": %d, \"rounds\": %d, \"setup_seconds\": %.9g, "
                     "\"round_seconds\": %.9g, \"total_seconds\": %.9g, \"speedup\": %.9g, \"efficiency\": %.9g, "
                     "\"round_speedup\": %.9g, \"round_efficiency\": %.9g, \"communication_share\": %.9g, "
                     "\"compute_share\": %.9g, \"cold_start_share\": %.9g, \"load_seconds\": %.9g, \"dollars\": %.9g, "
                     "\"bytes_per_round\": %lld}",
                     static_cast<long long>(d), static_cast<long long>(k), p->iterations, p->rounds, p->setup_seconds,
                     p->round_seconds, p->total_seconds, speedup, efficiency, round_speedup, round_efficiency,
                     p->communication_share, p->compute_share, p->cold_start_share, p->load_seconds, p->dollars,
                     static_cast<long long>(p->bytes_per_round));
      first_json = false;
    }
    table += "\n";
    dat += "\n\n";  // a gnuplot index per d
  }
  json += "\n]\n";
  return o;
}

// simulate.txt, .dat, .json and the plots in `out`; returns the plots drawn.
Result<std::vector<std::string>> WriteSimulation(const SimulationOutput& grid, const Platform& platform,
                                                 const std::vector<int64_t>& features, int64_t baseline_workers,
                                                 const std::string& out, bool no_plots) {
  if (Status made = MakeDirectories(out); !made.ok()) return made;
  const std::string header = DescribePlatform(platform) + "\n\n";
  for (const auto& [name, text] : {std::pair{"simulate.txt", header + grid.table}, std::pair{"simulate.dat", grid.dat},
                                   std::pair{"simulate.json", grid.json}}) {
    if (Status written = WriteFileAtomically(out + "/" + name, text); !written.ok()) return written;
  }
  // One series per d: "for [i=0:n-1]" over the data's index blocks.
  const std::string series = "for [i=0:" + std::to_string(features.size() - 1) + "] 'simulate.dat' index i u 1:";
  std::string titles = "title sprintf('d = %s', word('";
  for (const int64_t d : features) titles += Format("%.0e ", static_cast<double>(d));
  titles += "', i+1))";
  PlotScript plots;
  const std::string log_x = "set logscale x 2\n";
  plots.Add("simulate-speedup", "set title 'Predicted speedup (" + platform.name + "; dashed: per round)'\nset xlabel 'workers K'\n" +
                                    "set ylabel 'speedup of the time to solution'\n" + log_x + "set logscale y 2\n" +
                                    "plot " + series + "6 w lp " + titles + ", " + series + "12 w l dt 2 notitle, x/" +
                                    std::to_string(baseline_workers) + " w l dt 3 t 'ideal'\nunset logscale x\n"
                                    "unset logscale y");
  plots.Add("simulate-efficiency", "set title 'Predicted efficiency (" + platform.name + "; dashed: per round)'\nset xlabel 'workers K'\n"
                                   "set ylabel 'efficiency'\nset yrange [0:1.1]\n" + log_x + "plot " + series +
                                       "7 w lp " + titles + ", " + series + "13 w l dt 2 notitle, 0.7 w l dt 3 t '70%'\n"
                                       "unset logscale x\nset autoscale y");
  plots.Add("simulate-communication", "set title 'Share of the solve that communication adds (" + platform.name +
                                          ")'\nset xlabel 'workers K'\nset ylabel 'communication share'\n"
                                          "set yrange [0:1]\n" + log_x + "plot " + series + "8 w lp " + titles +
                                          "\nunset logscale x\nset autoscale y");
  plots.Add("simulate-cost", "set title 'Predicted cost per solve (" + platform.name + ")'\nset xlabel 'workers K'\n"
                             "set ylabel 'dollars'\n" + log_x + PlotScript::kLogY + "plot " + series + "11 w lp " +
                                 titles + "\nunset logscale x\n" + PlotScript::kLinearY);
  return plots.Render(out, "simulate.gp", no_plots ? "" : "gnuplot");
}
}  // namespace

int RunSimulate(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[2], "calibrate") == 0) return RunCalibrate(argc, argv);
  std::string profile_path, workers_text = "1,2,4,8,16,32,64,128,256,512,1024", features_text = "1e3,1e4,1e5,1e6,1e7";
  std::string validate, out;
  int64_t rows = 0, iterations = 0, seed = 1;
  double nnz_per_row = 0, tolerance = kValidationTolerance;
  bool no_plots = false, quiet = false;
  PlatformFlags platform_flags;
  Prices prices;
  double memory_mb = 0;
  ArgParser parser(
      "simulate", "--profile PROFILE.json [--platform lambda|local] [--workers LIST] [--features LIST] [--out DIR]",
      "Predicts runs of the profile's master (consensus ADMM or distributed Newton) with a discrete-event\n"
      "simulation of every round: the master sending ROUND through its link, the workers' work (their cost\n"
      "from the profile, with stragglers), the REPLYs coming back and the master's own work; and before them\n"
      "the workers' launches, cold starts and shard loads. ADMM's rounds grow with K as its profile's\n"
      "iterations do; Newton's stay the profile's at every K.\n"
      "Reports the time to solution, speedup and efficiency, the share of communication, and dollars per\n"
      "solve for each K and d. The profile comes from 'nimbus simulate calibrate --data FILE.svm'.\n"
      "With --validate SCALE.json it checks its predictions against a 'nimbus scale' run on this machine.");
  parser.AddString("profile", "PROFILE.json", "the profile of this machine (nimbus simulate calibrate)", &profile_path);
  AddPlatformOptions(parser, &platform_flags);
  parser.AddString("workers", "K1,K2,...", "worker counts; the first is the speedups' baseline", &workers_text);
  parser.AddString("features", "D1,D2,...", "feature counts d (1e5 style allowed)", &features_text);
  parser.AddInt("rows", "N", "rows of the simulated problem; 0: the profile's", &rows);
  parser.AddDouble("nnz-per-row", "R", "nonzeros per row; 0: the profile's", &nnz_per_row);
  parser.AddInt("iterations", "N", "ADMM iterations (Newton steps, at the profile's rounds per step) at every K; 0:\n"
                "                            the profile's, against K", &iterations);
  parser.AddInt("seed", "N", "seed of the cold starts and stragglers", &seed);
  parser.AddString("validate", "SCALE.json", "compare with a nimbus scale run (its scale.json) on this machine",
                   &validate);
  parser.AddDouble("tolerance", "X", "--validate: the largest relative error that passes", &tolerance);
  parser.AddString("out", "DIR", "write the table, data and plots here", &out);
  parser.AddSwitch("no-plots", "write the data and the gnuplot script, but do not run gnuplot", &no_plots);
  AddPriceOptions(parser, &prices, &memory_mb);
  parser.AddSwitch("quiet", "print nothing but errors", &quiet);
  parser.Require("profile");
  int exit_code = 0;
  if (!ParseOrExit(parser, argc, argv, &exit_code)) return exit_code;
  const std::string command = "simulate";
  if (Status valid = FinishPriceOptions(memory_mb, &prices); !valid.ok()) return ReportError(command, valid);
  if (!(tolerance > 0)) return ReportError(command, InvalidArgument("--tolerance: must be positive"));
  if (iterations < 0) return ReportError(command, InvalidArgument("--iterations: must be >= 1"));
  Result<Profile> profile = Profile::Read(profile_path);
  if (!profile.ok()) return ReportError(command, profile.status());
  Result<Platform> platform = MakePlatform(parser, platform_flags, *profile);
  if (!platform.ok()) return ReportError(command, platform.status());
  if (!validate.empty()) {
    if (!parser.Given("platform")) *platform = Platform::Local(*profile);
    return Validate(*profile, *platform, validate, tolerance, out, quiet);
  }
  Result<std::vector<int64_t>> workers = ParseCountList(workers_text, "workers", 1 << 20, /*ascending=*/true);
  if (!workers.ok()) return ReportError(command, workers.status());
  Result<std::vector<int64_t>> features = ParseCountList(features_text, "features", int64_t{1} << 40);
  if (!features.ok()) return ReportError(command, features.status());
  if (rows == 0) rows = profile->rows;
  if (nnz_per_row == 0) nnz_per_row = static_cast<double>(profile->nnz) / static_cast<double>(profile->rows);
  if (rows < 1 || !(nnz_per_row >= 1)) return ReportError(command, InvalidArgument("--rows and --nnz-per-row: must be >= 1"));

  if (!quiet) std::printf("%s; %s\n", DescribePlatform(*platform).c_str(), NameOf(profile->algorithm).data());
  Result<SimulationOutput> grid =
      SimulateGrid(*profile, *platform, *features, *workers, {rows, nnz_per_row, iterations, seed}, prices);
  if (!grid.ok()) return ReportError(command, grid.status());
  if (!quiet) std::fputs(grid->table.c_str(), stdout);
  if (out.empty()) return kExitOk;
  Result<std::vector<std::string>> drawn = WriteSimulation(*grid, *platform, *features, workers->front(), out, no_plots);
  if (!drawn.ok()) return ReportError(command, drawn.status());
  if (!quiet) std::printf("wrote %s/simulate.txt, simulate.json, simulate.dat (%zu plots)\n", out.c_str(), drawn->size());
  return kExitOk;
}

}  // namespace nimbus::cli
