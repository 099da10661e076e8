#include "nimbus/model/model.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nimbus/core/file_io.h"
#include "nimbus/core/json_integer.h"
#include "nimbus/core/json_text.h"

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

// The listed weights (1-based indices, any order; C values each, class by class) into `model`:
// as the features listed alone when they are fewer than half of cols (a hashed space of 2^31
// features never becomes a vector of that length), else dense. Leaves room for the intercepts
// last.
Status SetWeights(const std::vector<int64_t>& indices, const std::vector<double>& values, const std::string& path,
                  Model* model) {
  const auto c_count = static_cast<std::size_t>(model->classes);
  std::vector<std::pair<int64_t, std::size_t>> listed;  // feature, its position in the file
  listed.reserve(indices.size());
  for (std::size_t k = 0; k < indices.size(); ++k) {
    if (indices[k] < 1 || indices[k] > model->cols) {
      return InvalidArgument(path + ": weights.indices[" + std::to_string(k) + "] = " + std::to_string(indices[k]) +
                             " is outside 1.." + std::to_string(model->cols));
    }
    listed.emplace_back(indices[k] - 1, k);
  }
  std::sort(listed.begin(), listed.end());
  for (std::size_t k = 1; k < listed.size(); ++k) {
    if (listed[k].first == listed[k - 1].first) {
      return InvalidArgument(path + ": weights.indices lists feature " + std::to_string(listed[k].first + 1) + " twice");
    }
  }
  const std::size_t bias = model->intercept ? c_count : 0;
  auto copy = [&](std::size_t from, std::size_t to) {
    for (std::size_t c = 0; c < c_count; ++c) model->weights[to * c_count + c] = values[from * c_count + c];
  };
  if (2 * static_cast<int64_t>(listed.size()) >= model->cols) {
    model->weights.assign(static_cast<std::size_t>(model->cols) * c_count + bias, 0.0);
    for (const auto& [feature, at] : listed) copy(at, static_cast<std::size_t>(feature));
    return Status::Ok();
  }
  // No weight listed: feature 0 is held at 0, since holding none would mean holding all.
  model->weights.assign((std::max<std::size_t>(listed.size(), 1)) * c_count + bias, 0.0);
  if (listed.empty()) model->features.push_back(0);
  for (std::size_t k = 0; k < listed.size(); ++k) {
    model->features.push_back(static_cast<uint32_t>(listed[k].first));
    copy(listed[k].second, k);
  }
  return Status::Ok();
}

// A multiclass model's fields: its classes, their values and the kind of model.
Status ReadClassFields(const Json& root, Model* model) {
  model->classes = JsonInteger<int64_t>(root.at("classes"));
  model->multinomial = root.at("multinomial").get<bool>();
  if (model->classes < 2 || model->classes > kMaxClasses) return InvalidArgument("field 'classes' out of range");
  const Json& labels = root.at("labels");
  if (labels.contains("classes")) model->labels.classes = labels.at("classes").get<std::vector<double>>();
  const auto values = model->labels.ClassValues();
  if (static_cast<int64_t>(values.size()) != model->classes || !std::is_sorted(values.begin(), values.end())) {
    if (!(model->multinomial && model->classes == 2 && values.size() == 2)) {
      return InvalidArgument("labels.classes must list the 'classes' class values in ascending order");
    }
  }
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
    const int version = JsonInteger<int>(root.at("version"));
    if (version != 1 && version != 2) return InvalidArgument(path + ": unsupported model version");
    NIMBUS_ASSIGN_OR_RETURN(model.loss, ParseLoss(root.at("loss").get<std::string>()));
    model.regularizer.l1 = root.at("l1").get<double>();
    model.regularizer.l2 = root.at("l2").get<double>();
    model.intercept = root.at("intercept").get<bool>();
    model.cols = JsonInteger<int64_t>(root.at("cols"));
    // Up to 2^32 features, as many as 32-bit indices number (the caller's arrays may use them all).
    if (model.cols < 0 || model.cols > (int64_t{1} << 32)) return InvalidArgument(path + ": field 'cols' out of range");
    const Json& labels = root.at("labels");
    model.labels.classification = labels.at("binary").get<bool>();
    model.labels.negative = labels.at("negative").get<double>();
    model.labels.positive = labels.at("positive").get<double>();
    // Version 2: a multiclass model, C values per listed feature and C intercepts.
    if (version == 2) NIMBUS_RETURN_IF_ERROR(ReadClassFields(root, &model).WithContext(path));
    const auto indices = JsonIntegers<int64_t>(root.at("weights").at("indices"));
    std::vector<double> values;
    if (version == 1) {
      values = root.at("weights").at("values").get<std::vector<double>>();
    } else {
      for (const Json& row : root.at("weights").at("values")) {
        const auto per_class = row.get<std::vector<double>>();
        if (static_cast<int64_t>(per_class.size()) != model.classes) {
          return InvalidArgument(path + ": weights.values: every entry lists one weight per class");
        }
        values.insert(values.end(), per_class.begin(), per_class.end());
      }
    }
    if (indices.size() * static_cast<std::size_t>(model.classes) != values.size()) {
      return InvalidArgument(path + ": weights.indices and weights.values differ in length");
    }
    NIMBUS_RETURN_IF_ERROR(SetWeights(indices, values, path, &model));
    if (model.intercept && version == 1) model.weights.back() = root.at("bias").get<double>();
    if (model.intercept && version == 2) {
      const auto bias = root.at("bias").get<std::vector<double>>();
      if (static_cast<int64_t>(bias.size()) != model.classes) return InvalidArgument(path + ": bias: one per class");
      std::copy(bias.begin(), bias.end(), model.weights.end() - static_cast<std::ptrdiff_t>(bias.size()));
    }
  } catch (const Json::exception& error) {
    return InvalidArgument(path + ": malformed model: " + error.what());
  }
  return model;
}

// A multiclass liblinear model lists its classes in the order the training data met them;
// nimbus's are in ascending order of value: the weights' columns are permuted to match.
void SortClasses(const std::vector<double>& file_order, Model* model) {
  const std::size_t c_count = file_order.size();
  std::vector<std::size_t> order(c_count);
  for (std::size_t c = 0; c < c_count; ++c) order[c] = c;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return file_order[a] < file_order[b]; });
  model->classes = static_cast<int64_t>(c_count);
  model->labels.classes.clear();
  for (const std::size_t c : order) model->labels.classes.push_back(file_order[c]);
  std::vector<double> row(c_count);
  for (std::size_t at = 0; at < model->weights.size(); at += c_count) {
    for (std::size_t c = 0; c < c_count; ++c) row[c] = model->weights[at + order[c]];
    std::copy(row.begin(), row.end(), model->weights.begin() + static_cast<std::ptrdiff_t>(at));
  }
}

Result<Model> ParseLiblinearModel(const std::string& text, const std::string& path) {
  Model model;
  model.origin = "liblinear";
  std::istringstream in(text);
  std::string line;
  int line_number = 0;
  double bias = -1;
  int classes = 2;
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
      if (!(fields >> classes) || classes < 2 || classes > kMaxClasses) return error("bad nr_class");
    } else if (key == "label") {
      double label = 0;
      while (fields >> label) labels.push_back(label);
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
  model.labels.classification = IsClassification(model.loss);
  // liblinear keeps one weight vector for two classes, one per class for more.
  const std::size_t columns = model.labels.classification && classes > 2 ? static_cast<std::size_t>(classes) : 1;
  if (model.labels.classification) {
    if (static_cast<int>(labels.size()) != classes) {
      return InvalidArgument(path + ": a classifier needs a 'label' line with nr_class labels");
    }
    // liblinear predicts label[0] where w.x > 0.
    model.labels.positive = labels[0];
    model.labels.negative = labels[1];
  }
  // As many weights as the file holds, not as nr_feature claims: memory follows the file.
  const std::size_t count = (static_cast<std::size_t>(model.cols) + (model.intercept ? 1 : 0)) * columns;
  for (double w = 0; model.weights.size() < count; model.weights.push_back(w)) {
    if (model.weights.size() % columns == 0) ++line_number;
    if (!(in >> w)) return error("expected " + std::to_string(count) + " weights");
  }
  // liblinear's bias feature has value `bias`; nimbus's intercept multiplies 1.
  for (std::size_t c = 0; c < columns && model.intercept; ++c) model.weights[count - columns + c] *= bias;
  if (columns > 1) SortClasses(labels, &model);
  return model;
}

}  // namespace

double Model::Weight(int64_t feature, int64_t of_class) const {
  const auto c_count = static_cast<std::size_t>(classes);
  const auto c = static_cast<std::size_t>(of_class);
  if (features.empty()) return feature >= 0 && feature < cols ? weights[static_cast<std::size_t>(feature) * c_count + c] : 0.0;
  const auto at = std::lower_bound(features.begin(), features.end(), feature,
                                   [](uint32_t held, int64_t f) { return static_cast<int64_t>(held) < f; });
  return at != features.end() && *at == feature ? weights[static_cast<std::size_t>(at - features.begin()) * c_count + c] : 0.0;
}

std::vector<double> Model::ColumnWeights(const Dataset& data) const {
  return ColumnWeights(data.columns, data.cols(), intercept);
}

std::vector<double> Model::ColumnWeights(const ColumnMap& columns, int64_t column_count, bool with_intercept) const {
  const auto c_count = static_cast<std::size_t>(classes);
  std::vector<double> w((static_cast<std::size_t>(column_count) + (with_intercept ? 1 : 0)) * c_count, 0.0);
  auto copy = [&](std::size_t from, int64_t column) {
    std::copy_n(weights.begin() + static_cast<std::ptrdiff_t>(from * c_count), c_count,
                w.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(column) * c_count));
  };
  std::size_t next = 0;  // both ascend: a merge of the columns' features with the model's
  for (int64_t column = 0; column < column_count; ++column) {
    const int64_t feature = columns.FeatureOf(column);
    if (features.empty()) {
      if (feature < cols) copy(static_cast<std::size_t>(feature), column);
      continue;
    }
    while (next < features.size() && features[next] < feature) ++next;
    if (next < features.size() && features[next] == feature) copy(next, column);
  }
  if (intercept && with_intercept) {
    std::copy(weights.end() - static_cast<std::ptrdiff_t>(c_count), weights.end(), w.end() - static_cast<std::ptrdiff_t>(c_count));
  }
  return w;
}

std::vector<double> Model::WeightsFor(int64_t data_cols) const {
  const auto c_count = static_cast<std::size_t>(classes);
  const int64_t cols_used = std::max(cols, data_cols);
  std::vector<double> padded((static_cast<std::size_t>(cols_used) + (intercept ? 1 : 0)) * c_count, 0.0);
  for (int64_t k = 0; k < held(); ++k) {
    const int64_t feature = features.empty() ? k : features[static_cast<std::size_t>(k)];
    std::copy_n(weights.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(k) * c_count), c_count,
                padded.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(feature) * c_count));
  }
  if (intercept) std::copy(weights.end() - static_cast<std::ptrdiff_t>(c_count), weights.end(), padded.end() - static_cast<std::ptrdiff_t>(c_count));
  return padded;
}

ProblemSpec Model::Spec(int64_t rows, int64_t data_cols) const {
  ProblemSpec spec;
  spec.loss = loss;
  spec.regularizer = regularizer;
  spec.intercept = intercept;
  spec.rows = rows;
  spec.cols = std::max(cols, data_cols);
  spec.classes = classes;
  spec.multinomial = multinomial;
  return spec;
}

Result<ModelFormat> ParseModelFormat(const std::string& name) {
  if (name == "json") return ModelFormat::kJson;
  if (name == "liblinear") return ModelFormat::kLiblinear;
  return InvalidArgument("unknown model format '" + name + "' (choose json or liblinear)");
}

std::string ModelToJson(const Model& model) {
  const auto c_count = static_cast<std::size_t>(model.classes);
  const bool multiclass = model.classes > 1;
  OrderedJson json = {{"format", "nimbus-model"},
                      {"version", multiclass ? 2 : 1},  // 2: C weights per feature
                      {"loss", LossName(model.loss)},
                      {"l1", model.regularizer.l1},
                      {"l2", model.regularizer.l2},
                      {"intercept", model.intercept},
                      {"cols", model.cols}};
  if (multiclass) {
    json["classes"] = model.classes;
    json["multinomial"] = model.multinomial;
  }
  const std::span<const double> weights(model.weights);
  if (model.intercept && !multiclass) json["bias"] = model.weights.back();
  if (model.intercept && multiclass) json["bias"] = std::vector<double>(weights.end() - c_count, weights.end());
  OrderedJson& labels = json["labels"] = {{"binary", model.labels.classification},
                                          {"negative", model.labels.negative},
                                          {"positive", model.labels.positive}};
  if (model.labels.multiclass()) labels["classes"] = model.labels.classes;
  // Sparse, 1-based like LIBSVM: an L1 model over millions of features stays small. A
  // multiclass model lists a feature whose weight is nonzero in some class, with all C.
  OrderedJson indices = OrderedJson::array(), values = OrderedJson::array();
  for (int64_t k = 0; k < model.held(); ++k) {
    const std::span<const double> row = weights.subspan(static_cast<std::size_t>(k) * c_count, c_count);
    if (std::all_of(row.begin(), row.end(), [](double w) { return w == 0.0; })) continue;
    indices.push_back((model.features.empty() ? k : model.features[static_cast<std::size_t>(k)]) + 1);
    if (multiclass) {
      values.push_back(std::vector<double>(row.begin(), row.end()));
    } else {
      values.push_back(row[0]);
    }
  }
  json["weights"] = {{"indices", std::move(indices)}, {"values", std::move(values)}};
  return JsonText(json) + "\n";
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
  // liblinear keeps one weight vector for two classes, one per class for more. A two-class
  // softmax model is one as well: p(+1) = sigmoid(m_1 - m_0), so w = w_1 - w_0.
  const auto c_count = static_cast<std::size_t>(model.classes);
  const bool difference = model.classes == 2;
  const std::size_t columns = difference ? 1 : c_count;
  out += "nr_class " + std::to_string(model.labels.classification ? std::max<std::size_t>(columns, 2) : 2) + "\n";
  if (model.labels.classification) {
    std::vector<double> labels = model.labels.ClassValues();
    if (!model.labels.multiclass()) labels = {model.labels.positive, model.labels.negative};  // label[0] where w.x > 0
    std::string line = "label";
    for (double label : labels) {
      if (label != std::round(label) || std::abs(label) > 2e9) {
        return InvalidArgument("liblinear model files hold integer labels; label " + FormatLabel(label) + " is not one");
      }
      line += " " + FormatLabel(label);
    }
    out += line + "\n";
  }
  out += "nr_feature " + std::to_string(model.cols) + "\n";
  out += model.intercept ? "bias 1\n" : "bias -1\n";
  out += "w\n";
  char text[40];
  auto emit_row = [&](const double* row) {
    for (std::size_t c = 0; c < columns; ++c) {
      std::snprintf(text, sizeof text, "%.17g ", difference ? row[1] - row[0] : row[c]);
      out += text;
    }
    out += "\n";
  };
  // Every feature, the ones the model does not hold as 0 (the held ones ascend: a merge).
  const std::vector<double> zero(c_count, 0.0);
  std::size_t next = 0;
  for (int64_t j = 0; j < model.cols; ++j) {
    const double* row = zero.data();
    if (model.features.empty()) {
      row = model.weights.data() + static_cast<std::size_t>(j) * c_count;
    } else if (next < model.features.size() && model.features[next] == j) {
      row = model.weights.data() + (next++) * c_count;
    }
    emit_row(row);
    if (out.size() >= (1 << 20)) {
      NIMBUS_RETURN_IF_ERROR(emit(out));
      out.clear();
    }
  }
  if (model.intercept) emit_row(model.weights.data() + model.weights.size() - c_count);
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
