#include "nimbus/data/shard.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>

#include <algorithm>
#include <bit>
#include <utility>
#include <cmath>
#include <cstring>
#include <vector>

namespace nimbus {
namespace {

static_assert(std::endian::native == std::endian::little, "the shard format is little-endian");

constexpr char kMagic[8] = {'N', 'I', 'M', 'B', 'S', 'H', 'R', 'D'};
constexpr uint32_t kFlagBinaryLabels = 1;
constexpr uint32_t kFlagRowWeights = 2;
constexpr uint32_t kFlagClassIndexLabels = 4;  // a multiclass set's: class indices 0 .. C-1
constexpr uint32_t kFlagFloatValues = 8;        // version 2: values as float32 (each exactly one)
constexpr uint32_t kFlagNoValues = 16;          // version 2: no values (every one is 1)
constexpr uint32_t kKnownFlags =
    kFlagBinaryLabels | kFlagRowWeights | kFlagClassIndexLabels | kFlagFloatValues | kFlagNoValues;

std::size_t ValueBytes(CsrValues kind) { return kind == CsrValues::kDouble ? 8 : kind == CsrValues::kFloat ? 4 : 0; }

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t flags;
  int64_t rows;
  int64_t cols;
  int64_t nnz;
  int64_t first_row;
  double label_negative;
  double label_positive;
  uint64_t payload_checksum;
  uint64_t header_checksum;
};
static_assert(sizeof(Header) == kShardHeaderBytes);
constexpr std::size_t kHeaderChecksummedBytes = offsetof(Header, header_checksum);

uint64_t PayloadBytes(int64_t rows, int64_t nnz, bool weighted, CsrValues values) {
  return static_cast<uint64_t>(rows + 1) * 8 + static_cast<uint64_t>(rows) * (weighted ? 16 : 8) +
         static_cast<uint64_t>(nnz) * (4 + ValueBytes(values));
}

Header MakeHeader(int64_t rows, int64_t cols, int64_t nnz, int64_t first_row, bool weighted, CsrValues values,
                  const LabelEncoding& encoding, uint64_t payload_checksum) {
  Header header{};
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  // Version 1 where the values are doubles, so that older builds read such shards still.
  header.version = values == CsrValues::kDouble ? 1 : kShardFormatVersion;
  header.flags = (encoding.classification && !encoding.multiclass() ? kFlagBinaryLabels : 0) |
                 (encoding.multiclass() ? kFlagClassIndexLabels : 0) | (weighted ? kFlagRowWeights : 0) |
                 (values == CsrValues::kFloat ? kFlagFloatValues : 0) | (values == CsrValues::kOnes ? kFlagNoValues : 0);
  header.rows = rows;
  header.cols = cols;
  header.nnz = nnz;
  header.first_row = first_row;
  header.label_negative = encoding.negative;
  header.label_positive = encoding.positive;
  header.payload_checksum = payload_checksum;
  header.header_checksum = XXH3_64bits(&header, kHeaderChecksummedBytes);
  return header;
}

}  // namespace

uint64_t ShardFileBytes(int64_t rows, int64_t nnz, bool weighted, CsrValues values) {
  return sizeof(Header) + PayloadBytes(rows, nnz, weighted, values);
}

Result<std::unique_ptr<ShardFileWriter>> ShardFileWriter::Create(std::string path, int64_t rows, int64_t cols,
                                                                 int64_t nnz, bool weighted, CsrValues values,
                                                                 const LabelEncoding& encoding, int64_t first_row) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("cannot create " + path, errno);
  std::unique_ptr<ShardFileWriter> writer(new ShardFileWriter(std::move(path), fd));
  writer->rows_ = rows;
  writer->cols_ = cols;
  writer->nnz_ = nnz;
  writer->first_row_ = first_row;
  writer->weighted_ = weighted;
  writer->values_ = values;
  writer->encoding_ = encoding;
  const uint64_t size = sizeof(Header) + PayloadBytes(rows, nnz, weighted, values);
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) return ErrnoError("cannot size " + writer->path_, errno);
  // The last offset: the rows' entries end at nnz.
  NIMBUS_RETURN_IF_ERROR(writer->WriteAt(sizeof(Header) + static_cast<uint64_t>(rows) * 8, &nnz, sizeof nnz));
  return writer;
}

ShardFileWriter::~ShardFileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

Status ShardFileWriter::WriteAt(uint64_t offset, const void* data, std::size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t wrote = ::pwrite(fd_, p, bytes, static_cast<off_t>(offset));
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0) return ErrnoError("cannot write " + path_, errno);
    p += wrote;
    offset += static_cast<uint64_t>(wrote);
    bytes -= static_cast<std::size_t>(wrote);
  }
  return Status::Ok();
}

Status ShardFileWriter::Write(int64_t row, int64_t entry, const CsrView& block, std::span<const double> labels,
                              std::span<const double> weights) {
  if (row < 0 || entry < 0 || row + block.rows > rows_ || entry + block.nnz() > nnz_ ||
      static_cast<int64_t>(labels.size()) != block.rows || (weighted_ && static_cast<int64_t>(weights.size()) != block.rows)) {
    return Internal(path_ + ": a block of rows outside the shard's sizes");
  }
  // The sections: row offsets, labels, weights, values, column indices.
  const uint64_t offsets = sizeof(Header);
  const uint64_t label_section = offsets + static_cast<uint64_t>(rows_ + 1) * 8;
  const uint64_t weight_section = label_section + static_cast<uint64_t>(rows_) * 8;
  const uint64_t value_section = weight_section + (weighted_ ? static_cast<uint64_t>(rows_) * 8 : 0);
  const uint64_t index_section = value_section + static_cast<uint64_t>(nnz_) * ValueBytes(values_);
  std::vector<int64_t> row_ptr(static_cast<std::size_t>(block.rows));
  for (int64_t r = 0; r < block.rows; ++r) row_ptr[static_cast<std::size_t>(r)] = entry + block.row_ptr[r] - block.row_ptr[0];
  const auto first = static_cast<uint64_t>(row), at = static_cast<uint64_t>(entry);
  const auto entries = static_cast<std::size_t>(block.nnz());
  NIMBUS_RETURN_IF_ERROR(WriteAt(offsets + first * 8, row_ptr.data(), row_ptr.size() * 8));
  NIMBUS_RETURN_IF_ERROR(WriteAt(label_section + first * 8, labels.data(), labels.size() * 8));
  if (weighted_) NIMBUS_RETURN_IF_ERROR(WriteAt(weight_section + first * 8, weights.data(), weights.size() * 8));
  const int64_t base = block.row_ptr[0];
  if (values_ == CsrValues::kDouble) {
    std::vector<double> doubles(entries);
    for (std::size_t k = 0; k < entries; ++k) doubles[k] = block.Value(base + static_cast<int64_t>(k));
    NIMBUS_RETURN_IF_ERROR(WriteAt(value_section + at * 8, doubles.data(), entries * 8));
  } else if (values_ == CsrValues::kFloat) {
    std::vector<float> floats(entries);
    for (std::size_t k = 0; k < entries; ++k) floats[k] = static_cast<float>(block.Value(base + static_cast<int64_t>(k)));
    NIMBUS_RETURN_IF_ERROR(WriteAt(value_section + at * 4, floats.data(), entries * 4));
  }
  return WriteAt(index_section + at * 4, block.col_idx + base, entries * 4);
}

Result<ShardInfo> ShardFileWriter::Finish() {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  std::vector<char> buffer(std::size_t{4} << 20);
  const uint64_t size = sizeof(Header) + PayloadBytes(rows_, nnz_, weighted_, values_);
  for (uint64_t offset = sizeof(Header); offset < size;) {
    const ssize_t got = ::pread(fd_, buffer.data(), std::min<uint64_t>(buffer.size(), size - offset),
                                static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      XXH3_freeState(state);
      return got < 0 ? ErrnoError("cannot read back " + path_, errno) : DataLoss(path_ + ": shorter than written");
    }
    XXH3_64bits_update(state, buffer.data(), static_cast<std::size_t>(got));
    offset += static_cast<uint64_t>(got);
  }
  const uint64_t checksum = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  const Header header = MakeHeader(rows_, cols_, nnz_, first_row_, weighted_, values_, encoding_, checksum);
  NIMBUS_RETURN_IF_ERROR(WriteAt(0, &header, sizeof header));
  if (::close(std::exchange(fd_, -1)) != 0) return ErrnoError("cannot close " + path_, errno);
  return ShardInfo{rows_, cols_, nnz_, first_row_, checksum};
}

Result<ShardInfo> WriteShard(const Dataset& data, int64_t first_row, Store& store, const std::string& key) {
  const CsrView& m = data.matrix;
  // The payload checksum is needed in the header, which comes first: compute it in a first
  // pass over the (in-memory) arrays, then stream header and payload.
  const int64_t base = m.rows == 0 ? 0 : m.row_ptr[0];
  const int64_t nnz = m.nnz();
  std::vector<int64_t> row_ptr(static_cast<std::size_t>(m.rows) + 1);
  for (int64_t r = 0; r <= m.rows; ++r) row_ptr[static_cast<std::size_t>(r)] = m.rows == 0 ? 0 : m.row_ptr[r] - base;

  struct Part {
    const void* data;
    std::size_t size;
  };
  const Part parts[] = {
      {row_ptr.data(), row_ptr.size() * sizeof(int64_t)},
      {data.labels.data(), data.labels.size() * sizeof(double)},
      {data.weights.data(), data.weights.size() * sizeof(double)},
      {m.value_kind == CsrValues::kFloat ? static_cast<const void*>(m.values32 + base)
                                         : static_cast<const void*>(m.values + base),
       m.ValueBytes(nnz)},
      {m.col_idx + base, static_cast<std::size_t>(nnz) * sizeof(uint32_t)},
  };
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  for (const Part& part : parts) {
    if (part.size > 0) XXH3_64bits_update(state, part.data, part.size);
  }
  const uint64_t payload_checksum = XXH3_64bits_digest(state);
  XXH3_freeState(state);

  const Header header = MakeHeader(m.rows, m.cols, nnz, first_row, !data.weights.empty(), m.value_kind,
                                   data.encoding, payload_checksum);

  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<BlobWriter> writer, store.OpenWriter(key));
  NIMBUS_RETURN_IF_ERROR(writer->Write(std::string_view(reinterpret_cast<const char*>(&header), sizeof header)));
  for (const Part& part : parts) {
    NIMBUS_RETURN_IF_ERROR(writer->Write(std::string_view(static_cast<const char*>(part.data), part.size)));
  }
  NIMBUS_RETURN_IF_ERROR(writer->Commit());
  return ShardInfo{m.rows, m.cols, nnz, first_row, payload_checksum};
}

Result<Dataset> DecodeShard(std::shared_ptr<const Blob> blob, const std::string& name) {
  const std::span<const std::byte> bytes = blob->bytes();
  auto corrupt = [&](const std::string& why) { return DataLoss(name + ": not a valid shard: " + why); };
  if (bytes.size() < sizeof(Header)) return corrupt("file too short for the header");
  Header header;
  std::memcpy(&header, bytes.data(), sizeof header);
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0) return corrupt("wrong magic");
  if (header.version != 1 && header.version != kShardFormatVersion) {
    return corrupt("format version " + std::to_string(header.version) + ", this build reads version " +
                   std::to_string(kShardFormatVersion));
  }
  if (XXH3_64bits(&header, kHeaderChecksummedBytes) != header.header_checksum) return corrupt("header checksum mismatch");
  if ((header.flags & ~kKnownFlags) != 0) return corrupt("flags " + std::to_string(header.flags) + " unknown to this build");
  const bool weighted = (header.flags & kFlagRowWeights) != 0;
  const bool float_values = (header.flags & kFlagFloatValues) != 0, no_values = (header.flags & kFlagNoValues) != 0;
  if ((float_values || no_values) && header.version < 2) return corrupt("compact values in a version 1 shard");
  if (float_values && no_values) return corrupt("flags: values both float32 and none");
  const CsrValues kind = float_values ? CsrValues::kFloat : no_values ? CsrValues::kOnes : CsrValues::kDouble;
  if (header.rows < 0 || header.cols < 0 || header.nnz < 0 || header.rows > (int64_t{1} << 40) ||
      header.nnz > (int64_t{1} << 44) || header.cols > static_cast<int64_t>(UINT32_MAX)) {
    return corrupt("implausible sizes");
  }
  if (bytes.size() != sizeof(Header) + PayloadBytes(header.rows, header.nnz, weighted, kind)) {
    return corrupt("size " + std::to_string(bytes.size()) + " does not match the header's rows and nnz");
  }
  const std::byte* payload = bytes.data() + sizeof(Header);
  if (XXH3_64bits(payload, bytes.size() - sizeof(Header)) != header.payload_checksum) {
    return corrupt("payload checksum mismatch");
  }
  // The mapping is page-aligned and the header is 80 bytes, so every array is 8-byte aligned.
  const auto* row_ptr = reinterpret_cast<const int64_t*>(payload);
  const auto* labels = reinterpret_cast<const double*>(row_ptr + header.rows + 1);
  const double* weights = weighted ? labels + header.rows : nullptr;
  const auto* value_bytes = reinterpret_cast<const std::byte*>(labels + header.rows * (weighted ? 2 : 1));
  const auto* col_idx =
      reinterpret_cast<const uint32_t*>(value_bytes + static_cast<std::size_t>(header.nnz) * ValueBytes(kind));
  const auto* values = kind == CsrValues::kDouble ? reinterpret_cast<const double*>(value_bytes) : nullptr;
  const auto* values32 = kind == CsrValues::kFloat ? reinterpret_cast<const float*>(value_bytes) : nullptr;
  if (row_ptr[0] != 0 || row_ptr[header.rows] != header.nnz) return corrupt("row pointers do not span the entries");
  const bool binary = (header.flags & kFlagBinaryLabels) != 0;
  const bool class_indices = (header.flags & kFlagClassIndexLabels) != 0;
  if (binary && class_indices) return corrupt("flags: labels both -1/+1 and class indices");
  for (int64_t r = 0; r < header.rows; ++r) {
    if (binary && labels[r] != 1.0 && labels[r] != -1.0) return corrupt("label of row " + std::to_string(r) + " is not +1 or -1");
    if (class_indices && !(labels[r] >= 0 && labels[r] < kMaxClasses && labels[r] == std::floor(labels[r]))) {
      return corrupt("label of row " + std::to_string(r) + " is not a class index");
    }
    if (!std::isfinite(labels[r])) return corrupt("label of row " + std::to_string(r) + " is not finite");
    if (weighted && !(weights[r] >= 0 && std::isfinite(weights[r]))) {
      return corrupt("weight of row " + std::to_string(r) + " is not a finite number >= 0");
    }
  }
  // Every row's indices ascend strictly and stay below cols, as the LIBSVM reader guarantees.
  const CsrView matrix{header.rows, header.cols, row_ptr, col_idx, values, values32, kind};
  if (Status structure = CheckCsrStructure(matrix); !structure.ok()) return corrupt(structure.message());

  Dataset data;
  data.matrix.rows = header.rows;
  data.matrix.cols = header.cols;
  data.matrix.row_ptr = row_ptr;
  data.matrix.col_idx = col_idx;
  data.matrix.values = values;
  data.matrix.values32 = values32;
  data.matrix.value_kind = kind;
  data.labels = std::span<const double>(labels, static_cast<std::size_t>(header.rows));
  if (weighted) data.weights = std::span<const double>(weights, static_cast<std::size_t>(header.rows));
  // A multiclass shard's labels are class indices; the classes' values are in the manifest.
  data.encoding.classification = binary || class_indices;
  data.encoding.negative = header.label_negative;
  data.encoding.positive = header.label_positive;
  data.storage = std::move(blob);
  return data;
}

Result<Dataset> LoadShard(Store& store, const std::string& key, std::optional<uint64_t> expected_checksum) {
  NIMBUS_ASSIGN_OR_RETURN(std::shared_ptr<const Blob> blob, store.Get(key));
  const std::string name = store.Describe(key);
  if (expected_checksum && blob->bytes().size() >= sizeof(Header)) {
    Header header;
    std::memcpy(&header, blob->bytes().data(), sizeof header);
    if (header.payload_checksum != *expected_checksum) {
      return DataLoss(name + ": the shard's checksum differs from the manifest's: not the shard the manifest lists");
    }
  }
  return DecodeShard(std::move(blob), name);
}

}  // namespace nimbus
