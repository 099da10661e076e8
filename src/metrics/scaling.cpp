#include "nimbus/metrics/scaling.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "nimbus/core/file_io.h"
#include "nimbus/core/format.h"
#include "nimbus/core/json_integer.h"
#include "nimbus/metrics/plot.h"

namespace nimbus {

double ScaleResult::Speedup(std::size_t i) const {
  return points[i].time_to_solution() > 0 ? points[0].time_to_solution() / points[i].time_to_solution() : 0;
}

double ScaleResult::RoundSpeedup(std::size_t i) const {
  return points[i].seconds_per_round() > 0 ? points[0].seconds_per_round() / points[i].seconds_per_round() : 0;
}

double ScaleResult::Efficiency(std::size_t i) const {
  return Speedup(i) * points[0].workers / points[i].workers;
}

std::string ScaleResult::Table() const {
  std::string out = Format("nimbus scale: %lld rows, %lld features, %lld nonzeros, runtime %s, algorithm %s, eps_abs %g, "
                           "eps_rel %g\n",
                           static_cast<long long>(rows), static_cast<long long>(cols), static_cast<long long>(nnz),
                           NameOf(runtime).data(), NameOf(algorithm).data(), eps_abs, eps_rel);
  out += "      K  iterations  rounds  setup s  solve s  to solution s  ms/round  speedup  speedup/round  efficiency"
         "  $/solve\n";
  bool all_converged = true;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ScalePoint& p = points[i];
    all_converged = all_converged && p.termination == "converged";
    out += Format("  %5d  %10d  %6d  %7.3f  %7.3f  %13.3f  %8.2f  %7.2f  %13.2f  %10.2f  %7.5f%s\n", p.workers,
                  p.iterations, p.rounds, p.setup_seconds, p.solve_seconds, p.time_to_solution(), 1e3 * p.seconds_per_round(), Speedup(i),
                  RoundSpeedup(i), Efficiency(i), p.dollars, p.termination == "converged" ? "" : ("  " + p.termination).c_str());
  }
  out += Format("  speedups relative to K = %d; %s, so the speedup of the time to\n"
                "  solution and that of one round differ.%s\n",
                points.empty() ? 0 : points[0].workers,
                algorithm == Algorithm::kNewton ? "Newton's rounds hardly change with K, but start-up does"
                                      : "ADMM's iteration count changes with K",
                all_converged ? "" : " Runs marked otherwise stopped before the tolerance: compare with care.");
  std::string spreads;
  for (const ScalePoint& p : points) {
    if (p.spread > 0) spreads += Format("%s K = %d +%.1f%%", spreads.empty() ? "" : ",", p.workers, 100 * p.spread);
  }
  if (!spreads.empty()) out += "  each K's fastest solve; the slowest took longer by:" + spreads + "\n";
  return out;
}

std::string ScaleResult::ToJson() const {
  nlohmann::ordered_json json;
  json["data"] = data;
  json["runtime"] = NameOf(runtime);
  json["algorithm"] = NameOf(algorithm);
  json["rows"] = rows;
  json["cols"] = cols;
  json["nnz"] = nnz;
  json["eps_abs"] = eps_abs;
  json["eps_rel"] = eps_rel;
  json["points"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ScalePoint& p = points[i];
    json["points"].push_back({{"workers", p.workers},
                              {"iterations", p.iterations},
                              {"rounds", p.rounds},
                              {"termination", p.termination},
                              {"objective", p.objective},
                              {"setup_seconds", p.setup_seconds},
                              {"solve_seconds", p.solve_seconds},
                              {"time_to_solution", p.time_to_solution()},
                              {"seconds_per_round", p.seconds_per_round()},
                              {"speedup", Speedup(i)},
                              {"round_speedup", RoundSpeedup(i)},
                              {"efficiency", Efficiency(i)},
                              {"dollars", p.dollars},
                              {"spread", p.spread}});
  }
  return json.dump(2) + "\n";
}

Result<ScaleResult> ScaleResult::FromJson(const std::string& text, const std::string& origin) {
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object() || !json.contains("points") || !json["points"].is_array()) {
    return InvalidArgument(origin + ": not the JSON of nimbus scale (an object with \"points\")");
  }
  ScaleResult result;
  try {
    result.data = json.value("data", "");
    Result<RuntimeKind> runtime = ParseChoice<RuntimeKind>(json.value("runtime", "threads"));
    Result<Algorithm> algorithm = ParseChoice<Algorithm>(json.value("algorithm", "admm"));
    if (!runtime.ok()) return runtime.status().WithContext(origin);
    if (!algorithm.ok()) return algorithm.status().WithContext(origin);
    result.runtime = *runtime;
    result.algorithm = *algorithm;
    result.rows = JsonInteger<int64_t>(json.at("rows"));
    result.cols = JsonInteger<int64_t>(json.at("cols"));
    result.nnz = JsonInteger<int64_t>(json.at("nnz"));
    result.eps_abs = json.value("eps_abs", 0.0);
    result.eps_rel = json.value("eps_rel", 0.0);
    for (std::size_t i = 0; i < json["points"].size(); ++i) {
      const nlohmann::json& item = json["points"][i];
      ScalePoint p;
      p.workers = JsonInteger<int>(item.at("workers"));
      p.iterations = JsonInteger<int>(item.at("iterations"));
      p.rounds = JsonInteger<int>(item.at("rounds"));
      p.termination = item.value("termination", "");
      p.objective = item.value("objective", 0.0);
      p.setup_seconds = item.at("setup_seconds").get<double>();
      p.solve_seconds = item.at("solve_seconds").get<double>();
      p.dollars = item.value("dollars", 0.0);
      p.spread = item.value("spread", 0.0);
      if (p.workers < 1 || p.rounds < 1) {
        return InvalidArgument(origin + ": points[" + std::to_string(i) + "]: workers and rounds must be >= 1");
      }
      result.points.push_back(p);
    }
  } catch (const nlohmann::json::exception& error) {
    return InvalidArgument(origin + ": " + error.what());
  }
  if (result.points.empty()) return InvalidArgument(origin + ": no points");
  return result;
}

Result<ScaleResult> ScaleResult::Read(const std::string& path) {
  NIMBUS_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return FromJson(text, path);
}

Result<std::vector<std::string>> ScaleResult::Write(const std::string& directory, const std::string& gnuplot) const {
  NIMBUS_RETURN_IF_ERROR(MakeDirectories(directory));
  std::string dat = "# workers iterations setup_s solve_s to_solution_s s_per_round speedup round_speedup efficiency\n";
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ScalePoint& p = points[i];
    dat += Format("%d %d %.6f %.6f %.6f %.9f %.6f %.6f %.6f\n", p.workers, p.iterations, p.setup_seconds, p.solve_seconds,
                  p.time_to_solution(), p.seconds_per_round(), Speedup(i), RoundSpeedup(i), Efficiency(i));
  }
  NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(directory + "/scale.dat", dat));
  NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(directory + "/scale.json", ToJson()));
  NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(directory + "/scale.txt", Table()));
  PlotScript plots;
  const std::string k0 = std::to_string(points.empty() ? 1 : points[0].workers);
  const std::string runtime_name(NameOf(runtime)), algorithm_name(NameOf(algorithm));
  plots.Add("scale-time",
            "set title 'Time to solution and iterations against workers (" + runtime_name + ")'\n"
            "set xlabel 'workers K'\nset ylabel 'seconds'\nset y2label '" + algorithm_name + " iterations'\nset logscale x 2\n"
            "set ytics nomirror\nset y2tics\n"
            "plot 'scale.dat' u 1:5 w lp t 'time to solution', '' u 1:4 w lp t 'solve', "
            "'' u 1:2 axes x1y2 w lp dt 2 t 'iterations'\n"
            "unset logscale x\nunset y2tics\nunset y2label\nset ytics mirror");
  plots.Add("scale-speedup",
            "set title 'Speedup relative to K = " + k0 + " (" + runtime_name + ")'\n"
            "set xlabel 'workers K'\nset ylabel 'speedup'\nset y2label 'efficiency'\nset logscale x 2\n"
            "set ytics nomirror\nset y2tics\nset y2range [0:*]\n"
            "plot 'scale.dat' u 1:7 w lp t 'time to solution', '' u 1:8 w lp t 'per round', "
            "'' u 1:($1/" + k0 + ") w l dt 3 t 'ideal', '' u 1:9 axes x1y2 w lp dt 2 t 'efficiency'\n"
            "unset logscale x\nunset y2tics\nunset y2label\nset ytics mirror\nset autoscale y2");
  return plots.Render(directory, "scale.gp", gnuplot);
}

}  // namespace nimbus
