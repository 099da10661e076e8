#include "solve_setup.h"

#include <optional>
#include <string_view>

#include "cli_common.h"

namespace nimbus::cli {

void AddProblemOptions(ArgParser& parser, ProblemFlags* flags) {
  AdmmOptions& admm = flags->options.admm;
  parser.AddString("data", "FILE.svm|DIR|s3://B/P", "training data: a LIBSVM file, or shards in a directory or S3",
                   &flags->data);
  parser.AddString("sample-weights", "FILE", "each row's weight, one per line (a row counts that many times)",
                   &flags->sample_weights);
  parser.AddString("loss", "NAME", "logistic, squared or squared_hinge", &flags->loss);
  parser.AddDouble("l1", "X", "L1 regularization weight", &flags->l1);
  parser.AddDouble("l2", "X", "L2 regularization weight", &flags->l2);
  parser.AddSwitch("intercept", "fit an unregularized intercept b", &flags->options.intercept);
  parser.AddString("class-weight", "L=W,...", "weigh class L's rows W times (liblinear's -wL W), or 'balanced'\n"
                   "                            (each class N / (classes x its rows))", &flags->class_weight);
  parser.AddChoice("multiclass", "METHOD", "data of three classes or more: ovr (one-vs-rest, liblinear's: a binary\n"
                   "                            problem per class, solved side by side), multinomial (softmax, logistic loss),\n"
                   "                            or auto (multinomial for three classes or more)",
                   &flags->options.multiclass);
  parser.AddDouble("eps-abs", "X", "absolute tolerance of the stop test", &admm.eps_abs);
  parser.AddDouble("eps-rel", "X", "relative tolerance of the stop test", &admm.eps_rel);
  flags->max_iter = admm.max_iterations;  // shown as the default
  parser.AddInt("max-iter", "N", "iteration cap", &flags->max_iter);
  parser.AddChoice("consensus", "FORM", "dense (every worker holds all of z) or general (a worker holds the\n"
                   "                            features its shard touches; messages follow the data, not d)",
                   &flags->options.consensus);
}

Status ApplyProblemFlags(const ArgParser& parser, ProblemFlags* flags) {
  SolveOptions& options = flags->options;
  Result<Loss> loss = ParseLoss(flags->loss);
  if (!loss.ok()) return loss.status().WithContext("--loss");
  options.loss = *loss;
  if (parser.Given("l1")) options.l1 = flags->l1;
  if (parser.Given("l2")) options.l2 = flags->l2;
  if (flags->max_iter < 0 || flags->max_iter > 100000000) return InvalidArgument("--max-iter: must be >= 0");
  options.admm.max_iterations = static_cast<int>(flags->max_iter);
  if (parser.Given("class-weight")) {
    NIMBUS_ASSIGN_OR_RETURN(options.class_weights, ClassWeights::Parse(flags->class_weight));
  }
  return Status::Ok();
}

TrainingData TrainingDataOf(const ProblemFlags& flags) {
  TrainingData data = TrainingData::At(flags.data);
  return flags.sample_weights.empty() ? data : std::move(data).WithSampleWeights(flags.sample_weights);
}

void AddRuntimeOptions(ArgParser& parser, RuntimeOptions* flags) {
  parser.AddChoice("runtime", "NAME", "where workers run: threads, process, command, lambda or mpi (under mpirun)",
                   &flags->kind);
  parser.AddString("launch", "TEMPLATE", "--runtime command: how to start a worker, e.g. 'ssh {host} nimbus worker {args}'",
                   &flags->launch);
  parser.AddString("hosts", "H1,H2,...", "--runtime command: values for {host}, round robin", &flags->hosts);
  parser.AddString("lambda-function", "NAME", "--runtime lambda: the function that runs workers", &flags->lambda_function);
  parser.AddString("lambda-endpoint", "URL", "--runtime lambda: the Lambda API (default: AWS's, or AWS_ENDPOINT_URL)",
                   &flags->lambda_endpoint);
  parser.AddSwitch("lambda-pass-credentials", "--runtime lambda: send this machine's AWS credentials in each event\n"
                   "                            (instead of relying on the function's role)", &flags->lambda_pass_credentials);
  parser.AddString("listen", "ENDPOINT", "where the master listens for workers", &flags->listen);
  parser.AddString("advertise", "ENDPOINT", "the address workers dial, if not the listening one (NAT, public host)",
                   &flags->advertise);
  parser.AddSwitch("insecure", "workers speak plaintext, without the run's CurveZMQ keys (allowed only when\n"
                   "                            --listen is a loopback address)", &flags->insecure);
  parser.AddString("shard-dir", "DIR", "remote runtimes with a LIBSVM file: write the shards here (default: a\n"
                   "                            temporary directory, removed after the run; with mpi on several\n"
                   "                            machines, a directory all of them see)", &flags->shard_dir);
  parser.AddDouble("max-lifetime", "SECONDS", "workers hand over to a successor after this long (as Lambda's cap)",
                   &flags->max_lifetime);
  parser.AddDouble("round-timeout-floor", "SECONDS", "the least time a worker gets for a round before it is replaced",
                   &flags->round_timeout_floor);
  parser.AddDouble("heartbeat", "SECONDS", "heartbeat interval; 5 missed heartbeats mean a worker is gone", &flags->heartbeat);
  parser.AddInt("max-restarts", "N", "new invocations of one worker within one round before giving up", &flags->max_restarts);
  parser.AddInt("relays", "R", "process, command: serve the workers through R relays, each summing its group's\n"
                "                            replies into one message to the master (Newton; default 0: none)", &flags->relays);
  parser.AddInt("relay-fanout", "F", "a relay with more than F workers starts relays of its own (a tree; 0: no limit)",
                &flags->relay_fanout);
  parser.AddChoice("relay-workers", "NAME", "how a relay runs its workers: process or threads on its host, or command\n"
                   "                            (each by --launch on its host of --hosts, dialing the relay)",
                   &flags->relay_workers);
  parser.AddString("relay-hosts", "H1,H2,...", "--runtime command: values for {host} for the relays (default: --hosts)",
                   &flags->relay_hosts);
}

void AddGridOptions(ArgParser& parser, PathOptions* path, std::string* lambdas) {
  parser.AddChoice("penalty", "l1|l2", "the term the grid varies: l1 (with --l2 fixed, the elastic net)\n"
                   "                            or l2 (ridge; with --l1 fixed)", &path->penalty);
  parser.AddInt("path-length", "N", "points on the grid", &path->length);
  parser.AddDouble("path-min-ratio", "R", "the grid ends at R x lambda_max (default 1e-3 for l1, 1e-6 for l2)",
                   &path->min_ratio);
  parser.AddString("lambdas", "X1,X2,...", "the grid itself, in place of --path-length and --path-min-ratio", lambdas);
}

Status ApplyGridFlags(const std::string& lambdas, PathOptions* path) {
  for (const std::string& item : SplitList(lambdas)) {
    const std::optional<double> lambda = ParseReal(item);
    if (!lambda) return InvalidArgument("--lambdas: '" + item + "' is not a number");
    path->lambdas.push_back(*lambda);
  }
  return path->Validate();
}

void AddGridCommandOptions(ArgParser& parser, GridCommandFlags* flags, PathOptions* path, const std::string& json_file) {
  SolveOptions& options = flags->problem.options;
  AddProblemOptions(parser, &flags->problem);
  AddGridOptions(parser, path, &flags->lambdas);
  AddRuntimeOptions(parser, &options.runtime);
  AddAlgorithmOptions(parser, &options);
  parser.AddSwitch("no-plots", "write the data and the gnuplot script, but do not run gnuplot", &flags->no_plots);
  AddPriceOptions(parser, &options.prices, &flags->memory_mb);
  parser.AddSwitch("json", "print " + json_file + " to standard output instead of the table", &flags->json);
  parser.AddSwitch("quiet", "print nothing but errors", &flags->quiet);
  parser.Require("data");
}

Status ApplyGridCommandFlags(const ArgParser& parser, GridCommandFlags* flags, PathOptions* path) {
  NIMBUS_RETURN_IF_ERROR(ApplyProblemFlags(parser, &flags->problem));
  NIMBUS_RETURN_IF_ERROR(ApplyGridFlags(flags->lambdas, path));
  NIMBUS_RETURN_IF_ERROR(FinishPriceOptions(flags->memory_mb, &flags->problem.options.prices));
  NIMBUS_RETURN_IF_ERROR(flags->problem.options.Validate());
  return CheckWritableLocation(flags->out);
}

void AddAlgorithmOptions(ArgParser& parser, SolveOptions* flags) {
  parser.AddChoice("algorithm", "NAME", "admm, newton (Newton-CG over the shards: trust region; active sets with\n"
                   "                            --l1), columns (coordinate descent on blocks of columns, newGLMNET's; the\n"
                   "                            master reads the rows; --workers blocks on its threads, or for train on\n"
                   "                            any --runtime's workers, a block of columns each; path and cv on\n"
                   "                            threads, the folds side by side on its cores), or auto (newton unless an\n"
                   "                            option needs admm; columns on threads for nimbus cv along an l1 grid,\n"
                   "                            and for train and path with --l1 and --intercept, --workers not given)",
                   &flags->algorithm);
  parser.AddDouble("gradient-tolerance", "X", "newton: stop when the minimum-norm subgradient of F is X times its\n"
                   "                            norm at the start", &flags->gradient_tolerance);
}

}  // namespace nimbus::cli
