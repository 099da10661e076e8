#include "nimbus/wire/codec.h"

#include <bit>
#include <cstdint>
#include <cmath>
#include <cassert>
#include <cstring>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace nimbus {
namespace {

static_assert(std::endian::native == std::endian::little, "the wire format is little-endian");

struct Header {
  uint32_t magic;
  uint16_t version;
  uint16_t type;
  uint64_t run_id;
  uint32_t worker;
  uint32_t frame_count;
  uint64_t invocation;
  int64_t round;
  uint64_t frame_bytes[kMaxPayloadFrames];
};
static_assert(sizeof(Header) == kWireHeaderBytes);

// Fixed-layout field blocks: 8-byte members only, so there is no padding to leak or misread.
struct HelloFields {
  double process_start_wall;
  double send_wall;
  int64_t pid;
  int64_t memory_limit_bytes;
};
struct AssignFields {
  uint64_t shard_checksum;
  double l1, l2;
  int64_t intercept, rows, cols, local_solver, general_form;
  double heartbeat_seconds, master_timeout_seconds;
  int64_t classes, multinomial, class_weights;
  int64_t copies, copy_scales, folds;
};
struct ReadyFields {
  int64_t worker, rows, cols, nnz;
  double curvature_trace, load_seconds, invoke_wall, process_start_wall, hello_wall, ready_wall;
  uint64_t invocation;
};
struct RoundFields {
  int64_t round;
  double rho, relaxation, inner_tolerance, inner_relative_tolerance;
  int64_t resume;  // 0: none, 1: u only, 2: u, x and x_relaxed, 3: the Newton point, 4: a score's query
  double rho_of_u;
  int64_t z_entry_bytes;  // VectorFrame's: 8 doubles, 4 float32 (lean); -8, -4 the same, sparse
  int64_t kind;           // RoundKind
  int64_t point_round;
  int64_t on_support;
};
struct ReplyFields {
  int64_t status;
  int64_t scalars_valid;
  double primal_squared, x_squared, u_squared, loss_at_z;
  double compute_seconds, solve_seconds;
  int64_t local_iterations, cg_iterations, data_passes;
  double start_wall, end_wall, receive_wall, send_wall;
  uint64_t invocation;
  int64_t round;
  int64_t w_entry_bytes;  // VectorFrame's: 8 doubles, 4 float32 (lean); -8, -4 the same, sparse
  int64_t w_vectors;      // w holds this many model-sized vectors (2: a gradient and a diagonal; 0: any length)
};
struct HeartbeatFields {
  double send_wall;
  int64_t link_reconnects;
  uint64_t text_read;
};
struct ScannedFields {
  int64_t rows, nnz;
  uint64_t max_index;
  int64_t labels, all_ones, all_floats;
  uint64_t bytes_read;
  double seconds;
  int64_t features;
};

template <typename Fields>
Frame FieldsFrame(const Fields& fields) {
  static_assert(std::is_trivially_copyable_v<Fields> && sizeof(Fields) % 8 == 0);
  return Frame::Copy(&fields, sizeof fields);
}

Status BadBody(MessageType type, const std::string& why) {
  return InvalidArgument(std::string(MessageTypeName(type)) + " message: " + why);
}

// Checks the type and the number of payload frames.
Status CheckShape(const WireMessage& message, MessageType type, std::size_t min_frames, std::size_t max_frames) {
  if (message.envelope.type != type) {
    return BadBody(type, std::string("got a ") + MessageTypeName(message.envelope.type) + " message");
  }
  const std::size_t frames = message.payload.size();
  if (frames < min_frames || frames > max_frames) {
    return BadBody(type, std::to_string(frames) + " payload frames");
  }
  return Status::Ok();
}

template <typename Fields>
Result<Fields> ReadFields(const WireMessage& message, MessageType type, std::size_t index) {
  const Frame& frame = message.payload[index];
  if (frame.size() != sizeof(Fields)) {
    return BadBody(type, "field frame of " + std::to_string(frame.size()) + " bytes, expected " +
                             std::to_string(sizeof(Fields)));
  }
  Fields fields;
  std::memcpy(&fields, frame.data(), sizeof fields);
  return fields;
}

// Whether the frame holds exactly `count` items of `item_bytes` each. (Compared by division: a
// count from a message's fields times the item's size can wrap around to the frame's size.)
bool HoldsExactly(const Frame& frame, uint64_t count, std::size_t item_bytes) {
  return frame.size() % item_bytes == 0 && frame.size() / item_bytes == count;
}

// The frame's doubles in place when they are aligned (as ZeroMQ's buffers are), else a copy.
Result<SharedVector> ViewDoubles(const Frame& frame, std::size_t count, MessageType type, const char* what) {
  if (!HoldsExactly(frame, count, sizeof(double))) {
    return BadBody(type, std::string(what) + " has " + std::to_string(frame.size()) + " bytes, expected " +
                             std::to_string(count * sizeof(double)));
  }
  if (reinterpret_cast<std::uintptr_t>(frame.data()) % alignof(double) == 0) {
    return SharedVector::View(frame.owner(), reinterpret_cast<const double*>(frame.data()), count);
  }
  std::vector<double> values(count);
  if (count > 0) std::memcpy(values.data(), frame.data(), frame.size());
  return SharedVector(std::move(values));
}

// Whether a vector's value fits float32's range (else it goes as doubles, lean or not).
bool FitsFloat(double value) { return !std::isinf(static_cast<float>(value)) || std::isinf(value); }

// A value as it arrives: rounded to float32 when the vector goes so.
double Arriving(double value, std::size_t value_bytes) {
  return value_bytes == sizeof(float) ? static_cast<double>(static_cast<float>(value)) : value;
}
// Whether it arrives other than +0.0 (the one value a sparse frame leaves out).
bool Kept(double arriving) { return arriving != 0 || std::signbit(arriving); }

// A sparse vector frame: the count of its nonzero entries (8 bytes), their positions (uint32,
// ascending), then their values (doubles, or float32 when lean). Active-set Newton's products
// and points are nonzero on the working set alone: a few percent of a worker's support on text.
Frame SparseFrame(const SharedVector& values, std::size_t nonzeros, std::size_t value_bytes) {
  std::string bytes(sizeof(uint64_t) + nonzeros * (sizeof(uint32_t) + value_bytes), '\0');
  const uint64_t count = nonzeros;
  std::memcpy(bytes.data(), &count, sizeof count);
  char* position = bytes.data() + sizeof count;
  char* value = position + nonzeros * sizeof(uint32_t);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!Kept(Arriving(values[i], value_bytes))) continue;
    const auto at = static_cast<uint32_t>(i);
    std::memcpy(position, &at, sizeof at);
    position += sizeof at;
    if (value_bytes == sizeof(float)) {
      const auto rounded = static_cast<float>(values[i]);
      std::memcpy(value, &rounded, sizeof rounded);
    } else {
      const double exact = values[i];
      std::memcpy(value, &exact, sizeof exact);
    }
    value += value_bytes;
  }
  return Frame::Adopt(std::move(bytes));
}

// How VectorFrame sends a vector, and the frame's bytes.
struct VectorEncoding {
  std::size_t value_bytes = sizeof(double);
  std::size_t nonzeros = 0;
  bool sparse = false;
  std::size_t bytes = 0;  // of the frame
};

VectorEncoding EncodingOf(const SharedVector& values, bool lean, bool may_be_sparse) {
  VectorEncoding e;
  bool fits_float = lean;
  for (std::size_t i = 0; i < values.size() && fits_float; ++i) fits_float = FitsFloat(values[i]);
  e.value_bytes = fits_float ? sizeof(float) : sizeof(double);
  // Counted as they arrive: a double below float32's range arrives as zero.
  for (std::size_t i = 0; i < values.size(); ++i) e.nonzeros += Kept(Arriving(values[i], e.value_bytes));
  const std::size_t sparse_bytes = sizeof(uint64_t) + e.nonzeros * (sizeof(uint32_t) + e.value_bytes);
  e.sparse = may_be_sparse && 4 * sparse_bytes < 3 * values.size() * e.value_bytes && values.size() <= UINT32_MAX;
  e.bytes = e.sparse ? sparse_bytes : values.size() * e.value_bytes;
  return e;
}

// A model-sized vector as a frame: doubles as they lie, or rounded to float32 (lean
// messages: half the bytes, each entry within a relative 2^-24 of its value); and where its
// nonzero entries' positions and values take under 3/4 of that, those alone (SparseFrame).
// Every entry comes back as it went, or as its float32 (+0.0 is the only entry left out). A
// vector with an entry beyond float32's range goes as doubles. *entry_bytes says which it
// became (RoundFields). Without `may_be_sparse`, dense only (a score's figures, whose count
// the frame's size gives).
Frame VectorFrame(const SharedVector& values, bool lean, int64_t* entry_bytes, bool may_be_sparse = true) {
  const VectorEncoding e = EncodingOf(values, lean, may_be_sparse);
  *entry_bytes = static_cast<int64_t>(e.value_bytes);
  if (e.sparse) {
    *entry_bytes = -*entry_bytes;
    return SparseFrame(values, e.nonzeros, e.value_bytes);
  }
  if (e.value_bytes == sizeof(double)) return Frame::Share(values);
  std::string bytes(values.size() * sizeof(float), '\0');
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto value = static_cast<float>(values[i]);
    std::memcpy(bytes.data() + i * sizeof(float), &value, sizeof(float));
  }
  return Frame::Adopt(std::move(bytes));
}

}  // namespace

std::size_t VectorFrameBytes(const SharedVector& values, bool lean) { return EncodingOf(values, lean, true).bytes; }

namespace {

// A SparseFrame read back as `count` doubles: positions ascending and below count.
Result<SharedVector> ReadSparseVector(const Frame& frame, std::size_t count, std::size_t value_bytes, MessageType type,
                                      const char* what) {
  uint64_t nonzeros = 0;
  const std::size_t entry_bytes = sizeof(uint32_t) + value_bytes;
  if (frame.size() < sizeof nonzeros) return BadBody(type, std::string(what) + ": a sparse vector without its count");
  std::memcpy(&nonzeros, frame.data(), sizeof nonzeros);
  const std::size_t body = frame.size() - sizeof nonzeros;
  if (body % entry_bytes != 0 || body / entry_bytes != nonzeros || nonzeros > count) {
    return BadBody(type, std::string(what) + ": a sparse vector of " + std::to_string(nonzeros) + " entries in " +
                             std::to_string(frame.size()) + " bytes, of a vector of " + std::to_string(count));
  }
  std::vector<double> values(count, 0.0);
  const std::byte* positions = frame.data() + sizeof nonzeros;
  const std::byte* stored = positions + nonzeros * sizeof(uint32_t);
  int64_t last = -1;
  for (uint64_t k = 0; k < nonzeros; ++k) {
    uint32_t at = 0;
    std::memcpy(&at, positions + k * sizeof at, sizeof at);
    if (static_cast<int64_t>(at) <= last || at >= count) {
      return BadBody(type, std::string(what) + ": sparse positions not ascending below " + std::to_string(count));
    }
    last = at;
    if (value_bytes == sizeof(float)) {
      float value = 0;
      std::memcpy(&value, stored + k * sizeof value, sizeof value);
      values[at] = value;
    } else {
      std::memcpy(&values[at], stored + k * sizeof(double), sizeof(double));
    }
  }
  return SharedVector(std::move(values));
}

// A VectorFrame read back as `count` doubles.
Result<SharedVector> ReadVector(const Frame& frame, std::size_t count, int64_t entry_bytes, MessageType type,
                                const char* what) {
  if (entry_bytes == -static_cast<int64_t>(sizeof(double)) || entry_bytes == -static_cast<int64_t>(sizeof(float))) {
    return ReadSparseVector(frame, count, static_cast<std::size_t>(-entry_bytes), type, what);
  }
  if (entry_bytes == sizeof(double)) return ViewDoubles(frame, count, type, what);
  if (entry_bytes != sizeof(float)) {
    return BadBody(type, std::string(what) + " has entries of " + std::to_string(entry_bytes) + " bytes (4 or 8)");
  }
  if (!HoldsExactly(frame, count, sizeof(float))) {
    return BadBody(type, std::string(what) + " has " + std::to_string(frame.size()) + " bytes, expected " +
                             std::to_string(count * sizeof(float)) + " (float32)");
  }
  std::vector<double> values(count);
  float value = 0;
  for (std::size_t i = 0; i < count; ++i) {
    std::memcpy(&value, frame.data() + i * sizeof(float), sizeof(float));
    values[i] = value;
  }
  return SharedVector(std::move(values));
}

Result<std::vector<double>> ReadDoubles(const Frame& frame, std::size_t count, MessageType type, const char* what) {
  if (!HoldsExactly(frame, count, sizeof(double))) {
    return BadBody(type, std::string(what) + " has " + std::to_string(frame.size()) + " bytes, expected " +
                             std::to_string(count * sizeof(double)));
  }
  std::vector<double> values(count);
  if (count > 0) std::memcpy(values.data(), frame.data(), frame.size());
  return values;
}

// A TextPart as JSON (its plan's features travel in a frame of their own):
//   {"files": [[store_uri, key, bytes, compression], ...], "pieces": [[file, begin, end], ...],
//    "classification": true, "renumber": true,
//    "plan": {"classification": true, "classes": [...], "source_cols": N, "first_row": R, "rows": r,
//             "nnz": n, "renumbered": true, "weights": [store_uri, key, bytes], "weights_offset": B,
//             "folds": [K, seed, [class rows...], [class offsets...]] (cross-validation only)}}
std::string TextPartJson(const TextPart& part) {
  nlohmann::json json;
  json["files"] = nlohmann::json::array();
  for (const TextFileRef& f : part.files) json["files"].push_back({f.store_uri, f.key, f.bytes, f.compression});
  json["pieces"] = nlohmann::json::array();
  for (const TextPieceRef& p : part.pieces) json["pieces"].push_back({p.file, p.begin, p.end});
  json["classification"] = part.classification;
  json["renumber"] = part.renumber;
  if (part.plan) {
    const TextPlanned& plan = *part.plan;
    json["plan"] = {{"classification", plan.classification}, {"classes", plan.class_values},
                    {"source_cols", plan.source_cols},       {"first_row", plan.first_row},
                    {"rows", plan.rows},                     {"nnz", plan.nnz},
                    {"renumbered", plan.features != nullptr},
                    {"weights", {plan.weights.store_uri, plan.weights.key, plan.weights.bytes}},
                    {"weights_offset", plan.weights_offset}};
    if (plan.folds.folds > 0) {
      json["plan"]["folds"] = {plan.folds.folds, plan.folds.seed, plan.folds.class_rows, plan.folds.class_offsets};
    }
  }
  return json.dump();
}

// [K, seed, [class rows...], [class offsets...]], checked: a worker deals its rows' folds by it.
Result<FoldPlan> ParseFoldPlan(const nlohmann::json& json) {
  const auto counts = [](const nlohmann::json& list, std::vector<int64_t>* out) {
    if (!list.is_array()) return false;
    for (const nlohmann::json& n : list) {
      if (!n.is_number_unsigned()) return false;
      out->push_back(n.get<int64_t>());
    }
    return true;
  };
  FoldPlan plan;
  if (!json.is_array() || json.size() != 4 || !json[0].is_number_unsigned() || !json[1].is_number_unsigned() ||
      !counts(json[2], &plan.class_rows) || !counts(json[3], &plan.class_offsets)) {
    return BadBody(MessageType::kAssign, "the text part: malformed folds");
  }
  plan.folds = json[0].get<int64_t>();
  plan.seed = json[1].get<uint64_t>();
  if (plan.folds < 2 || plan.folds > 255 || plan.class_rows.empty() || plan.class_offsets.size() != plan.class_rows.size()) {
    return BadBody(MessageType::kAssign, "the text part: folds of " + std::to_string(plan.folds) + " over " +
                                             std::to_string(plan.class_rows.size()) + " classes");
  }
  for (std::size_t c = 0; c < plan.class_rows.size(); ++c) {
    if (plan.class_offsets[c] > plan.class_rows[c]) return BadBody(MessageType::kAssign, "the text part: a class offset past its rows");
  }
  return plan;
}

// A relay's group as one line of JSON (the ASSIGN's text frame has one per field):
//   {"shards": [[key, checksum, rows, nnz, memory], ...], "threads": false, "fanout": F, "listen": "tcp://...",
//    "launch": "...", "hosts": [...], "advertise_host": "..."}
std::string RelayGroupJson(const RelayGroup& group) {
  nlohmann::json json;
  json["shards"] = nlohmann::json::array();
  for (const RelayedShard& shard : group.shards) {
    json["shards"].push_back({shard.key, shard.checksum, shard.rows, shard.nnz, shard.memory_estimate_bytes});
  }
  json["threads"] = group.threads;
  json["fanout"] = group.fanout;
  json["listen"] = group.listen;
  json["launch"] = group.launch;
  json["hosts"] = group.hosts;
  json["advertise_host"] = group.advertise_host;
  return json.dump();
}

// Every field checked for its type: the text comes off the wire.
Result<RelayGroup> ParseRelayGroup(std::string_view text) {
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const auto bad = [](const std::string& why) { return BadBody(MessageType::kAssign, "the relay group: " + why); };
  if (!json.is_object() || !json.contains("shards") || !json["shards"].is_array() || !json.contains("threads") ||
      !json["threads"].is_boolean() || !json.contains("fanout") || !json["fanout"].is_number_unsigned() ||
      !json.contains("listen") || !json["listen"].is_string() || !json.contains("launch") ||
      !json["launch"].is_string() || !json.contains("hosts") || !json["hosts"].is_array() ||
      !json.contains("advertise_host") || !json["advertise_host"].is_string()) {
    return bad("not {shards, threads, fanout, listen, launch, hosts, advertise_host}");
  }
  RelayGroup group;
  for (const nlohmann::json& s : json["shards"]) {
    if (!s.is_array() || s.size() != 5 || !s[0].is_string() || !s[1].is_number_unsigned()) {
      return bad("a shard is not [key, checksum, rows, nnz, memory]");
    }
    for (std::size_t i = 2; i < 5; ++i) {
      if (!s[i].is_number_unsigned()) return bad("a shard's rows, nonzeros or memory is not a count");
    }
    group.shards.push_back({s[0].get<std::string>(), s[1].get<uint64_t>(), s[2].get<int64_t>(), s[3].get<int64_t>(),
                            s[4].get<int64_t>()});
  }
  if (group.shards.empty()) return bad("no shards");
  group.threads = json["threads"].get<bool>();
  group.fanout = json["fanout"].get<int64_t>();
  group.listen = json["listen"].get<std::string>();
  group.launch = json["launch"].get<std::string>();
  for (const nlohmann::json& host : json["hosts"]) {
    if (!host.is_string()) return bad("a host is not a string");
    group.hosts.push_back(host.get<std::string>());
  }
  if (!group.hosts.empty() && group.hosts.size() != group.shards.size()) return bad("not one host a shard");
  group.advertise_host = json["advertise_host"].get<std::string>();
  return group;
}

// Every field checked for its type: the text comes off the wire.
Result<TextPart> ParseTextPart(std::string_view text) {
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const auto bad = [](const std::string& why) { return BadBody(MessageType::kAssign, "the text part: " + why); };
  if (!json.is_object()) return bad("not a JSON object");
  const auto unsigned_at = [](const nlohmann::json& a, std::size_t i) {
    return a.is_array() && i < a.size() && a[i].is_number_unsigned();
  };
  TextPart part;
  if (!json.contains("files") || !json["files"].is_array() || !json.contains("pieces") || !json["pieces"].is_array()) {
    return bad("no files or pieces");
  }
  for (const nlohmann::json& f : json["files"]) {
    if (!f.is_array() || f.size() != 4 || !f[0].is_string() || !f[1].is_string() || !unsigned_at(f, 2) ||
        !unsigned_at(f, 3)) {
      return bad("a file is not [store, key, bytes, compression]");
    }
    part.files.push_back({f[0].get<std::string>(), f[1].get<std::string>(), f[2].get<uint64_t>(), f[3].get<int64_t>()});
  }
  for (const nlohmann::json& p : json["pieces"]) {
    if (!p.is_array() || p.size() != 3 || !unsigned_at(p, 0) || !unsigned_at(p, 1) || !unsigned_at(p, 2)) {
      return bad("a piece is not [file, begin, end]");
    }
    const uint64_t file = p[0].get<uint64_t>(), begin = p[1].get<uint64_t>(), end = p[2].get<uint64_t>();
    if (file >= part.files.size() || begin > end || end > part.files[file].bytes) return bad("a piece outside its file");
    part.pieces.push_back({static_cast<uint32_t>(file), begin, end});
  }
  const auto flag = [&](const nlohmann::json& in, const char* name, bool* out) {
    if (!in.contains(name) || !in[name].is_boolean()) return false;
    *out = in[name].get<bool>();
    return true;
  };
  if (!flag(json, "classification", &part.classification) || !flag(json, "renumber", &part.renumber)) {
    return bad("no classification or renumber flag");
  }
  if (!json.contains("plan")) return part;
  const nlohmann::json& p = json["plan"];
  TextPlanned plan;
  bool renumbered = false;
  const auto number = [&](const char* name, int64_t* out) {
    if (!p.contains(name) || !p[name].is_number_integer() || p[name].get<int64_t>() < 0) return false;
    *out = p[name].get<int64_t>();
    return true;
  };
  if (!p.is_object() || !flag(p, "classification", &plan.classification) || !flag(p, "renumbered", &renumbered) ||
      !number("source_cols", &plan.source_cols) || !number("first_row", &plan.first_row) || !number("rows", &plan.rows) ||
      !number("nnz", &plan.nnz) || !p.contains("classes") || !p["classes"].is_array() || !p.contains("weights") ||
      !p["weights"].is_array() || p["weights"].size() != 3 || !p["weights"][0].is_string() ||
      !p["weights"][1].is_string() || !unsigned_at(p["weights"], 2) || !p.contains("weights_offset") ||
      !p["weights_offset"].is_number_unsigned()) {
    return bad("a malformed plan");
  }
  for (const nlohmann::json& value : p["classes"]) {
    if (!value.is_number()) return bad("a class value is not a number");
    plan.class_values.push_back(value.get<double>());
  }
  plan.weights = {p["weights"][0].get<std::string>(), p["weights"][1].get<std::string>(),
                  p["weights"][2].get<uint64_t>(), 0};
  plan.weights_offset = p["weights_offset"].get<uint64_t>();
  if (p.contains("folds")) {
    NIMBUS_ASSIGN_OR_RETURN(plan.folds, ParseFoldPlan(p["folds"]));
  }
  // The features arrive in their own frame; an empty list stands for "renumbered to none".
  if (renumbered) plan.features = std::make_shared<const std::vector<uint32_t>>();
  part.plan = std::move(plan);
  return part;
}

WireMessage Make(const Envelope& envelope, MessageType type, std::vector<Frame> payload) {
  assert(payload.size() <= kMaxPayloadFrames);  // the header has room for no more
  WireMessage message{envelope, std::move(payload)};
  message.envelope.type = type;
  return message;
}

}  // namespace

const char* MessageTypeName(MessageType type) {
  switch (type) {
    case MessageType::kHello: return "HELLO";
    case MessageType::kAssign: return "ASSIGN";
    case MessageType::kReady: return "READY";
    case MessageType::kRound: return "ROUND";
    case MessageType::kReply: return "REPLY";
    case MessageType::kBye: return "BYE";
    case MessageType::kHeartbeat: return "HEARTBEAT";
    case MessageType::kScanned: return "SCANNED";
  }
  return "UNKNOWN";
}

Frame Frame::Copy(const void* data, std::size_t size) {
  auto bytes = std::make_shared<std::string>(static_cast<const char*>(data), size);
  Frame frame;
  frame.data_ = reinterpret_cast<const std::byte*>(bytes->data());
  frame.size_ = size;
  frame.owner_ = std::move(bytes);
  return frame;
}

Frame Frame::Adopt(std::string bytes) {
  auto owned = std::make_shared<std::string>(std::move(bytes));
  Frame frame;
  frame.data_ = reinterpret_cast<const std::byte*>(owned->data());
  frame.size_ = owned->size();
  frame.owner_ = std::move(owned);
  return frame;
}

Frame Frame::View(std::shared_ptr<const void> owner, const void* data, std::size_t size) {
  Frame frame;
  frame.data_ = static_cast<const std::byte*>(data);
  frame.size_ = size;
  frame.owner_ = std::move(owner);
  return frame;
}

Frame Frame::Share(const SharedVector& values) {
  Frame frame;
  frame.data_ = reinterpret_cast<const std::byte*>(values.data());
  frame.size_ = values.size() * sizeof(double);
  frame.owner_ = values.owner();
  return frame;
}

std::vector<Frame> Encode(const WireMessage& message) {
  Header header{};
  header.magic = kWireMagic;
  header.version = kWireVersion;
  header.type = static_cast<uint16_t>(message.envelope.type);
  header.run_id = message.envelope.run_id;
  header.worker = message.envelope.worker;
  header.frame_count = static_cast<uint32_t>(message.payload.size());
  header.invocation = message.envelope.invocation;
  header.round = message.envelope.round;
  for (std::size_t i = 0; i < message.payload.size() && i < kMaxPayloadFrames; ++i) {
    header.frame_bytes[i] = message.payload[i].size();
  }
  std::vector<Frame> frames;
  frames.reserve(1 + message.payload.size());
  frames.push_back(Frame::Copy(&header, sizeof header));
  frames.insert(frames.end(), message.payload.begin(), message.payload.end());
  return frames;
}

Result<WireMessage> Decode(std::vector<Frame> frames) {
  if (frames.empty() || frames[0].size() != sizeof(Header)) return InvalidArgument("header frame has the wrong size");
  Header header;
  std::memcpy(&header, frames[0].data(), sizeof header);
  if (header.magic != kWireMagic) return InvalidArgument("wrong magic");
  if (header.version != kWireVersion) {
    return InvalidArgument("protocol version " + std::to_string(header.version) + ", expected " +
                           std::to_string(kWireVersion));
  }
  if (header.type < static_cast<uint16_t>(MessageType::kHello) ||
      header.type > static_cast<uint16_t>(MessageType::kScanned)) {
    return InvalidArgument("unknown message type " + std::to_string(header.type));
  }
  if (header.frame_count > kMaxPayloadFrames || header.frame_count + 1 != frames.size()) {
    return InvalidArgument("frame count mismatch: header says " + std::to_string(header.frame_count) + ", got " +
                           std::to_string(frames.size() - 1));
  }
  for (std::size_t i = 0; i < header.frame_count; ++i) {
    if (frames[i + 1].size() != header.frame_bytes[i]) {
      return InvalidArgument("payload frame " + std::to_string(i) + " is truncated or padded");
    }
  }
  WireMessage message;
  message.envelope = {static_cast<MessageType>(header.type), header.run_id, header.worker, header.invocation,
                      header.round};
  message.payload.assign(std::make_move_iterator(frames.begin() + 1), std::make_move_iterator(frames.end()));
  return message;
}

WireMessage PackHello(const Envelope& envelope, const HelloBody& body) {
  return Make(envelope, MessageType::kHello, {FieldsFrame(HelloFields{body.process_start_wall, body.send_wall, body.pid,
                                                                        body.memory_limit_bytes})});
}

Result<HelloBody> UnpackHello(const WireMessage& message) {
  NIMBUS_RETURN_IF_ERROR(CheckShape(message, MessageType::kHello, 1, 1));
  NIMBUS_ASSIGN_OR_RETURN(const HelloFields f, ReadFields<HelloFields>(message, MessageType::kHello, 0));
  if (f.memory_limit_bytes < 0) return BadBody(MessageType::kHello, "a negative memory limit");
  return HelloBody{f.process_start_wall, f.send_wall, f.pid, f.memory_limit_bytes};
}

WireMessage PackAssign(const Envelope& envelope, const AssignBody& b) {
  const AssignFields f{b.shard_checksum, b.l1, b.l2, b.intercept, b.rows, b.cols, b.local_solver,
                       b.general_form, b.heartbeat_seconds, b.master_timeout_seconds,
                       b.classes, b.multinomial, static_cast<int64_t>(b.class_weights.size()),
                       b.copies, static_cast<int64_t>(b.copy_scales.size()), static_cast<int64_t>(b.folds.size())};
  // The class weights and the copy scales share a frame of doubles (a message has at most
  // kMaxPayloadFrames).
  std::vector<double> doubles = b.class_weights;
  doubles.insert(doubles.end(), b.copy_scales.begin(), b.copy_scales.end());
  // A part of text: its description as JSON, and the plan's features (uint32) beside it.
  std::string text;
  Frame features = Frame::Copy(nullptr, 0);
  if (b.text) {
    text = TextPartJson(*b.text);
    if (b.text->plan && b.text->plan->features) {
      const std::vector<uint32_t>& list = *b.text->plan->features;
      features = Frame::View(b.text->plan->features, list.data(), list.size() * sizeof(uint32_t));
    }
  }
  const std::string relay = b.relay ? RelayGroupJson(*b.relay) : "";
  return Make(envelope, MessageType::kAssign,
              {FieldsFrame(f),
               Frame::Copy(b.store_uri + '\n' + b.shard_key + '\n' + b.loss + '\n' + relay + '\n' + b.faults),
               Frame::Copy(doubles.data(), doubles.size() * sizeof(double)), Frame::Copy(b.folds.data(), b.folds.size()),
               Frame::Adopt(std::move(text)), std::move(features)});
}

Result<AssignBody> UnpackAssign(const WireMessage& message) {
  NIMBUS_RETURN_IF_ERROR(CheckShape(message, MessageType::kAssign, 6, 6));
  NIMBUS_ASSIGN_OR_RETURN(const AssignFields f, ReadFields<AssignFields>(message, MessageType::kAssign, 0));
  // "store\nkey\nloss\nrelay group (JSON, one line; empty: none)\nfaults"
  std::string_view text = message.payload[1].text();
  std::string lines[5];
  constexpr const char* kMissing[] = {"shard location without a key", "shard location without a loss",
                                      "shard location without a relay line", "shard location without faults"};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto newline = text.find('\n');
    if (newline == std::string_view::npos) return BadBody(MessageType::kAssign, kMissing[i]);
    lines[i] = std::string(text.substr(0, newline));
    text.remove_prefix(newline + 1);
  }
  lines[4] = std::string(text);
  AssignBody b;
  b.store_uri = std::move(lines[0]);
  b.shard_key = std::move(lines[1]);
  b.loss = std::move(lines[2]);
  if (!lines[3].empty()) {
    NIMBUS_ASSIGN_OR_RETURN(b.relay, ParseRelayGroup(lines[3]));
  }
  b.faults = std::move(lines[4]);
  b.shard_checksum = f.shard_checksum;
  b.l1 = f.l1;
  b.l2 = f.l2;
  b.intercept = f.intercept;
  b.rows = f.rows;
  b.cols = f.cols;
  b.local_solver = f.local_solver;
  b.general_form = f.general_form;
  b.heartbeat_seconds = f.heartbeat_seconds;
  b.master_timeout_seconds = f.master_timeout_seconds;
  b.classes = f.classes;
  b.multinomial = f.multinomial;
  if (f.class_weights < 0 || f.class_weights > (int64_t{1} << 20)) return BadBody(MessageType::kAssign, "class weight count out of range");
  if (f.copy_scales < 0 || f.copy_scales > 1000) return BadBody(MessageType::kAssign, "copy scale count out of range");
  const auto class_weights = static_cast<std::size_t>(f.class_weights);
  NIMBUS_ASSIGN_OR_RETURN(std::vector<double> doubles,
                          ReadDoubles(message.payload[2], class_weights + static_cast<std::size_t>(f.copy_scales),
                                      MessageType::kAssign, "class weights and copy scales"));
  b.class_weights.assign(doubles.begin(), doubles.begin() + static_cast<std::ptrdiff_t>(class_weights));
  b.copy_scales.assign(doubles.begin() + static_cast<std::ptrdiff_t>(class_weights), doubles.end());
  b.copies = f.copies;
  if (f.folds < 0 || static_cast<uint64_t>(f.folds) != message.payload[3].size()) {
    return BadBody(MessageType::kAssign, "the rows' folds have " + std::to_string(message.payload[3].size()) +
                                             " bytes, the fields say " + std::to_string(f.folds));
  }
  b.folds.resize(message.payload[3].size());
  if (!b.folds.empty()) std::memcpy(b.folds.data(), message.payload[3].data(), b.folds.size());
  const Frame& features = message.payload[5];
  if (message.payload[4].size() > 0) {
    NIMBUS_ASSIGN_OR_RETURN(b.text, ParseTextPart(message.payload[4].text()));
    if (features.size() % sizeof(uint32_t) != 0) return BadBody(MessageType::kAssign, "a feature list of odd size");
    const bool renumbered = b.text->plan && b.text->plan->features != nullptr;
    if (!renumbered && features.size() > 0) return BadBody(MessageType::kAssign, "features without a renumbering plan");
    if (renumbered && features.size() > 0) {
      auto list = std::make_shared<std::vector<uint32_t>>(features.size() / sizeof(uint32_t));
      std::memcpy(list->data(), features.data(), features.size());
      for (std::size_t k = 0; k < list->size(); ++k) {
        if ((k > 0 && (*list)[k] <= (*list)[k - 1]) || (*list)[k] >= static_cast<uint64_t>(b.text->plan->source_cols)) {
          return BadBody(MessageType::kAssign, "the plan's features do not ascend below its largest index");
        }
      }
      b.text->plan->features = std::move(list);
    }
  } else if (features.size() > 0) {
    return BadBody(MessageType::kAssign, "features without a part of text");
  }
  return b;
}

WireMessage PackScanned(const Envelope& envelope, const ScannedBody& body) {
  const TextScanned& s = body.scan;
  const ScannedFields f{s.rows, s.nnz, s.max_index, static_cast<int64_t>(s.labels.size()), s.all_ones ? 1 : 0,
                        s.all_floats ? 1 : 0, s.bytes_read, s.seconds, static_cast<int64_t>(s.features.size())};
  std::vector<double> labels = s.labels;
  for (const int64_t rows : s.label_rows) labels.push_back(static_cast<double>(rows));  // exact below 2^53
  return Make(envelope, MessageType::kScanned,
              {FieldsFrame(f), Frame::Copy(labels.data(), labels.size() * sizeof(double)),
               Frame::Copy(s.features.data(), s.features.size() * sizeof(uint32_t))});
}

Result<ScannedBody> UnpackScanned(const WireMessage& message) {
  NIMBUS_RETURN_IF_ERROR(CheckShape(message, MessageType::kScanned, 3, 3));
  NIMBUS_ASSIGN_OR_RETURN(const ScannedFields f, ReadFields<ScannedFields>(message, MessageType::kScanned, 0));
  if (f.rows < 0 || f.nnz < 0 || f.labels < 0 || f.labels > 1000000 || f.features < 0 || !(f.seconds >= 0)) {
    return BadBody(MessageType::kScanned, "sizes out of range");
  }
  ScannedBody body;
  TextScanned& s = body.scan;
  s.rows = f.rows;
  s.nnz = f.nnz;
  s.max_index = f.max_index;
  s.all_ones = f.all_ones != 0;
  s.all_floats = f.all_floats != 0;
  s.bytes_read = f.bytes_read;
  s.seconds = f.seconds;
  const auto labels = static_cast<std::size_t>(f.labels);
  NIMBUS_ASSIGN_OR_RETURN(std::vector<double> doubles,
                          ReadDoubles(message.payload[1], 2 * labels, MessageType::kScanned, "labels and their rows"));
  s.labels.assign(doubles.begin(), doubles.begin() + static_cast<std::ptrdiff_t>(labels));
  for (std::size_t l = 0; l < labels; ++l) {
    const double rows = doubles[labels + l];
    if (!(rows >= 0 && rows <= static_cast<double>(f.rows))) return BadBody(MessageType::kScanned, "a label's rows out of range");
    s.label_rows.push_back(static_cast<int64_t>(rows));
  }
  const Frame& features = message.payload[2];
  if (!HoldsExactly(features, static_cast<uint64_t>(f.features), sizeof(uint32_t))) {
    return BadBody(MessageType::kScanned, "the feature list's size differs from the fields'");
  }
  s.features.resize(static_cast<std::size_t>(f.features));
  if (!s.features.empty()) std::memcpy(s.features.data(), features.data(), features.size());
  for (std::size_t k = 1; k < s.features.size(); ++k) {
    if (s.features[k] <= s.features[k - 1]) return BadBody(MessageType::kScanned, "the features do not ascend");
  }
  if (!s.features.empty() && s.features.back() >= s.max_index) {
    return BadBody(MessageType::kScanned, "a feature past the largest index");
  }
  return body;
}

WireMessage PackReady(const Envelope& envelope, const ReadyBody& body) {
  const WorkerReady& r = body.ready;
  const ReadyFields f{r.worker,      r.rows,       r.cols,     r.nnz,           r.curvature_trace, r.load_seconds,
                      r.invoke_wall, r.process_start_wall, r.hello_wall, r.ready_wall, r.invocation};
  if (r.support == nullptr) return Make(envelope, MessageType::kReady, {FieldsFrame(f)});
  return Make(envelope, MessageType::kReady,
              {FieldsFrame(f), Frame::Copy(r.support->data(), r.support->size() * sizeof(uint32_t))});
}

Result<ReadyBody> UnpackReady(const WireMessage& message) {
  NIMBUS_RETURN_IF_ERROR(CheckShape(message, MessageType::kReady, 1, 2));
  NIMBUS_ASSIGN_OR_RETURN(const ReadyFields f, ReadFields<ReadyFields>(message, MessageType::kReady, 0));
  ReadyBody body;
  WorkerReady& r = body.ready;
  r.worker = static_cast<int>(f.worker);
  r.rows = f.rows;
  r.cols = f.cols;
  r.nnz = f.nnz;
  r.curvature_trace = f.curvature_trace;
  r.load_seconds = f.load_seconds;
  r.invoke_wall = f.invoke_wall;
  r.process_start_wall = f.process_start_wall;
  r.hello_wall = f.hello_wall;
  r.ready_wall = f.ready_wall;
  r.invocation = f.invocation;
  if (message.payload.size() == 2) {
    const Frame& frame = message.payload[1];
    if (frame.size() % sizeof(uint32_t) != 0) return BadBody(MessageType::kReady, "a support of partial indices");
    auto support = std::make_shared<std::vector<uint32_t>>(frame.size() / sizeof(uint32_t));
    if (!support->empty()) std::memcpy(support->data(), frame.data(), frame.size());
    for (std::size_t k = 1; k < support->size(); ++k) {
      if ((*support)[k] <= (*support)[k - 1]) return BadBody(MessageType::kReady, "a support that does not ascend");
    }
    r.support = std::move(support);
  }
  return body;
}

WireMessage PackRound(const Envelope& envelope, const RoundRequest& request) {
  const ResumeState* resume = request.resume.get();
  const bool newton = request.kind != RoundKind::kAdmm;
  const bool point = request.kind == RoundKind::kHessianVector && !request.point.empty();
  const bool score = AnyLengthRound(request.kind);
  const int64_t resume_kind =
      score ? 4 : newton ? (point ? 3 : 0) : resume == nullptr ? 0 : (resume->x.empty() ? 1 : 2);
  RoundFields f{request.round,
                request.rho,
                request.relaxation,
                request.inner_tolerance,
                request.inner_relative_tolerance,
                resume_kind,
                resume == nullptr ? 0.0 : resume->rho_of_u,
                0,
                static_cast<int64_t>(request.kind),
                request.point_round,
                request.on_support ? 1 : 0};
  // A column round's z goes whole, in doubles: its length is its own.
  Frame z = request.kind == RoundKind::kColumnStep ? Frame::Share(request.z)
                                                            : VectorFrame(request.z, request.lean, &f.z_entry_bytes);
  if (request.kind == RoundKind::kColumnStep) f.z_entry_bytes = sizeof(double);
  std::vector<Frame> payload{FieldsFrame(f), std::move(z)};
  if (point) {
    payload.push_back(Frame::Share(request.point));
  } else if (score) {
    payload.push_back(Frame::Share(request.query));
  } else if (resume != nullptr && !newton) {
    // u, then x and x_relaxed, in one frame.
    auto joined = std::make_shared<std::vector<double>>(resume->u);
    joined->insert(joined->end(), resume->x.begin(), resume->x.end());
    joined->insert(joined->end(), resume->x_relaxed.begin(), resume->x_relaxed.end());
    payload.push_back(Frame::Share(SharedVector(std::move(joined))));
  }
  return Make(envelope, MessageType::kRound, std::move(payload));
}

Result<RoundRequest> UnpackRound(const WireMessage& message, std::size_t model_size) {
  NIMBUS_RETURN_IF_ERROR(CheckShape(message, MessageType::kRound, 2, 3));
  NIMBUS_ASSIGN_OR_RETURN(const RoundFields f, ReadFields<RoundFields>(message, MessageType::kRound, 0));
  RoundRequest request;
  request.round = f.round;
  request.rho = f.rho;
  request.relaxation = f.relaxation;
  request.inner_tolerance = f.inner_tolerance;
  request.inner_relative_tolerance = f.inner_relative_tolerance;
  request.lean = f.z_entry_bytes == sizeof(float) || f.z_entry_bytes == -static_cast<int64_t>(sizeof(float));
  if (f.kind < 0 || f.kind > static_cast<int64_t>(RoundKind::kColumnStep)) {
    return BadBody(MessageType::kRound, "unknown round kind " + std::to_string(f.kind));
  }
  request.kind = static_cast<RoundKind>(f.kind);
  request.point_round = f.point_round;
  request.on_support = f.on_support != 0;
  if (request.kind == RoundKind::kColumnStep) {
    if (f.z_entry_bytes != sizeof(double) || message.payload[1].size() % sizeof(double) != 0) {
      return BadBody(MessageType::kRound, "a column round's derivatives not in whole doubles");
    }
    model_size = message.payload[1].size() / sizeof(double);
  }
  NIMBUS_ASSIGN_OR_RETURN(request.z, ReadVector(message.payload[1], model_size, f.z_entry_bytes, MessageType::kRound, "z"));
  const bool point_allowed = request.kind == RoundKind::kHessianVector;
  const bool score = AnyLengthRound(request.kind);
  if (f.resume < 0 || f.resume > 4 || (f.resume == 0) != (message.payload.size() == 2) ||
      (f.resume == 3) != (point_allowed && message.payload.size() == 3) || (f.resume == 4) != score ||
      (request.kind != RoundKind::kAdmm && f.resume != 0 && f.resume != 3 && f.resume != 4)) {
    return BadBody(MessageType::kRound, "inconsistent resume state");
  }
  if (f.resume == 4) {
    if (message.payload[2].size() % sizeof(double) != 0) return BadBody(MessageType::kRound, "a query of partial doubles");
    NIMBUS_ASSIGN_OR_RETURN(request.query, ViewDoubles(message.payload[2], message.payload[2].size() / sizeof(double),
                                                       MessageType::kRound, "query"));
  } else if (f.resume == 3) {
    // (An empty model has no point to send: PackRound leaves it out.)
    if (model_size == 0) return BadBody(MessageType::kRound, "a point of no entries");
    NIMBUS_ASSIGN_OR_RETURN(request.point, ViewDoubles(message.payload[2], model_size, MessageType::kRound, "point"));
  } else if (f.resume > 0) {
    const std::size_t vectors = f.resume == 1 ? 1 : 3;
    NIMBUS_ASSIGN_OR_RETURN(std::vector<double> joined,
                            ReadDoubles(message.payload[2], vectors * model_size, MessageType::kRound, "resume state"));
    auto resume = std::make_shared<ResumeState>();
    resume->rho_of_u = f.rho_of_u;
    const auto n = static_cast<std::ptrdiff_t>(model_size);
    resume->u.assign(joined.begin(), joined.begin() + n);
    if (vectors == 3) {
      resume->x.assign(joined.begin() + n, joined.begin() + 2 * n);
      resume->x_relaxed.assign(joined.begin() + 2 * n, joined.end());
    }
    request.resume = std::move(resume);
  }
  return request;
}

WireMessage PackReply(const Envelope& envelope, const WorkerReply& reply, bool lean) {
  const WorkerScalars& s = reply.scalars;
  const WorkerTimings& t = reply.timings;
  ReplyFields f{static_cast<int64_t>(reply.status),
                      s.valid ? 1 : 0,
                      s.primal_squared,
                      s.x_squared,
                      s.u_squared,
                      s.loss_at_z,
                      t.compute_seconds,
                      t.solve_seconds,
                      t.local_iterations,
                      t.cg_iterations,
                      t.data_passes,
                      t.start_wall,
                      t.end_wall,
                      t.receive_wall,
                      t.send_wall,
                      reply.invocation,
                      reply.round,
                      0,
                      // A Newton evaluation answers with a gradient and a diagonal, a score with figures.
                      reply.w_vectors == 2 ? 2 : reply.w_vectors == 0 ? 0 : 1};
  // A score's figures (w_vectors 0) go as whole doubles, lean or not: they hold counts.
  const bool figures = reply.w_vectors == 0;
  Frame w = VectorFrame(reply.w, lean && !figures, &f.w_entry_bytes, /*may_be_sparse=*/!figures);
  std::vector<Frame> payload{FieldsFrame(f), std::move(w)};
  if (!reply.error.empty()) payload.push_back(Frame::Copy(reply.error));
  return Make(envelope, MessageType::kReply, std::move(payload));
}

Result<WorkerReply> UnpackReply(const WireMessage& message, std::size_t model_size) {
  NIMBUS_RETURN_IF_ERROR(CheckShape(message, MessageType::kReply, 2, 3));
  NIMBUS_ASSIGN_OR_RETURN(const ReplyFields f, ReadFields<ReplyFields>(message, MessageType::kReply, 0));
  if (f.status < 0 || f.status > static_cast<int64_t>(ReplyStatus::kTimedOut)) {
    return BadBody(MessageType::kReply, "unknown status " + std::to_string(f.status));
  }
  WorkerReply reply;
  reply.worker = static_cast<int>(message.envelope.worker);
  reply.invocation = f.invocation;
  reply.round = f.round;
  reply.status = static_cast<ReplyStatus>(f.status);
  reply.scalars = {f.scalars_valid != 0, f.primal_squared, f.x_squared, f.u_squared, f.loss_at_z};
  reply.timings.compute_seconds = f.compute_seconds;
  reply.timings.solve_seconds = f.solve_seconds;
  reply.timings.local_iterations = static_cast<int>(f.local_iterations);
  reply.timings.cg_iterations = static_cast<int>(f.cg_iterations);
  reply.timings.data_passes = f.data_passes;
  reply.timings.start_wall = f.start_wall;
  reply.timings.end_wall = f.end_wall;
  reply.timings.receive_wall = f.receive_wall;
  reply.timings.send_wall = f.send_wall;
  if (f.w_vectors < 0 || f.w_vectors > 2) {
    return BadBody(MessageType::kReply, "w of " + std::to_string(f.w_vectors) + " vectors");
  }
  reply.w_vectors = static_cast<int>(f.w_vectors);
  // A failed reply carries no w; a score's figures are as long as they are (in doubles).
  std::size_t expected = reply.status == ReplyStatus::kOk ? reply.w_vectors * model_size : 0;
  if (reply.status == ReplyStatus::kOk && reply.w_vectors == 0) {
    if (f.w_entry_bytes != sizeof(double) || message.payload[1].size() % sizeof(double) != 0) {
      return BadBody(MessageType::kReply, "a score's figures not in whole doubles");
    }
    expected = message.payload[1].size() / sizeof(double);
  }
  NIMBUS_ASSIGN_OR_RETURN(reply.w, ReadVector(message.payload[1], expected, f.w_entry_bytes, MessageType::kReply, "w"));
  if (message.payload.size() == 3) reply.error = std::string(message.payload[2].text());
  return reply;
}

WireMessage PackBye(const Envelope& envelope, const ByeBody& body) {
  return Make(envelope, MessageType::kBye, {Frame::Copy(body.reason)});
}

Result<ByeBody> UnpackBye(const WireMessage& message) {
  NIMBUS_RETURN_IF_ERROR(CheckShape(message, MessageType::kBye, 1, 1));
  return ByeBody{std::string(message.payload[0].text())};
}

WireMessage PackHeartbeat(const Envelope& envelope, const HeartbeatBody& body) {
  return Make(envelope, MessageType::kHeartbeat, {FieldsFrame(HeartbeatFields{body.send_wall, body.link_reconnects, body.text_read})});
}

Result<HeartbeatBody> UnpackHeartbeat(const WireMessage& message) {
  NIMBUS_RETURN_IF_ERROR(CheckShape(message, MessageType::kHeartbeat, 1, 1));
  NIMBUS_ASSIGN_OR_RETURN(const HeartbeatFields f, ReadFields<HeartbeatFields>(message, MessageType::kHeartbeat, 0));
  if (f.link_reconnects < 0) return BadBody(MessageType::kHeartbeat, "a negative reconnect count");
  return HeartbeatBody{f.send_wall, f.link_reconnects, f.text_read};
}

}  // namespace nimbus
