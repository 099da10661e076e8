// auto's choice from measurements: each algorithm's calibrated profile predicts this solve
// (metrics/simulator.h), and the shortest prediction wins. One of ADMM's rounds carries an
// x-update, many passes over the shard; one of Newton's a pass or two; one of the column
// method's a block's coordinate descent, its messages the size of the rows. Where rounds cost
// little, Newton's light rounds win; where each round pays a platform's latency and a link's
// bytes, ADMM's fewer rounds can; where the rows are few against the model, or an l1 problem
// needs many of Newton's rounds, the column method can.
#include <algorithm>
#include <iterator>
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

// The column method can solve the plan: rows in this process, not the softmax, on a runtime
// whose workers can hold a block each (not MPI's allreduce, whose ranks are the master's peers).
bool ColumnsCanSolve(const Plan& plan, const SolveOptions& options) {
  return plan.data && !plan.spec.multinomial && options.runtime.topology != Topology::kAllreduce &&
         plan.workers <= plan.spec.cols;
}

// "a's 1.2 s and b's 3.4 s"
std::string Others(const std::vector<Predicted>& predicted, const Predicted& best) {
  std::string text;
  for (const Predicted& p : predicted) {
    if (&p == &best) continue;
    if (!text.empty()) text += " and ";
    text += Format("%s's %.3g s", NameOf(p.algorithm).data(), p.seconds);
  }
  return text;
}

std::string Sources(const std::vector<Predicted>& predicted) {
  std::string text;
  for (const Predicted& p : predicted) text += (text.empty() ? "" : ", ") + p.profile;
  return text;
}

}  // namespace

bool ProfilesMayChooseColumns(const SolveOptions& options) {
  if (options.algorithm != Algorithm::kAuto) return false;
  return std::any_of(options.algorithm_profiles.begin(), options.algorithm_profiles.end(), [](const std::string& path) {
    const Result<Profile> profile = Profile::Read(path);  // an unreadable one is reported by ChooseMasterFor
    return profile.ok() && profile->columns();
  });
}

Result<MasterChoice> ChooseMasterFor(const Plan& plan, const SolveOptions& options) {
  MasterChoice choice = ChooseMaster(options);
  if (!choice.by_default || options.algorithm_profiles.empty()) return choice;
  std::vector<Predicted> given;
  for (const std::string& path : options.algorithm_profiles) {
    NIMBUS_ASSIGN_OR_RETURN(Predicted p, Predict(path, plan, options));
    for (const Predicted& other : given) {
      if (other.algorithm == p.algorithm) {
        return InvalidArgument("--algorithm-profiles: " + other.profile + " and " + path + " are both " +
                               std::string(NameOf(p.algorithm)) + "'s: give one of each algorithm");
      }
    }
    given.push_back(std::move(p));
  }
  std::vector<Predicted> predicted;  // those that can solve the plan
  std::copy_if(given.begin(), given.end(), std::back_inserter(predicted), [&](const Predicted& p) {
    return p.algorithm != Algorithm::kColumns || ColumnsCanSolve(plan, options);
  });
  if (given.size() < 2) {
    return InvalidArgument("--algorithm-profiles: give one profile of each algorithm to choose among, at least two of "
                           "newton's, admm's and the column method's (nimbus simulate calibrate --algorithm newton, "
                           "admm, columns)");
  }
  const auto best = std::min_element(predicted.begin(), predicted.end(),
                                     [](const Predicted& a, const Predicted& b) { return a.seconds < b.seconds; });
  choice.algorithm = best->algorithm;
  if (predicted.size() == 1) {
    choice.reason = Format("auto: %s, predicted %.3g s to solution at K = %d (from %s; the column method cannot "
                           "solve this plan: rows in a store or text for the workers, the softmax, or more workers than "
                           "columns)",
                           NameOf(best->algorithm).data(), best->seconds, std::max(1, plan.workers),
                           best->profile.c_str());
    return choice;
  }
  choice.reason = Format("auto: %s, predicted %.3g s to solution against %s at K = %d on %s (from %s)",
                         NameOf(best->algorithm).data(), best->seconds, Others(predicted, *best).c_str(),
                         std::max(1, plan.workers),
                         options.runtime.kind == RuntimeKind::kLambda ? "Lambda" : "this machine",
                         Sources(predicted).c_str());
  return choice;
}

}  // namespace nimbus
