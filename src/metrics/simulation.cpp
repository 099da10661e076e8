#include "nimbus/metrics/simulation.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "nimbus/core/file_io.h"
#include "nimbus/core/format.h"
#include "nimbus/metrics/plot.h"
#include "nimbus/wire/messages.h"

namespace nimbus {
namespace {

std::string SpreadText(double spread) { return spread > 0 ? Format("+%.1f%%", 100 * spread) : "-"; }

}  // namespace

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

Status SimulationGrid::Validate() const {
  if (features.empty() || workers.empty()) return InvalidArgument("simulate: give at least one d and one K");
  for (std::size_t i = 0; i < workers.size(); ++i) {
    if (workers[i] < 1 || (i > 0 && workers[i] <= workers[i - 1])) {
      return InvalidArgument("--workers: the counts must be >= 1 and ascend");
    }
  }
  for (const int64_t d : features) {
    if (d < 1) return InvalidArgument("--features: the counts must be >= 1");
  }
  if (rows < 0 || nnz_per_row < 0) return InvalidArgument("--rows and --nnz-per-row: must be >= 1");
  if (iterations < 0) return InvalidArgument("--iterations: must be >= 1");
  if (relay_fanout < 0 || relay_fanout == 1) return InvalidArgument("--relay-fanout: must be 0 (the star) or >= 2");
  if (storage_reduction && relay_fanout > 0) {
    return InvalidArgument("--storage-reduction: the workers sum through storage, not relays (--relay-fanout)");
  }
  return Status::Ok();
}

Result<SimulationOutput> SimulateGrid(const Profile& profile, const Platform& platform, SimulationGrid size,
                                      const Prices& prices) {
  NIMBUS_RETURN_IF_ERROR(size.Validate());
  if (size.rows == 0) size.rows = profile.rows;
  if (size.nnz_per_row == 0) size.nnz_per_row = static_cast<double>(profile.nnz) / static_cast<double>(profile.rows);
  if (size.rows < 1 || !(size.nnz_per_row >= 1)) return InvalidArgument("--rows and --nnz-per-row: must be >= 1");
  const std::vector<int64_t>& features = size.features;
  const std::vector<int64_t>& workers = size.workers;
  SimulationOutput o;
  o.platform = DescribePlatform(platform);
  o.platform_name = platform.name;
  o.features = features;
  o.baseline_workers = workers.front();
  std::string& table = o.table;
  std::string& dat = o.dat;
  std::string& json = o.json;
  json = "[\n";
  bool first_json = true;
  for (const int64_t d : features) {
    const double per_row = std::min(size.nnz_per_row, static_cast<double>(d));
    table += Format("d = %lld features, %lld rows, %.0f nonzeros per row\n", static_cast<long long>(d),
                    static_cast<long long>(size.rows), per_row);
    table += "      K  relays  iterations  rounds  setup s  ms/round  to solution s  speedup  efficiency  per round: speedup"
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
      scenario.seed = size.seed;
      scenario.relays = static_cast<int>(RelaysUnder(k, size.relay_fanout));
      scenario.relay_fanout = static_cast<int>(size.relay_fanout);
      scenario.storage_reduction = size.storage_reduction;
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
      table += Format("  %5lld  %6d  %10d  %6d  %7.3f  %8.2f  %13.3f  %7.2f  %10.2f  %18.2f  %10.2f  %12.1f%%  %9.1f%%"
                      "  %8.2f s  %7.4f\n",
                      static_cast<long long>(k), p->relay_hosts, p->iterations, p->rounds, p->setup_seconds, 1e3 * p->round_seconds,
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
                     "\"bytes_per_round\": %lld, \"relay_hosts\": %d, \"storage_requests_per_round\": %lld}",
                     static_cast<long long>(d), static_cast<long long>(k), p->iterations, p->rounds, p->setup_seconds,
                     p->round_seconds, p->total_seconds, speedup, efficiency, round_speedup, round_efficiency,
                     p->communication_share, p->compute_share, p->cold_start_share, p->load_seconds, p->dollars,
                     static_cast<long long>(p->bytes_per_round), p->relay_hosts,
                     static_cast<long long>(p->storage_requests_per_round));
      first_json = false;
    }
    table += "\n";
    dat += "\n\n";  // a gnuplot index per d
  }
  json += "\n]\n";
  return o;
}

Result<std::vector<std::string>> SimulationOutput::Write(const std::string& out, const std::string& gnuplot) const {
  NIMBUS_RETURN_IF_ERROR(MakeDirectories(out));
  for (const auto& [name, text] : {std::pair{"simulate.txt", platform + "\n\n" + table}, std::pair{"simulate.dat", dat},
                                   std::pair{"simulate.json", json}}) {
    NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(out + "/" + name, text));
  }
  // One series per d: "for [i=0:n-1]" over the data's index blocks.
  const std::string series = "for [i=0:" + std::to_string(features.size() - 1) + "] 'simulate.dat' index i u 1:";
  std::string titles = "title sprintf('d = %s', word('";
  for (const int64_t d : features) titles += Format("%.0e ", static_cast<double>(d));
  titles += "', i+1))";
  PlotScript plots;
  const std::string log_x = "set logscale x 2\n";
  plots.Add("simulate-speedup", "set title 'Predicted speedup (" + platform_name + "; dashed: per round)'\nset xlabel 'workers K'\n" +
                                    "set ylabel 'speedup of the time to solution'\n" + log_x + "set logscale y 2\n" +
                                    "plot " + series + "6 w lp " + titles + ", " + series + "12 w l dt 2 notitle, x/" +
                                    std::to_string(baseline_workers) + " w l dt 3 t 'ideal'\nunset logscale x\n"
                                    "unset logscale y");
  plots.Add("simulate-efficiency", "set title 'Predicted efficiency (" + platform_name + "; dashed: per round)'\nset xlabel 'workers K'\n"
                                   "set ylabel 'efficiency'\nset yrange [0:1.1]\n" + log_x + "plot " + series +
                                       "7 w lp " + titles + ", " + series + "13 w l dt 2 notitle, 0.7 w l dt 3 t '70%'\n"
                                       "unset logscale x\nset autoscale y");
  plots.Add("simulate-communication", "set title 'Share of the solve that communication adds (" + platform_name +
                                          ")'\nset xlabel 'workers K'\nset ylabel 'communication share'\n"
                                          "set yrange [0:1]\n" + log_x + "plot " + series + "8 w lp " + titles +
                                          "\nunset logscale x\nset autoscale y");
  plots.Add("simulate-cost", "set title 'Predicted cost per solve (" + platform_name + ")'\nset xlabel 'workers K'\n"
                             "set ylabel 'dollars'\n" + log_x + PlotScript::kLogY + "plot " + series + "11 w lp " +
                                 titles + "\nunset logscale x\n" + PlotScript::kLinearY);
  return plots.Render(out, "simulate.gp", gnuplot);
}
Result<Validation> ValidatePredictions(const Profile& profile, Platform platform, const ScaleResult& scale,
                                       const std::string& scale_path, double tolerance) {
  if (scale.rows != profile.rows || scale.cols != profile.cols || scale.nnz != profile.nnz) {
    return InvalidArgument(Format("--validate: %s is of another problem (%lld rows, %lld features, "
                                                       "%lld nonzeros) than the profile (%lld, %lld, %lld)",
                                                       scale_path.c_str(), static_cast<long long>(scale.rows),
                                                       static_cast<long long>(scale.cols),
                                                       static_cast<long long>(scale.nnz),
                                                       static_cast<long long>(profile.rows),
                                                       static_cast<long long>(profile.cols),
                                                       static_cast<long long>(profile.nnz)));
  }
  if (scale.algorithm != profile.algorithm) {
    return InvalidArgument("--validate: " + scale_path + " ran " + NameOf(scale.algorithm).data() +
                           ", the profile measured " + NameOf(profile.algorithm).data() +
                           " (give both the same --algorithm)");
  }
  if (scale.runtime == RuntimeKind::kThreads) {  // messages in memory, workers already running
    platform.latency_seconds = platform.message_cpu_seconds = platform.message_cpu_seconds_per_byte = 0;
    platform.master_bandwidth = platform.worker_bandwidth = Platform::kNoWire;
    platform.launch_seconds = platform.cold_start_median = 0;
  } else if (scale.runtime != RuntimeKind::kProcess) {
    return InvalidArgument("--validate: the scale run used the " + std::string(NameOf(scale.runtime)) +
                           " runtime; the local platform models threads and process");
  }
  Validation validation;
  std::string& table = validation.table;
  std::string& dat = validation.dat;
  double& worst = validation.worst_error;
  double& widest = validation.widest_spread;
  table = "predicted (" + platform.name + " platform) against measured (nimbus scale --runtime " +
                      NameOf(scale.runtime).data() + ", " + NameOf(scale.algorithm).data() + ")\n";
  table += "      K    rounds        ms/round             time to solution s      spread of the solves\n";
  table += "         meas. pred.  meas.    pred.   error  meas.    pred.   error  calibration  scale\n";
  dat = "# workers measured_s predicted_s measured_round_ms predicted_round_ms calibration_spread scale_spread\n";
  for (const ScalePoint& point : scale.points) {
    Scenario scenario;
    scenario.rows = scale.rows;
    scenario.cols = scale.cols;
    scenario.nnz = scale.nnz;
    scenario.workers = point.workers;
    NIMBUS_ASSIGN_OR_RETURN(const Prediction predicted, Simulate(profile, platform, scenario, Prices{}));
    const double round_error = predicted.round_seconds / point.seconds_per_round() - 1;
    const double total_error = predicted.total_seconds / point.time_to_solution() - 1;
    worst = std::max({worst, std::abs(total_error), std::abs(round_error)});
    const double calibration_spread = profile.At(point.workers).spread;
    widest = std::max({widest, calibration_spread, point.spread});
    table += Format("  %5d  %5d %5d  %7.2f  %7.2f  %+5.1f%%  %7.3f  %7.3f  %+5.1f%%  %10s  %5s\n", point.workers,
                    point.rounds, predicted.rounds, 1e3 * point.seconds_per_round(), 1e3 * predicted.round_seconds,
                    100 * round_error, point.time_to_solution(), predicted.total_seconds, 100 * total_error,
                    SpreadText(calibration_spread).c_str(), SpreadText(point.spread).c_str());
    dat += Format("%d %.6f %.6f %.6f %.6f %.6f %.6f\n", point.workers, point.time_to_solution(), predicted.total_seconds,
                  1e3 * point.seconds_per_round(), 1e3 * predicted.round_seconds, calibration_spread, point.spread);
  }
  table += Format("  largest error %.1f%% (tolerance %.0f%%)\n", 100 * worst, 100 * tolerance);
  table += "  spread: how much slower the slowest of each side's --repeat solves was than the fastest, which\n"
           "  each side keeps; this machine's own noise, which a single comparison cannot get below.\n";
  return validation;
}

Status Validation::Write(const std::string& directory) const {
  NIMBUS_RETURN_IF_ERROR(MakeDirectories(directory));
  NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(directory + "/validation.txt", table));
  return WriteFileAtomically(directory + "/validation.dat", dat);
}

}  // namespace nimbus
