#include "nimbus/metrics/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "nimbus/core/file_io.h"
#include "nimbus/core/format.h"
#include "nimbus/metrics/analysis.h"
#include "nimbus/metrics/plot.h"
#include "nimbus/metrics/trace_reader.h"

namespace nimbus {
namespace {

struct Totals {
  double master = 0, communication = 0, compute = 0, waiting = 0, wall = 0;
};

Totals TotalsOf(const std::vector<RoundBreakdown>& rows) {
  Totals t;
  for (const RoundBreakdown& r : rows) {
    t.master += r.master;
    t.communication += r.communication;
    t.compute += r.compute;
    t.waiting += r.waiting;
    t.wall += r.wall;
  }
  return t;
}

double RunSeconds(const Trace& trace) {
  if (trace.summary) return trace.summary->setup_seconds + trace.summary->solve_seconds;
  return trace.setup_seconds + (trace.rounds.empty() ? 0 : trace.rounds.back().time);
}

double FinalObjective(const Trace& trace) {
  if (trace.summary) return trace.summary->objective;
  for (auto it = trace.rounds.rbegin(); it != trace.rounds.rend(); ++it) {
    if (it->objective) return *it->objective;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

std::string Number(std::optional<double> value) {
  return value ? Format("%.10g", *value) : std::string("NaN");
}

}  // namespace

Cost CostOfTrace(const Trace& trace, const Prices& prices) {
  int64_t launches = 0;
  for (const TraceWorkerEvent& event : trace.events) launches += event.what == "launched" ? 1 : 0;
  const int64_t invocations = std::max<int64_t>(launches, trace.workers);
  int64_t s3_requests = 0;
  for (const TraceShard& shard : trace.shards) {
    s3_requests += 1 + ShardLoadRequests(shard.nnz * 12 + shard.rows * 16);  // manifest, then the shard
  }
  // Every worker lives for the run; a replacement adds its own start (its predecessor was
  // already counted up to the end, which covers the overlap generously).
  const double run = RunSeconds(trace);
  const double function_seconds = run * trace.workers;
  const double master_seconds = run + (trace.summary ? trace.summary->load_seconds : 0);
  return EstimateCost(prices, invocations, function_seconds, s3_requests, master_seconds);
}

std::string ReportText(const Trace& trace, const Prices& prices) {
  std::string out = "nimbus run report\n";
  out += Format("  problem       %lld rows, %lld features, %s loss, l1 %g, l2 %g\n", static_cast<long long>(trace.rows),
                static_cast<long long>(trace.cols), trace.loss.c_str(), trace.l1, trace.l2);
  out += Format("  runtime       %s, %d workers\n", trace.runtime.c_str(), trace.workers);
  if (trace.summary) {
    const Summary& s = *trace.summary;
    out += Format("  outcome       %s after %d iterations (%d rounds), objective %.12g\n",
                  TerminationName(s.termination), s.iterations, s.rounds, s.objective);
    out += Format("  time          load %.3f s, setup %.3f s, solve %.3f s\n", s.load_seconds, s.setup_seconds,
                  s.solve_seconds);
  } else {
    out += Format("  outcome       unfinished: %zu rounds in the trace\n", trace.rounds.size());
  }
  const std::vector<RoundBreakdown> rows = BreakdownRounds(trace);
  const Totals t = TotalsOf(rows);
  if (t.wall > 0) {
    // The four parts partition every round (BreakdownRounds), so the shares add up to 100%.
    out += Format("  rounds        %.3f s in all, as the mean worker spent them: compute %.1f%% (its work), communication "
                  "%.1f%% (the rest of dispatch to its reply), waiting %.1f%% (its reply to the last), master %.1f%% "
                  "(after the last reply)\n",
                  t.wall, 100 * t.compute / t.wall, 100 * t.communication / t.wall, 100 * t.waiting / t.wall,
                  100 * t.master / t.wall);
  }
  const ColdStarts cold = ColdStartsOf(trace);
  if (!cold.total.empty()) {
    out += Format("  cold start    launch to ready: median %.1f ms, max %.1f ms (process start %.1f ms, connect %.1f ms, "
                  "shard load %.1f ms, medians); %.1f%% of the run\n",
                  1e3 * Quantile(cold.total, 0.5), 1e3 * Quantile(cold.total, 1.0), 1e3 * Quantile(cold.process_start, 0.5),
                  1e3 * Quantile(cold.connect, 0.5), 1e3 * Quantile(cold.load, 0.5),
                  RunSeconds(trace) > 0 ? 100 * Quantile(cold.total, 1.0) / RunSeconds(trace) : 0.0);
  }
  const StragglerStats stragglers = Stragglers(trace);
  if (stragglers.rounds > 0) {
    const auto worst = std::max_element(stragglers.share_per_worker.begin(), stragglers.share_per_worker.end());
    out += Format("  stragglers    the slowest 10%% of responses take over %.1f ms; %.1f%% of rounds have a worker among "
                  "them; the most frequent is worker %d, in %.1f%% of its rounds\n",
                  1e3 * stragglers.threshold, 100 * stragglers.rounds_with_straggler,
                  static_cast<int>(worst - stragglers.share_per_worker.begin()), 100 * *worst);
  }
  int failures = 0, handovers = 0;
  for (const TraceWorkerEvent& event : trace.events) {
    failures += event.what == "failed" ? 1 : 0;
    handovers += event.what == "left" ? 1 : 0;
  }
  if (failures + handovers > 0) out += Format("  restarts      %d failures, %d lifetime hand-overs\n", failures, handovers);
  double bytes = 0;
  for (const TraceRound& round : trace.rounds) {
    for (const TraceWorkerRound& w : round.workers) bytes += static_cast<double>(w.bytes_in + w.bytes_out);
  }
  if (bytes > 0 && !trace.rounds.empty()) {
    out += Format("  traffic       %.2f MB per round\n", bytes / static_cast<double>(trace.rounds.size()) / 1e6);
  }
  const Cost cost = CostOfTrace(trace, prices);
  out += Format("  cost          $%.5f at Lambda prices: %.1f GB-s and %lld requests $%.5f, %lld S3 requests $%.5f, "
                "master $%.5f (%s)\n",
                cost.total_dollars(), cost.function_gb_seconds, static_cast<long long>(cost.requests), cost.lambda_dollars,
                static_cast<long long>(cost.s3_requests), cost.s3_dollars, cost.master_dollars, Prices::kAsOf);
  return out;
}

namespace {

std::string ConvergenceData(const Trace& trace) {
  const double final_objective = FinalObjective(trace);
  std::string convergence = "# round time_s primal dual eps_primal eps_dual objective relative_gap\n";
  for (const TraceRound& r : trace.rounds) {
    if (!r.primal_residual) continue;
    std::string gap = "NaN";
    if (r.objective && std::isfinite(final_objective) && final_objective != 0) {
      gap = Format("%.10g", std::abs(*r.objective - final_objective) / std::abs(final_objective));
    }
    convergence += Format("%lld %.9g ", static_cast<long long>(r.round), r.time) + Number(r.primal_residual) + " " +
                   Number(r.dual_residual) + " " + Number(r.eps_primal) + " " + Number(r.eps_dual) + " " +
                   Number(r.objective) + " " + gap + "\n";
  }
  return convergence;
}

std::string BreakdownData(const Trace& trace) {
  std::string breakdown = "# round master_ms communication_ms compute_ms waiting_ms\n";
  for (const RoundBreakdown& b : BreakdownRounds(trace)) {
    breakdown += Format("%lld %.6f %.6f %.6f %.6f\n", static_cast<long long>(b.round), 1e3 * b.master,
                        1e3 * b.communication, 1e3 * b.compute, 1e3 * b.waiting);
  }
  return breakdown;
}

// Timeline segments: worker, start, end (ms from the first shown dispatch), kind 1 = out,
// 2 = compute, 3 = back.
std::string TimelineData(const Trace& trace, const ReportOptions& options) {
  std::string timeline = "# worker start_ms end_ms kind(1 out, 2 compute, 3 back) round\n";
  double origin = -1;
  for (const TraceRound& r : trace.rounds) {
    if (r.round < options.timeline_first_round || r.round >= options.timeline_first_round + options.timeline_rounds) continue;
    if (origin < 0) origin = r.dispatch;
    for (const TraceWorkerRound& w : r.workers) {
      const double segments[3][2] = {{r.dispatch, std::max(r.dispatch, w.receive_wall)},
                                     {w.start_wall, w.end_wall},
                                     {w.send_wall, std::max(w.send_wall, w.arrival_wall)}};
      for (int kind = 0; kind < 3; ++kind) {
        timeline += Format("%d %.4f %.4f %d %lld\n", w.worker, 1e3 * (segments[kind][0] - origin),
                           1e3 * (segments[kind][1] - origin), kind + 1, static_cast<long long>(r.round));
      }
    }
  }
  return timeline;
}

std::string ColdStartData(const Trace& trace) {
  const ColdStarts cold = ColdStartsOf(trace);
  std::string coldstart = "# worker process_start_ms connect_ms load_ms total_ms\n";
  for (std::size_t i = 0; i < cold.total.size(); ++i) {
    coldstart += Format("%d %.4f %.4f %.4f %.4f\n", cold.worker[i], 1e3 * cold.process_start[i], 1e3 * cold.connect[i],
                        1e3 * cold.load[i], 1e3 * cold.total[i]);
  }
  return coldstart;
}

std::string StragglerData(const Trace& trace) {
  const StragglerStats stragglers = Stragglers(trace);
  std::string straggler_data = "# worker share_of_rounds_in_the_slowest_10%\n";
  for (std::size_t i = 0; i < stragglers.share_per_worker.size(); ++i) {
    straggler_data += Format("%zu %.6f\n", i, stragglers.share_per_worker[i]);
  }
  return straggler_data;
}

// The data of every plot, each the contents of a .dat file.
struct PlotData {
  std::string convergence, breakdown, timeline, coldstart, stragglers;

  // Whether the plot (by name) is drawn: its data holds more than a header. A run without
  // residuals has no convergence plots; one whose rounds had no workers (the column method's,
  // in the master's process) none of the workers' rounds (breakdown, timeline, stragglers) and
  // no cold starts.
  bool drawn(std::string_view plot) const {
    const std::string& data = plot.starts_with("convergence") ? convergence
                              : plot == "coldstart"            ? coldstart
                                                               : breakdown;
    return data.find('\n') != data.size() - 1;
  }
};

PlotData PlotDataOf(const Trace& trace, const ReportOptions& options) {
  return {ConvergenceData(trace), BreakdownData(trace), TimelineData(trace, options), ColdStartData(trace),
          StragglerData(trace)};
}

Status WritePlotData(const std::string& dir, const PlotData& plot_data) {
  const std::pair<const char*, const std::string*> data[] = {{"convergence.dat", &plot_data.convergence},
                                                             {"breakdown.dat", &plot_data.breakdown},
                                                             {"timeline.dat", &plot_data.timeline},
                                                             {"coldstart.dat", &plot_data.coldstart},
                                                             {"stragglers.dat", &plot_data.stragglers}};
  for (const auto& [name, contents] : data) NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(dir + "/" + name, *contents));
  return Status::Ok();
}

// Whether the run was distributed Newton's (its rounds evaluate and multiply), not ADMM's.
bool NewtonRun(const Trace& trace) {
  return std::any_of(trace.rounds.begin(), trace.rounds.end(), [](const TraceRound& r) { return r.kind != RoundKind::kAdmm; });
}

// ADMM's stop test has primal and dual residuals, each with its tolerance; Newton's, the
// minimum subgradient's norm with its own (in the same columns of convergence.dat).
void AddConvergencePlots(PlotScript& plots, bool newton) {
  const std::string log_y = PlotScript::kLogY, linear_y = PlotScript::kLinearY;
  const std::string residuals_by_round =
      newton ? "plot 'convergence.dat' u 1:3 w lp t 'subgradient norm', '' u 1:5 w l dt 2 t 'its tolerance', "
             : "plot 'convergence.dat' u 1:3 w lp t 'primal residual', '' u 1:5 w l dt 2 t 'primal tolerance', "
               "'' u 1:4 w lp t 'dual residual', '' u 1:6 w l dt 2 t 'dual tolerance', ";
  const std::string residuals_by_time = newton ? "plot 'convergence.dat' u 2:3 w lp t 'subgradient norm', "
                                               : "plot 'convergence.dat' u 2:3 w lp t 'primal residual', "
                                                 "'' u 2:4 w lp t 'dual residual', ";
  const std::string what = newton ? "Stop test" : "Residuals";
  plots.Add("convergence-round", "set title '" + what + " and objective by round'\nset xlabel 'round'\n"
                                 "set ylabel 'residual'\n" + log_y + residuals_by_round +
                                 "'' u 1:8 w lp t 'relative objective gap'\n" + linear_y);
  plots.Add("convergence-time", "set title '" + what + " and objective against time'\n"
                                "set xlabel 'seconds since the first round'\nset ylabel 'residual'\n" + log_y +
                                residuals_by_time + "'' u 2:8 w lp t 'relative objective gap'\n" + linear_y);
}

// A histogram's round labels: every round's for a few, else every `step`-th (about 20 in all,
// so that they do not print on top of each other).
std::string RoundLabels(std::size_t rounds) {
  const std::size_t step = std::max<std::size_t>(1, (rounds + 19) / 20);
  return step == 1 ? "xtic(1)" : "xtic(int($0) % " + std::to_string(step) + " == 0 ? stringcolumn(1) : '')";
}

// The plots of the workers' rounds: where each went, a few worker by worker, and stragglers.
void AddWorkerPlots(PlotScript& plots, const Trace& trace, const ReportOptions& options) {
  const std::string k = std::to_string(std::max(1, trace.workers));
  plots.Add("breakdown",
       "set title 'Where each round went (mean over workers)'\nset xlabel 'round'\nset ylabel 'ms'\n"
       "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.8 border -1\n"
       "set boxwidth 0.8\nset xtics rotate by -45 autofreq\n"
       "plot 'breakdown.dat' u 4 t 'compute', '' u 3 t 'communication', '' u 5 t 'waiting', '' u 2:" +
           RoundLabels(BreakdownRounds(trace).size()) + " t 'master'\n"
       "set style data lines\nset xtics norotate");
  plots.Add("timeline",
       "set title 'Rounds " + std::to_string(options.timeline_first_round) + " to " +
           std::to_string(options.timeline_first_round + options.timeline_rounds - 1) +
           ", worker by worker'\nset xlabel 'ms since the first dispatch'\nset ylabel 'worker'\n"
           "set yrange [-1:" + k + "]\n"
           "plot 'timeline.dat' u ($4==1?$2:1/0):1:($3-$2):(0) w vectors nohead lw 6 lc 1 t 'ROUND on its way', "
           "'' u ($4==2?$2:1/0):1:($3-$2):(0) w vectors nohead lw 6 lc 2 t 'compute', "
           "'' u ($4==3?$2:1/0):1:($3-$2):(0) w vectors nohead lw 6 lc 3 t 'REPLY on its way'\nset autoscale y");
  plots.Add("stragglers",
       "set title 'Share of each worker''s rounds among the slowest 10% of responses'\nset xlabel 'worker'\n"
       "set ylabel 'share of rounds'\nset yrange [0:*]\nset style fill solid 0.8 border -1\nset boxwidth 0.7\n"
       "plot 'stragglers.dat' u 1:2 w boxes t ''\nset autoscale y");
}

// The plots, each as PNG and as SVG; those that have data.
PlotScript ReportPlots(const Trace& trace, const ReportOptions& options, const PlotData& data) {
  PlotScript plots;
  if (data.drawn("convergence")) AddConvergencePlots(plots, NewtonRun(trace));
  if (data.drawn("breakdown")) AddWorkerPlots(plots, trace, options);
  if (data.drawn("coldstart")) {
    plots.Add("coldstart",
         "set title 'Cold starts: launch to ready'\nset xlabel 'worker start'\nset ylabel 'ms'\n"
         "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.8 border -1\n"
         "plot 'coldstart.dat' u 2 t 'process start', '' u 3 t 'connect', '' u 4:xtic(1) t 'shard load'\n"
         "set style data lines");
  }
  return plots;
}

// The text as it reads inside <pre>: '<' and '&' escaped.
std::string EscapedForHtml(const std::string& text) {
  std::string escaped;
  for (const char c : text) {
    if (c == '<') {
      escaped += "&lt;";
    } else if (c == '&') {
      escaped += "&amp;";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

// index.html: the text summary, then each plot as SVG with links to its PNG and SVG.
std::string ReportHtml(const std::string& text, const PlotData& data) {
  std::string html =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>nimbus run report</title>\n"
      "<style>body{font-family:sans-serif;max-width:960px;margin:2em auto}pre{background:#f4f4f4;padding:1em;"
      "white-space:pre-wrap}img{max-width:100%}</style></head><body>\n<h1>nimbus run report</h1>\n<pre>";
  html += EscapedForHtml(text);
  html += "</pre>\n";
  const char* const sections[][2] = {{"convergence-round", "Convergence by round"},
                                     {"convergence-time", "Convergence against time"},
                                     {"breakdown", "Compute, communication and waiting per round"},
                                     {"timeline", "A few rounds, worker by worker"},
                                     {"coldstart", "Cold starts"},
                                     {"stragglers", "Stragglers"}};
  for (const auto& [name, title] : sections) {
    if (!data.drawn(name)) continue;
    html += std::string("<h2>") + title + "</h2>\n<p><img src=\"" + name + ".svg\" alt=\"" + title + "\"> <a href=\"" +
            name + ".png\">PNG</a> <a href=\"" + name + ".svg\">SVG</a></p>\n";
  }
  html += "<p>The data behind each plot: convergence.dat, breakdown.dat, timeline.dat, coldstart.dat, "
          "stragglers.dat; the gnuplot script: plots.gp.</p>\n</body></html>\n";
  return html;
}

}  // namespace

Result<ReportFiles> WriteReport(const Trace& trace, const ReportOptions& options) {
  NIMBUS_RETURN_IF_ERROR(MakeDirectories(options.out_dir));
  const std::string dir = options.out_dir;
  ReportFiles files;
  const PlotData data = PlotDataOf(trace, options);
  NIMBUS_RETURN_IF_ERROR(WritePlotData(dir, data));
  const PlotScript plots = ReportPlots(trace, options, data);
  NIMBUS_ASSIGN_OR_RETURN(files.plots, plots.Render(dir, "plots.gp", options.gnuplot));

  const std::string text = ReportText(trace, options.prices);
  files.text = dir + "/report.txt";
  NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(files.text, text));
  files.html = dir + "/index.html";
  NIMBUS_RETURN_IF_ERROR(WriteFileAtomically(files.html, ReportHtml(text, data)));
  return files;
}

Result<ReportFiles> WriteReport(const std::string& trace_path, const ReportOptions& options) {
  NIMBUS_ASSIGN_OR_RETURN(const Trace trace, ReadTrace(trace_path));
  NIMBUS_ASSIGN_OR_RETURN(ReportFiles files, WriteReport(trace, options));
  files.summary = ReportText(trace, options.prices);
  return files;
}

}  // namespace nimbus
