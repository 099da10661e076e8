// auto's choice from measurements: each algorithm's calibrated profile predicts this solve
// (metrics/simulator.h), and the shorter prediction wins. One of ADMM's rounds carries an
// x-update, many passes over the shard; one of Newton's a pass or two. Where rounds cost
// little, Newton's light rounds win; where each round pays a platform's latency and a link's
// bytes, ADMM's fewer rounds can.
#include <numeric>
#include <string>
#include <vector>

#include "nimbus/api/plan.h"
#include "nimbus/core/format.h"
#include "nimbus/metrics/simulator.h"

namespace nimbus {
namespace {

// The plan's nonzeros, wherever its rows are.
int64_t PlannedNnz(const Plan& plan) {
  if (plan.data) return plan.data->nnz();
  if (plan.text) {
    return std::accumulate(plan.text->scans.begin(), plan.text->scans.end(), int64_t{0},
                           [](int64_t sum, const TextScan& scan) { return sum + scan.nnz; });
  }
  return plan.manifest.nnz;
}

struct Predicted {
  Algorithm algorithm = Algorithm::kNewton;
  double seconds = 0;
  std::string profile;
};

Result<Predicted> Predict(const std::string& path, const Plan& plan, const SolveOptions& options) {
  NIMBUS_ASSIGN_OR_RETURN(const Profile profile, Profile::Read(path));
  if (profile.algorithm != Algorithm::kNewton && profile.algorithm != Algorithm::kAdmm) {
    return InvalidArgument(path + ": a profile of newton or admm, not " + std::string(NameOf(profile.algorithm)));
  }
  const Platform platform =
      options.runtime.kind == RuntimeKind::kLambda ? Platform::Lambda() : Platform::Local(profile);
  Scenario scenario;
  scenario.rows = plan.spec.rows;
  scenario.cols = plan.spec.cols;
  scenario.nnz = std::max(PlannedNnz(plan), plan.spec.rows);
  scenario.workers = std::max(1, plan.workers);
  Result<Prediction> predicted = Simulate(profile, platform, scenario, Prices{});
  if (!predicted.ok()) return predicted.status().WithContext(path);
  return Predicted{profile.algorithm, predicted->total_seconds, path};
}

}  // namespace

Result<MasterChoice> ChooseMasterFor(const Plan& plan, const SolveOptions& options) {
  MasterChoice choice = ChooseMaster(options);
  if (!choice.by_default || options.algorithm_profiles.empty()) return choice;
  std::vector<Predicted> predicted;
  for (const std::string& path : options.algorithm_profiles) {
    NIMBUS_ASSIGN_OR_RETURN(Predicted p, Predict(path, plan, options));
    for (const Predicted& other : predicted) {
      if (other.algorithm == p.algorithm) {
        return InvalidArgument("--algorithm-profiles: " + other.profile + " and " + path + " are both " +
                               std::string(NameOf(p.algorithm)) + "'s: give one of each algorithm");
      }
    }
    predicted.push_back(std::move(p));
  }
  if (predicted.size() != 2) {
    return InvalidArgument("--algorithm-profiles: give one profile of each algorithm, newton's and admm's "
                           "(nimbus simulate calibrate --algorithm newton, and admm)");
  }
  const Predicted& best = predicted[0].seconds <= predicted[1].seconds ? predicted[0] : predicted[1];
  const Predicted& other = &best == &predicted[0] ? predicted[1] : predicted[0];
  choice.algorithm = best.algorithm;
  choice.reason = Format("auto: %s, predicted %.3g s to solution against %s's %.3g s at K = %d on %s (from %s and %s)",
                         NameOf(best.algorithm).data(), best.seconds, NameOf(other.algorithm).data(), other.seconds,
                         std::max(1, plan.workers),
                         options.runtime.kind == RuntimeKind::kLambda ? "Lambda" : "this machine",
                         best.profile.c_str(), other.profile.c_str());
  return choice;
}

}  // namespace nimbus
