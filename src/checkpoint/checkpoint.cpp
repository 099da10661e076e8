#include "nimbus/checkpoint/checkpoint.h"

#include <xxhash.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "nimbus/core/json_integer.h"

namespace nimbus {
namespace {

using Json = nlohmann::json;

constexpr char kMagic[8] = {'N', 'I', 'M', 'B', 'U', 'S', 'C', 'P'};
constexpr uint32_t kVersion = 1;
constexpr std::size_t kPreamble = 24;  // magic, version, zero, metadata length
constexpr std::size_t kTrailer = 8;    // the checksum

std::string_view BytesOf(const SharedVector& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double)};
}

Json Metadata(const Checkpoint& checkpoint) {
  const MasterState& s = checkpoint.state;
  Json workers = Json::array();
  for (const MasterState::Worker& w : s.workers) {
    workers.push_back(
        {{"rows", w.rows}, {"nnz", w.nnz}, {"w_last", w.w_last.size()}, {"w_previous", w.w_previous.size()}});
  }
  return Json{{"algorithm", NameOf(s.algorithm)},
              {"radius", s.radius},
              {"iterations", s.iterations},
              {"gradient_reference", s.gradient_reference},
              {"next_round", s.next_round},
              {"rho", s.rho},
              {"rho_of_previous_round", s.rho_of_previous_round},
              {"dual_residual", s.dual_residual},
              {"inner_tolerance", s.inner_tolerance},
              {"inner_relative", s.inner_relative},
              {"lean", s.lean},
              {"previous_round_lean", s.previous_round_lean},
              {"rho_last", s.rho_last},
              {"rho_previous", s.rho_previous},
              {"alpha", s.alpha},
              {"initial_rho", s.initial_rho},
              {"rho_updates", s.rho_updates},
              {"lean_rounds", s.lean_rounds},
              {"solve_seconds", s.solve_seconds},
              {"objective", s.objective},
              {"curvature_scale", s.curvature_scale},
              {"damping", s.damping},
              {"model_size", s.z.size()},
              {"margins_size", s.margins.size()},
              {"margin_step_size", s.margin_step.size()},
              {"workers", workers},
              {"arguments", checkpoint.arguments},
              {"working_directory", checkpoint.working_directory}};
}

// Writes the pieces of a checkpoint in order, checksumming as they go.
class Sink {
 public:
  explicit Sink(BlobWriter& writer) : writer_(writer), state_(XXH3_createState()) { XXH3_64bits_reset(state_); }
  ~Sink() { XXH3_freeState(state_); }
  Status Write(std::string_view bytes) {
    XXH3_64bits_update(state_, bytes.data(), bytes.size());
    return writer_.Write(bytes);
  }
  Status Finish() {
    const uint64_t checksum = XXH3_64bits_digest(state_);
    return writer_.Write(std::string_view(reinterpret_cast<const char*>(&checksum), sizeof checksum));
  }

 private:
  BlobWriter& writer_;
  XXH3_state_t* state_;
};

Status WriteTo(BlobWriter& writer, const Checkpoint& checkpoint) {
  const std::string metadata = Metadata(checkpoint).dump();
  std::string preamble(kPreamble, '\0');
  std::memcpy(preamble.data(), kMagic, sizeof kMagic);
  std::memcpy(preamble.data() + 8, &kVersion, sizeof kVersion);
  const uint64_t length = metadata.size();
  std::memcpy(preamble.data() + 16, &length, sizeof length);
  Sink sink(writer);
  NIMBUS_RETURN_IF_ERROR(sink.Write(preamble));
  NIMBUS_RETURN_IF_ERROR(sink.Write(metadata));
  NIMBUS_RETURN_IF_ERROR(sink.Write(BytesOf(checkpoint.state.z)));
  NIMBUS_RETURN_IF_ERROR(sink.Write(BytesOf(checkpoint.state.z_last)));
  NIMBUS_RETURN_IF_ERROR(sink.Write(BytesOf(checkpoint.state.margins)));
  NIMBUS_RETURN_IF_ERROR(sink.Write(BytesOf(checkpoint.state.margin_step)));
  for (const MasterState::Worker& w : checkpoint.state.workers) {
    NIMBUS_RETURN_IF_ERROR(sink.Write(BytesOf(w.w_last)));
    NIMBUS_RETURN_IF_ERROR(sink.Write(BytesOf(w.w_previous)));
  }
  return sink.Finish();
}

class StringWriter final : public BlobWriter {
 public:
  explicit StringWriter(std::string* out) : out_(out) {}
  Status Write(std::string_view bytes) override {
    out_->append(bytes);
    return Status::Ok();
  }
  Status Commit() override { return Status::Ok(); }

 private:
  std::string* out_;
};

}  // namespace

std::string EncodeCheckpoint(const Checkpoint& checkpoint) {
  std::string bytes;
  StringWriter writer(&bytes);
  (void)WriteTo(writer, checkpoint);
  return bytes;
}

Status WriteCheckpoint(Store& store, const Checkpoint& checkpoint) {
  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<BlobWriter> writer, store.OpenWriter(kCheckpointKey));
  NIMBUS_RETURN_IF_ERROR(WriteTo(*writer, checkpoint).WithContext("cannot write " + store.Describe(kCheckpointKey)));
  return writer->Commit().WithContext("cannot write " + store.Describe(kCheckpointKey));
}

Result<Checkpoint> ReadCheckpoint(Store& store) {
  NIMBUS_ASSIGN_OR_RETURN(std::shared_ptr<const Blob> blob, store.Get(kCheckpointKey));
  return DecodeCheckpoint(blob->text(), store.Describe(kCheckpointKey));
}

namespace {

// A checkpoint's two parts between its preamble and its checksum.
struct Parts {
  std::string_view metadata, vectors;
};

// The parts, once the header, the checksum and the metadata's length check out.
Result<Parts> PartsOf(std::string_view bytes) {
  if (bytes.size() < kPreamble + kTrailer || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    return DataLoss("no checkpoint header");
  }
  uint32_t version = 0;
  std::memcpy(&version, bytes.data() + 8, sizeof version);
  if (version != kVersion) {
    return DataLoss("format version " + std::to_string(version) + ", this build reads " + std::to_string(kVersion));
  }
  uint64_t stored_checksum = 0;
  std::memcpy(&stored_checksum, bytes.data() + bytes.size() - kTrailer, kTrailer);
  if (XXH3_64bits(bytes.data(), bytes.size() - kTrailer) != stored_checksum) {
    return DataLoss("checksum mismatch (cut short or damaged)");
  }
  uint64_t length = 0;
  std::memcpy(&length, bytes.data() + 16, sizeof length);
  if (length > bytes.size() - kPreamble - kTrailer) return DataLoss("metadata longer than the file");
  return Parts{bytes.substr(kPreamble, length),
               bytes.substr(kPreamble + length, bytes.size() - kPreamble - length - kTrailer)};
}

// The run's algorithm: written by every build since Newton's checkpoints; absent, the run was
// ADMM's. Throws as Json::value does.
Result<Algorithm> AlgorithmOf(const Json& json) {
  const std::string name = json.value("algorithm", std::string("admm"));
  Result<Algorithm> algorithm = ParseChoice<Algorithm>(name);
  if (!algorithm.ok() || *algorithm == Algorithm::kAuto) return DataLoss("unknown algorithm '" + name + "'");
  return algorithm;
}

// The master's scalars; throws as Json::at and JsonInteger do.
void ReadScalars(const Json& json, MasterState* state) {
  MasterState& s = *state;
  s.radius = json.value("radius", 0.0);
  s.iterations = json.contains("iterations") ? JsonInteger<int64_t>(json.at("iterations")) : 0;
  s.gradient_reference = json.value("gradient_reference", 0.0);
  s.next_round = JsonInteger<int64_t>(json.at("next_round"));
  s.rho = json.at("rho").get<double>();
  s.rho_of_previous_round = json.at("rho_of_previous_round").get<double>();
  s.dual_residual = json.at("dual_residual").get<double>();
  s.inner_tolerance = json.at("inner_tolerance").get<double>();
  s.inner_relative = json.at("inner_relative").get<double>();
  s.lean = json.at("lean").get<bool>();
  s.previous_round_lean = json.at("previous_round_lean").get<bool>();
  s.rho_last = json.at("rho_last").get<double>();
  s.rho_previous = json.at("rho_previous").get<double>();
  s.alpha = json.at("alpha").get<double>();
  s.initial_rho = json.at("initial_rho").get<double>();
  s.rho_updates = JsonInteger<int>(json.at("rho_updates"));
  s.lean_rounds = JsonInteger<int>(json.at("lean_rounds"));
  s.solve_seconds = json.at("solve_seconds").get<double>();
  s.objective = json.at("objective").get<double>();
  s.curvature_scale = json.value("curvature_scale", 1.0);  // written since the column method's checkpoints
  s.damping = json.value("damping", 0.0);
}

// Everything but the vectors into `checkpoint`; the vectors' lengths, in the order they follow.
Result<std::vector<std::size_t>> ReadMetadata(std::string_view metadata, Checkpoint* checkpoint) {
  MasterState& s = checkpoint->state;
  std::vector<std::size_t> lengths;
  try {
    const Json json = Json::parse(metadata);
    NIMBUS_ASSIGN_OR_RETURN(s.algorithm, AlgorithmOf(json));
    ReadScalars(json, &s);
    const auto model_size = JsonInteger<std::size_t>(json.at("model_size"));
    // The column method's margins, written since its checkpoints carried them.
    const auto size_of = [&](const char* key) { return json.contains(key) ? JsonInteger<std::size_t>(json.at(key)) : 0; };
    lengths = {model_size, model_size, size_of("margins_size"), size_of("margin_step_size")};
    for (const Json& w : json.at("workers")) {
      s.workers.push_back({JsonInteger<int64_t>(w.at("rows")), JsonInteger<int64_t>(w.at("nnz")), {}, {}});
      lengths.push_back(JsonInteger<std::size_t>(w.at("w_last")));
      lengths.push_back(JsonInteger<std::size_t>(w.at("w_previous")));
    }
    checkpoint->arguments = json.at("arguments").get<std::vector<std::string>>();
    checkpoint->working_directory = json.at("working_directory").get<std::string>();
  } catch (const Json::exception& error) {  // parse errors, missing fields, wrong types, numbers out of range
    return DataLoss(std::string("bad metadata: ") + error.what());
  }
  return lengths;
}

// What resuming needs of the scalars, by algorithm.
Status CheckScalars(const MasterState& s) {
  if (s.algorithm == Algorithm::kNewton) {
    if (s.next_round < 1 || s.iterations < 1 || !(s.radius >= 0) || !(s.gradient_reference > 0)) {
      return DataLoss("a Newton state needs a round, a step, a radius >= 0 and a positive gradient reference");
    }
  } else if (s.algorithm == Algorithm::kColumns) {
    if (s.next_round < 1 || s.iterations < 1 || !(s.gradient_reference > 0) || !(s.curvature_scale >= 1) ||
        !(s.damping >= 0) || !s.workers.empty()) {
      return DataLoss("a column method's state needs a round, an iteration, a positive gradient reference, a curvature "
                      "scale >= 1, a damping >= 0 and no workers");
    }
  } else if (s.next_round < 2) {
    return DataLoss("next_round " + std::to_string(s.next_round) + " (must be >= 2)");
  } else if (!(s.rho > 0) || !(s.rho_last > 0) || !(s.rho_previous >= 0) || !(s.alpha > 0)) {
    return DataLoss("rho and alpha must be positive");
  }
  return Status::Ok();
}

// The vectors: their lengths must account for every byte between the metadata and the end.
Status ReadVectors(std::string_view vectors, const std::vector<std::size_t>& lengths, MasterState* state) {
  MasterState& s = *state;
  std::size_t remaining = vectors.size() / sizeof(double);
  for (const std::size_t n : lengths) {
    if (n > remaining) return DataLoss("vectors longer than the file");
    remaining -= n;
  }
  if (remaining != 0 || vectors.size() % sizeof(double) != 0) return DataLoss("bytes beyond the vectors");
  std::size_t offset = 0;
  auto take = [&](std::size_t n) {
    std::vector<double> v(n);
    if (n > 0) std::memcpy(v.data(), vectors.data() + offset, n * sizeof(double));
    offset += n * sizeof(double);
    return SharedVector(std::move(v));
  };
  s.z = take(lengths[0]);
  s.z_last = take(lengths[1]);
  s.margins = take(lengths[2]);
  s.margin_step = take(lengths[3]);
  for (std::size_t i = 0; i < s.workers.size(); ++i) {
    s.workers[i].w_last = take(lengths[4 + 2 * i]);
    s.workers[i].w_previous = take(lengths[5 + 2 * i]);
  }
  return Status::Ok();
}

}  // namespace

Result<Checkpoint> DecodeCheckpoint(std::string_view bytes, const std::string& where) {
  // Each step's error says only what is wrong; this prefix names the checkpoint.
  const std::string not_usable = where + ": not a usable checkpoint";
  const Result<Parts> parts = PartsOf(bytes);
  if (!parts.ok()) return parts.status().WithContext(not_usable);
  Checkpoint checkpoint;
  const Result<std::vector<std::size_t>> lengths = ReadMetadata(parts->metadata, &checkpoint);
  if (!lengths.ok()) return lengths.status().WithContext(not_usable);
  if (Status valid = CheckScalars(checkpoint.state); !valid.ok()) return valid.WithContext(not_usable);
  if (Status read = ReadVectors(parts->vectors, *lengths, &checkpoint.state); !read.ok()) {
    return read.WithContext(not_usable);
  }
  return checkpoint;
}

}  // namespace nimbus
