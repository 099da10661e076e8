#include "nimbus/model/model.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nimbus/core/file_io.h"
#include "nimbus/core/json_integer.h"
#include "nimbus/core/json_writer.h"

namespace nimbus {
namespace {

using Json = nlohmann::json;

// liblinear's name for the solver that solves the same problem.
const char* LiblinearSolverType(const Model& model) {
  const bool l1 = model.regularizer.l1 > 0;
  switch (model.loss.kind()) {
    case LossKind::kLogistic: return l1 ? "L1R_LR" : "L2R_LR";
    case LossKind::kSquaredHinge: return l1 ? "L1R_L2LOSS_SVC" : "L2R_L2LOSS_SVC";
    case LossKind::kSquared: return "L2R_L2LOSS_SVR";
    case LossKind::kCustom: return nullptr;
  }
  return nullptr;
}

Result<Loss> LossOfLiblinearSolver(const std::string& solver) {
  if (solver == "L1R_LR" || solver == "L2R_LR" || solver == "L2R_LR_DUAL") return Loss::kLogistic;
  if (solver == "L1R_L2LOSS_SVC" || solver == "L2R_L2LOSS_SVC" || solver == "L2R_L2LOSS_SVC_DUAL") {
    return Loss::kSquaredHinge;
  }
  if (solver == "L2R_L2LOSS_SVR" || solver == "L2R_L2LOSS_SVR_DUAL") return Loss::kSquared;
  return InvalidArgument("liblinear solver_type " + solver + " is not a loss nimbus supports");
}

// The listed weights (1-based indices, any order) into `model`: as the features listed alone
// when they are fewer than half of cols (a hashed space of 2^31 features never becomes a
// vector of that length), else dense. Leaves room for the intercept last.
Status SetWeights(const std::vector<int64_t>& indices, const std::vector<double>& values, const std::string& path,
                  Model* model) {
  std::vector<std::pair<int64_t, double>> listed;
  listed.reserve(indices.size());
  for (std::size_t k = 0; k < indices.size(); ++k) {
    if (indices[k] < 1 || indices[k] > model->cols) {
      return InvalidArgument(path + ": weights.indices[" + std::to_string(k) + "] = " + std::to_string(indices[k]) +
                             " is outside 1.." + std::to_string(model->cols));
    }
    listed.emplace_back(indices[k] - 1, values[k]);
  }
  std::sort(listed.begin(), listed.end());
  for (std::size_t k = 1; k < listed.size(); ++k) {
    if (listed[k].first == listed[k - 1].first) {
      return InvalidArgument(path + ": weights.indices lists feature " + std::to_string(listed[k].first + 1) + " twice");
    }
  }
  const std::size_t bias = model->intercept ? 1 : 0;
  if (2 * static_cast<int64_t>(listed.size()) >= model->cols) {
    model->weights.assign(static_cast<std::size_t>(model->cols) + bias, 0.0);
    for (const auto& [feature, value] : listed) model->weights[static_cast<std::size_t>(feature)] = value;
    return Status::Ok();
  }
  // No weight listed: feature 0 is held at 0, since holding none would mean holding all.
  if (listed.empty()) listed.emplace_back(0, 0.0);
  for (const auto& [feature, value] : listed) {
    model->features.push_back(static_cast<uint32_t>(feature));
    model->weights.push_back(value);
  }
  model->weights.resize(listed.size() + bias, 0.0);
  return Status::Ok();
}

Result<Model> ParseJsonModel(const std::string& text, const std::string& path) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::exception& error) {  // parse errors, and numbers out of range
    return InvalidArgument(path + ": not valid JSON: " + error.what());
  }
  Model model;
  try {
    if (root.value("format", "") != "nimbus-model") return InvalidArgument(path + ": format is not 'nimbus-model'");
    if (JsonInteger<int>(root.at("version")) != 1) return InvalidArgument(path + ": unsupported model version");
    NIMBUS_ASSIGN_OR_RETURN(model.loss, ParseLoss(root.at("loss").get<std::string>()));
    model.regularizer.l1 = root.at("l1").get<double>();
    model.regularizer.l2 = root.at("l2").get<double>();
    model.intercept = root.at("intercept").get<bool>();
    model.cols = JsonInteger<int64_t>(root.at("cols"));
    // Up to 2^32 features, as many as 32-bit indices number (the caller's arrays may use them all).
    if (model.cols < 0 || model.cols > (int64_t{1} << 32)) return InvalidArgument(path + ": field 'cols' out of range");
    const Json& labels = root.at("labels");
    model.labels.binary = labels.at("binary").get<bool>();
    model.labels.negative = labels.at("negative").get<double>();
    model.labels.positive = labels.at("positive").get<double>();
    const auto indices = JsonIntegers<int64_t>(root.at("weights").at("indices"));
    const auto values = root.at("weights").at("values").get<std::vector<double>>();
    if (indices.size() != values.size()) return InvalidArgument(path + ": weights.indices and weights.values differ in length");
    NIMBUS_RETURN_IF_ERROR(SetWeights(indices, values, path, &model));
    if (model.intercept) model.weights.back() = root.at("bias").get<double>();
  } catch (const Json::exception& error) {
    return InvalidArgument(path + ": malformed model: " + error.what());
  }
  return model;
}

Result<Model> ParseLiblinearModel(const std::string& text, const std::string& path) {
  Model model;
  model.origin = "liblinear";
  std::istringstream in(text);
  std::string line;
  int line_number = 0;
  double bias = -1;
  bool have_solver = false, have_features = false;
  std::vector<double> labels;
  auto error = [&](const std::string& why) { return InvalidArgument(path + ":" + std::to_string(line_number) + ": " + why); };
  while (std::getline(in, line)) {
    ++line_number;
    std::istringstream fields(line);
    std::string key;
    fields >> key;
    if (key == "solver_type") {
      std::string solver;
      fields >> solver;
      NIMBUS_ASSIGN_OR_RETURN(model.loss, LossOfLiblinearSolver(solver));
      have_solver = true;
    } else if (key == "nr_class") {
      int classes = 0;
      fields >> classes;
      if (classes != 2) return error("nr_class " + std::to_string(classes) + ": only binary models are supported");
    } else if (key == "label") {
      double label = 0;
      while (fields >> label) labels.push_back(label);
      if (labels.size() != 2) return error("expected two labels");
    } else if (key == "nr_feature") {
      if (!(fields >> model.cols) || model.cols < 0) return error("bad nr_feature");
      have_features = true;
    } else if (key == "bias") {
      if (!(fields >> bias)) return error("bad bias");
    } else if (key == "w") {
      break;
    } else if (!key.empty()) {
      return error("unknown header field '" + key + "'");
    }
  }
  if (!have_solver || !have_features) return InvalidArgument(path + ": missing solver_type or nr_feature");
  model.intercept = bias >= 0;
  model.labels.binary = IsClassification(model.loss);
  if (model.labels.binary) {
    if (labels.size() != 2) return InvalidArgument(path + ": a classifier needs a 'label' line");
    // liblinear predicts label[0] where w.x > 0.
    model.labels.positive = labels[0];
    model.labels.negative = labels[1];
  }
  // As many weights as the file holds, not as nr_feature claims: memory follows the file.
  const auto count = static_cast<std::size_t>(model.cols) + (model.intercept ? 1 : 0);
  for (double w = 0; model.weights.size() < count; model.weights.push_back(w)) {
    ++line_number;
    if (!(in >> w)) return error("expected " + std::to_string(count) + " weights");
  }
  // liblinear's bias feature has value `bias`; nimbus's intercept multiplies 1.
  if (model.intercept) model.weights.back() *= bias;
  return model;
}

}  // namespace

double Model::Weight(int64_t feature) const {
  if (features.empty()) return feature >= 0 && feature < cols ? weights[static_cast<std::size_t>(feature)] : 0.0;
  const auto at = std::lower_bound(features.begin(), features.end(), feature,
                                   [](uint32_t held, int64_t f) { return static_cast<int64_t>(held) < f; });
  return at != features.end() && *at == feature ? weights[static_cast<std::size_t>(at - features.begin())] : 0.0;
}

std::vector<double> Model::ColumnWeights(const Dataset& data) const {
  std::vector<double> w(static_cast<std::size_t>(data.cols()) + (intercept ? 1 : 0), 0.0);
  std::size_t next = 0;  // both ascend: a merge of the data's features with the model's
  for (int64_t column = 0; column < data.cols(); ++column) {
    const int64_t feature = data.columns.FeatureOf(column);
    if (features.empty()) {
      if (feature < cols) w[static_cast<std::size_t>(column)] = weights[static_cast<std::size_t>(feature)];
      continue;
    }
    while (next < features.size() && features[next] < feature) ++next;
    if (next < features.size() && features[next] == feature) w[static_cast<std::size_t>(column)] = weights[next];
  }
  if (intercept) w.back() = bias();
  return w;
}

std::vector<double> Model::WeightsFor(int64_t data_cols) const {
  const int64_t cols_used = std::max(cols, data_cols);
  std::vector<double> padded(static_cast<std::size_t>(cols_used) + (intercept ? 1 : 0), 0.0);
  for (int64_t k = 0; k < held(); ++k) {
    const int64_t feature = features.empty() ? k : features[static_cast<std::size_t>(k)];
    padded[static_cast<std::size_t>(feature)] = weights[static_cast<std::size_t>(k)];
  }
  if (intercept) padded.back() = bias();
  return padded;
}

ProblemSpec Model::Spec(int64_t rows, int64_t data_cols) const {
  ProblemSpec spec;
  spec.loss = loss;
  spec.regularizer = regularizer;
  spec.intercept = intercept;
  spec.rows = rows;
  spec.cols = std::max(cols, data_cols);
  return spec;
}

Result<ModelFormat> ParseModelFormat(const std::string& name) {
  if (name == "json") return ModelFormat::kJson;
  if (name == "liblinear") return ModelFormat::kLiblinear;
  return InvalidArgument("unknown model format '" + name + "' (choose json or liblinear)");
}

std::string ModelToJson(const Model& model) {
  JsonWriter json(1);
  json.BeginObject()
      .Field("format", "nimbus-model")
      .Field("version", 1)
      .Field("loss", LossName(model.loss))
      .Field("l1", model.regularizer.l1)
      .Field("l2", model.regularizer.l2)
      .Field("intercept", model.intercept)
      .Field("cols", model.cols);
  if (model.intercept) json.Field("bias", model.weights.back());
  json.Key("labels")
      .BeginObject()
      .Field("binary", model.labels.binary)
      .Field("negative", model.labels.negative)
      .Field("positive", model.labels.positive)
      .EndObject();
  // Sparse, 1-based like LIBSVM: an L1 model over millions of features stays small.
  std::string indices = "[", values = "[";
  for (int64_t k = 0; k < model.held(); ++k) {
    const double w = model.weights[static_cast<std::size_t>(k)];
    if (w == 0.0) continue;
    if (indices.size() > 1) {
      indices += ',';
      values += ',';
    }
    indices += std::to_string((model.features.empty() ? k : model.features[static_cast<std::size_t>(k)]) + 1);
    AppendJsonNumber(values, w);
  }
  json.Key("weights").BeginObject().Key("indices").Raw(indices + "]").Key("values").Raw(values + "]").EndObject();
  return json.EndObject().Take() + "\n";
}

Status CheckLiblinearSize(int64_t cols) {
  if (cols <= kMaxLiblinearFeatures) return Status::Ok();
  const int64_t gib = (cols * 8 + (int64_t{1} << 30) - 1) >> 30;
  return InvalidArgument("a liblinear model file holds one weight per feature, and this model has " +
                         std::to_string(cols) + " features (liblinear-predict would need " + std::to_string(gib) +
                         " GiB for them); the format's limit here is " + std::to_string(kMaxLiblinearFeatures) +
                         " (2^27): write the model as JSON (--model-format json), which lists only its nonzero weights");
}

namespace {

// liblinear's text, a piece at a time to `emit` (a file of a large model is never one string).
template <typename Emit>
Status EmitLiblinear(const Model& model, Emit emit) {
  NIMBUS_RETURN_IF_ERROR(CheckLiblinearSize(model.cols));
  const char* solver = LiblinearSolverType(model);
  if (solver == nullptr) {
    return InvalidArgument(std::string("liblinear model files hold liblinear's losses; the '") + LossName(model.loss) +
                           "' loss has none (write JSON)");
  }
  std::string out = "solver_type " + std::string(solver) + "\n";
  out += "nr_class 2\n";
  if (model.labels.binary) {
    for (double label : {model.labels.positive, model.labels.negative}) {
      if (label != std::round(label) || std::abs(label) > 2e9) {
        return InvalidArgument("liblinear model files hold integer labels; label " + FormatLabel(label) + " is not one");
      }
    }
    out += "label " + FormatLabel(model.labels.positive) + " " + FormatLabel(model.labels.negative) + "\n";
  }
  out += "nr_feature " + std::to_string(model.cols) + "\n";
  out += model.intercept ? "bias 1\n" : "bias -1\n";
  out += "w\n";
  // Every feature, the ones the model does not hold as 0 (the held ones ascend: a merge).
  char text[40];
  std::size_t next = 0;
  for (int64_t j = 0; j < model.cols; ++j) {
    double w = 0;
    if (model.features.empty()) {
      w = model.weights[static_cast<std::size_t>(j)];
    } else if (next < model.features.size() && model.features[next] == j) {
      w = model.weights[next++];
    }
    std::snprintf(text, sizeof text, "%.17g \n", w);
    out += text;
    if (out.size() >= (1 << 20)) {
      NIMBUS_RETURN_IF_ERROR(emit(out));
      out.clear();
    }
  }
  if (model.intercept) {
    std::snprintf(text, sizeof text, "%.17g \n", model.bias());
    out += text;
  }
  return emit(out);
}

}  // namespace

Result<std::string> ModelToLiblinear(const Model& model) {
  std::string text;
  NIMBUS_RETURN_IF_ERROR(EmitLiblinear(model, [&text](std::string_view piece) {
    text += piece;
    return Status::Ok();
  }));
  return text;
}

Status WriteModel(const Model& model, ModelFormat format, const std::string& path) {
  if (format == ModelFormat::kJson) return WriteFileAtomically(path, ModelToJson(model));
  NIMBUS_ASSIGN_OR_RETURN(AtomicFileWriter file, AtomicFileWriter::Open(path));
  NIMBUS_RETURN_IF_ERROR(EmitLiblinear(model, [&file](std::string_view piece) { return file.Write(piece); }));
  return file.Commit();
}

Result<Model> ReadModel(const std::string& path) {
  NIMBUS_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return ParseJsonModel(text, path);
  if (text.compare(0, 11, "solver_type") == 0) return ParseLiblinearModel(text, path);
  return InvalidArgument(path + ": neither a nimbus JSON model nor a liblinear model");
}

}  // namespace nimbus
