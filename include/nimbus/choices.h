// The choices a solve takes, as types. Text becomes a choice once, where it enters (the
// command line, Python, a checkpoint or profile read back), and a choice is named back the same
// way in summaries, traces and help:
//
//   NIMBUS_ASSIGN_OR_RETURN(options.runtime.kind, ParseChoice<RuntimeKind>(flag));
//   std::string_view name = NameOf(options.runtime.kind);                // "process"
//   std::string names = ChoiceList<RuntimeKind>();                       // "threads, process, ..."
#pragma once

#include <array>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>

#include "nimbus/core/status.h"

namespace nimbus {

// Where the workers run.
enum class RuntimeKind { kThreads, kProcess, kCommand, kLambda, kMpi };
// The master's algorithm: distributed Newton-CG, consensus ADMM, coordinate descent on blocks of
// columns (columns/column_descent.h), or the one the options and the problem call for
// (ChooseMaster's reason says why).
enum class Algorithm { kAuto, kNewton, kAdmm, kColumns };
// MPI's: a master rank and K worker ranks, or every rank a worker that sums with the others.
enum class Topology { kStar, kAllreduce };
// ADMM's consensus: every worker holds all of z, or only the features its shard touches.
enum class ConsensusForm { kGeneral, kDense };
// Data of three classes or more: one binary problem per class, softmax, or scikit-learn's rule.
enum class Multiclass { kOvr, kMultinomial, kAuto };
// Vectors on the wire: doubles, or floats with the answer kept exact (lean messages: ADMM's z and w,
// Newton's Hessian-vector products).
enum class MessagePrecision { kFloat64, kFloat32 };
// The term a regularization path varies.
enum class Penalty { kL1, kL2 };
// ADMM's x-update on each worker: Newton-CG (TRON) or L-BFGS on the augmented objective.
enum class LocalSolver { kNewtonCg, kLbfgs };
// The column method's blocks: columns that share rows together (Scherrer et al.'s clustering),
// runs of adjacent columns, or the measured rule's choice between them (columns/column_descent.h:
// LayOutColumns).
enum class ColumnBlocks { kAuto, kClustered, kContiguous };

// Each choice's names as text spells them, and the option that takes it.
template <typename Choice>
struct ChoiceNames;

#define NIMBUS_CHOICE(Type, flag, ...)                                                            \
  template <>                                                                                     \
  struct ChoiceNames<Type> {                                                                      \
    static constexpr std::string_view option = flag;                                              \
    static constexpr auto names = std::to_array<std::pair<Type, std::string_view>>({__VA_ARGS__}); \
  };

NIMBUS_CHOICE(RuntimeKind, "--runtime", {RuntimeKind::kThreads, "threads"}, {RuntimeKind::kProcess, "process"},
              {RuntimeKind::kCommand, "command"}, {RuntimeKind::kLambda, "lambda"}, {RuntimeKind::kMpi, "mpi"})
NIMBUS_CHOICE(Algorithm, "--algorithm", {Algorithm::kNewton, "newton"}, {Algorithm::kAdmm, "admm"},
              {Algorithm::kColumns, "columns"}, {Algorithm::kAuto, "auto"})
NIMBUS_CHOICE(Topology, "--topology", {Topology::kStar, "star"}, {Topology::kAllreduce, "allreduce"})
NIMBUS_CHOICE(ConsensusForm, "--consensus", {ConsensusForm::kGeneral, "general"}, {ConsensusForm::kDense, "dense"})
NIMBUS_CHOICE(Multiclass, "--multiclass", {Multiclass::kOvr, "ovr"}, {Multiclass::kMultinomial, "multinomial"},
              {Multiclass::kAuto, "auto"})
NIMBUS_CHOICE(MessagePrecision, "--message-precision", {MessagePrecision::kFloat64, "float64"},
              {MessagePrecision::kFloat32, "float32"})
NIMBUS_CHOICE(Penalty, "--penalty", {Penalty::kL1, "l1"}, {Penalty::kL2, "l2"})
NIMBUS_CHOICE(LocalSolver, "--local-solver", {LocalSolver::kNewtonCg, "newton-cg"}, {LocalSolver::kLbfgs, "lbfgs"})
NIMBUS_CHOICE(ColumnBlocks, "--column-blocks", {ColumnBlocks::kClustered, "clustered"},
              {ColumnBlocks::kContiguous, "contiguous"}, {ColumnBlocks::kAuto, "auto"})
#undef NIMBUS_CHOICE

// The choice's name ("threads", "newton", ...): a string literal, so .data() ends in a NUL.
template <typename Choice>
constexpr std::string_view NameOf(Choice choice) {
  for (const auto& [value, name] : ChoiceNames<Choice>::names) {
    if (value == choice) return name;
  }
  return "unknown";
}

// A choice printed by its name (test messages, logs).
template <typename Choice>
  requires requires { ChoiceNames<Choice>::names; }
std::ostream& operator<<(std::ostream& out, Choice choice) {
  return out << NameOf(choice);
}

// The choices' names as a list: "threads, process, command, lambda or mpi".
template <typename Choice>
std::string ChoiceList(std::string_view last = "or") {
  constexpr auto& names = ChoiceNames<Choice>::names;
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i) {
    list += i == 0 ? "" : i + 1 == names.size() ? " " + std::string(last) + " " : ", ";
    list += names[i].second;
  }
  return list;
}

// The choice `text` names; an error that names the option and lists the choices otherwise.
template <typename Choice>
Result<Choice> ParseChoice(std::string_view text) {
  for (const auto& [value, name] : ChoiceNames<Choice>::names) {
    if (name == text) return value;
  }
  return InvalidArgument(std::string(ChoiceNames<Choice>::option) + ": '" + std::string(text) + "' is not " +
                         ChoiceList<Choice>());
}

// LocalSolver by name, as ParseChoice does, and also as "newton" and "l-bfgs" (NameOf gives the
// name back).
Result<LocalSolver> ParseLocalSolver(const std::string& name);

}  // namespace nimbus
