#include "nimbus/data/libsvm_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <algorithm>
#include <cstring>
#include <vector>

#include "nimbus/core/file_io.h"
#include "nimbus/core/pod_array.h"
#include "nimbus/data/feature_map.h"

namespace nimbus {
namespace {

constexpr std::size_t kReadChunkBytes = 4 << 20;

bool IsBlank(char c) { return c == ' ' || c == '\t'; }
bool EndsToken(const char* p, const char* end) { return p == end || IsBlank(*p) || *p == '#'; }

// The token at p, shown safely in an error message (non-printable bytes as \xNN).
std::string Quote(const char* p, const char* end) {
  std::string out = "'";
  int shown = 0;
  for (; p != end && !IsBlank(*p) && shown < 40; ++p, ++shown) {
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  if (p != end && !IsBlank(*p)) out += "...";
  return out + "'";
}

// The common case of LIBSVM values, "-0.123456" or "12": at most 15 significant digits, no
// exponent. Then value = digits / 10^k with both operands exact doubles, and one IEEE division
// rounds correctly (Clinger's fast path), so the result equals strtod's. Returns the end of
// the number, or nullptr to fall back to std::from_chars.
const char* ParseShortDecimal(const char* p, const char* end, double* value) {
  static constexpr double kPowersOfTen[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
                                            1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  const bool negative = p != end && *p == '-';
  if (negative) ++p;
  uint64_t digits = 0;
  int count = 0;
  int fraction_digits = 0;
  for (; p != end && *p >= '0' && *p <= '9'; ++p, ++count) digits = digits * 10 + static_cast<uint64_t>(*p - '0');
  if (p != end && *p == '.') {
    ++p;
    const char* fraction = p;
    for (; p != end && *p >= '0' && *p <= '9'; ++p, ++count) digits = digits * 10 + static_cast<uint64_t>(*p - '0');
    fraction_digits = static_cast<int>(p - fraction);
  }
  if (count == 0 || count > 15) return nullptr;
  if (p != end && (*p == 'e' || *p == 'E')) return nullptr;
  const double magnitude = static_cast<double>(digits) / kPowersOfTen[fraction_digits];
  *value = negative ? -magnitude : magnitude;
  return p;
}

}  // namespace

void RowBlock::Clear() {
  row_ptr.clear();
  col_idx.clear();
  values.clear();
  labels.clear();
}

Status RowBlock::Append(const RowBlock& other) {
  if (value_kind != CsrValues::kDouble || other.value_kind != CsrValues::kDouble) {
    return Internal("rows appended before their values are compacted");
  }
  if (other.rows() == 0) return Status::Ok();
  if (row_ptr.size() == 0) {
    NIMBUS_RETURN_IF_ERROR(row_ptr.Ensure(1));
    row_ptr.push_back(0);
  }
  const auto offset = static_cast<int64_t>(col_idx.size());
  NIMBUS_RETURN_IF_ERROR(row_ptr.Ensure(static_cast<std::size_t>(other.rows())));
  NIMBUS_RETURN_IF_ERROR(col_idx.Ensure(other.col_idx.size()));
  NIMBUS_RETURN_IF_ERROR(values.Ensure(other.values.size()));
  NIMBUS_RETURN_IF_ERROR(labels.Ensure(other.labels.size()));
  for (std::size_t r = 1; r < other.row_ptr.size(); ++r) row_ptr.push_back(offset + other.row_ptr[r]);
  for (const uint32_t j : other.col_idx.span()) col_idx.push_back(j);
  for (const double v : other.values.span()) values.push_back(v);
  for (const double y : other.labels.span()) labels.push_back(y);
  return Status::Ok();
}

CsrView RowBlock::View(int64_t cols) const {
  CsrView view{rows(), cols, row_ptr.data(), col_idx.data(), values.data()};
  view.values32 = values32.data();
  view.value_kind = value_kind;
  return view;
}

uint64_t RowBlock::MemoryBytes() const {
  return row_ptr.capacity() * 8 + col_idx.capacity() * 4 + values.capacity() * 8 + values32.capacity() * 4 +
         labels.capacity() * 8;
}

void RowBlock::CompactValues(CsrValues kind) {
  if (value_kind != CsrValues::kDouble || kind == CsrValues::kDouble) return;
  const std::size_t n = values.size();
  if (kind == CsrValues::kFloat) {
    // Float k goes to bytes 4k..4k+3, which held doubles already read (those below k/2 + 1).
    auto* bytes = reinterpret_cast<unsigned char*>(values.data());
    for (std::size_t k = 0; k < n; ++k) {
      double value;
      std::memcpy(&value, bytes + 8 * k, sizeof value);
      const auto narrow = static_cast<float>(value);
      std::memcpy(bytes + 4 * k, &narrow, sizeof narrow);
    }
    values32 = std::move(values).Reinterpret<float>(n);
    values32.ShrinkToFit();
  }
  values = PodArray<double>();
  value_kind = kind;
}

LibsvmParser::LibsvmParser(const LibsvmReadOptions& options, std::function<std::string(int64_t line)> where)
    : options_(options), where_(std::move(where)) {
  if (options_.expected_labels) known_labels_ = options_.expected_labels->ClassValues();
}

Status LibsvmParser::Error(const std::string& reason) const { return InvalidArgument(where_(line_) + ": " + reason); }

Status LibsvmParser::Parse(std::string_view lines, int64_t first_line, RowBlock& rows) {
  line_ = first_line - 1;
  if (rows.row_ptr.size() == 0) {
    NIMBUS_RETURN_IF_ERROR(rows.row_ptr.Ensure(1));
    rows.row_ptr.push_back(0);
  }
  const char* p = lines.data();
  const char* end = p + lines.size();
  while (p < end) {
    ++line_;
    const char* newline = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    const char* line_end = newline != nullptr ? newline : end;
    const char* content_end = line_end;
    if (content_end > p && content_end[-1] == '\r') --content_end;
    NIMBUS_RETURN_IF_ERROR(ParseLine(p, content_end, rows));
    p = newline != nullptr ? newline + 1 : end;
  }
  return Status::Ok();
}

namespace {

// A decimal number ending at a blank, '#' or the end of the line; '+' and exponents allowed.
bool ParseNumber(const char*& p, const char* end, double* value, bool* out_of_range) {
  const char* start = p;
  if (start != end && *start == '+') {
    ++start;
    if (start != end && (*start == '-' || *start == '+')) return false;
  }
  *out_of_range = false;
  if (const char* next = ParseShortDecimal(start, end, value); next != nullptr && EndsToken(next, end)) {
    p = next;
    return true;
  }
  const auto [next, error] = std::from_chars(start, end, *value);
  if (error != std::errc() && error != std::errc::result_out_of_range) return false;
  if (!EndsToken(next, end)) return false;
  if (error == std::errc::result_out_of_range) {
    // Too small to represent is a zero (as strtod and liblinear read it); too large is not.
    const std::string token(start, next);
    *value = std::strtod(token.c_str(), nullptr);
    *out_of_range = !std::isfinite(*value);
  }
  p = next;
  return true;
}

}  // namespace

Status LibsvmParser::ParseLabel(const char*& p, const char* end, RowBlock& rows) {
  const char* token = p;
  double label = 0;
  bool out_of_range = false;
  if (!ParseNumber(p, end, &label, &out_of_range)) {
    return Error("invalid label " + Quote(token, end) + ": expected a number");
  }
  if (out_of_range || !std::isfinite(label)) return Error("label " + Quote(token, end) + " is not a finite number");
  if (options_.expected_labels) {
    if (options_.expected_labels->classification &&
        std::find(known_labels_.begin(), known_labels_.end(), label) == known_labels_.end()) {
      return Error("label " + Quote(token, end) + " is not one of the model's " + options_.expected_labels->Describe());
    }
  } else if (options_.label_mode == LabelMode::kClassification && !distinct_labels_.Add(label)) {
    return Error("label " + Quote(token, end) + " is a distinct label beyond " + std::to_string(kMaxClasses) +
                 ", the most classes a classifier takes (are the labels a regression's targets? --loss squared)");
  }
  NIMBUS_RETURN_IF_ERROR(rows.labels.Ensure(1));
  rows.labels.push_back(label);
  return Status::Ok();
}

Status LibsvmParser::ParseLine(const char* p, const char* end, RowBlock& rows) {
  while (p != end && IsBlank(*p)) ++p;
  if (p == end || *p == '#') return Status::Ok();  // blank or comment-only line
  // An entry takes at least 4 bytes ("1:1 "), the last 3: room for every entry of the line.
  const auto most_entries = static_cast<std::size_t>(end - p) / 4 + 1;
  NIMBUS_RETURN_IF_ERROR(rows.col_idx.Ensure(most_entries));
  NIMBUS_RETURN_IF_ERROR(rows.values.Ensure(most_entries));
  NIMBUS_RETURN_IF_ERROR(rows.row_ptr.Ensure(1));
  NIMBUS_RETURN_IF_ERROR(ParseLabel(p, end, rows));
  uint64_t previous_index = 0;
  while (true) {
    while (p != end && IsBlank(*p)) ++p;
    if (p == end || *p == '#') break;
    const char* token = p;
    if (*p < '0' || *p > '9') return Error("expected INDEX:VALUE, found " + Quote(token, end));
    uint64_t index = 0;
    for (; p != end && *p >= '0' && *p <= '9'; ++p) {
      index = index * 10 + static_cast<uint64_t>(*p - '0');
      if (index > kMaxFeatureIndex) {
        return Error("feature index " + Quote(token, end) + " overflows: the largest index is " +
                     std::to_string(kMaxFeatureIndex));
      }
    }
    if (p == end || *p != ':') {
      if (EndsToken(p, end)) return Error("missing ':' after feature index " + std::to_string(index));
      return Error("expected INDEX:VALUE, found " + Quote(token, end));
    }
    ++p;
    if (index == 0) return Error("feature index 0: indices start at 1");
    if (index <= previous_index) {
      return Error(index == previous_index
                       ? "duplicate feature index " + std::to_string(index)
                       : "feature index " + std::to_string(index) + " after " + std::to_string(previous_index) +
                             ": indices must ascend");
    }
    if (EndsToken(p, end)) return Error("missing value after '" + std::to_string(index) + ":'");
    const char* value_token = p;
    double value = 0;
    bool out_of_range = false;
    if (!ParseNumber(p, end, &value, &out_of_range)) {
      return Error("invalid value " + Quote(value_token, end) + " for feature " + std::to_string(index));
    }
    if (out_of_range || !std::isfinite(value)) {
      return Error("value " + Quote(value_token, end) + " of feature " + std::to_string(index) +
                   " is not a finite number");
    }
    if (rows.values.full()) return Internal("entry reservation exceeded");
    rows.col_idx.push_back(static_cast<uint32_t>(index - 1));
    rows.values.push_back(value);
    previous_index = index;
  }
  if (previous_index > max_index_) max_index_ = previous_index;
  rows.row_ptr.push_back(static_cast<int64_t>(rows.values.size()));
  return Status::Ok();
}

namespace {

// In place: the columns renumbered to the features that occur, when that is worth it.
ColumnMap RenumberIfSparse(std::span<uint32_t> col_idx, int64_t* cols) {
  OccurringColumns occurring = OccurringColumns::Of(col_idx, *cols);
  const auto count = static_cast<int64_t>(occurring.columns().size());
  if (!WorthRenumbering(count, *cols)) return {};
  occurring.Renumber(col_idx, col_idx);
  ColumnMap map;
  map.source_cols = *cols;
  map.features = std::make_shared<const std::vector<uint32_t>>(std::move(occurring).TakeColumns());
  *cols = count;
  return map;
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

Status LibsvmReadOptions::Validate() const {
  if (expected_labels && expected_labels->classification && !expected_labels->multiclass() && expected_labels->positive == expected_labels->negative) {
    return InvalidArgument("expected_labels: the two labels must differ");
  }
  return Status::Ok();
}

Result<Dataset> ReadLibsvmFile(const std::string& path, const LibsvmReadOptions& options) {
  NIMBUS_RETURN_IF_ERROR(options.Validate());
  NIMBUS_ASSIGN_OR_RETURN(const uint64_t file_size, RegularFileSize(path));
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoError("cannot open " + path, errno);
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);

  auto csr = std::make_shared<RowBlock>();
  LibsvmParser parser(options, [&path](int64_t line) { return path + ":" + std::to_string(line); });
  // No bigger than the file: a small file is read without clearing megabytes first.
  std::vector<char> buffer(std::min<std::size_t>(kReadChunkBytes, file_size + 1));
  std::size_t carried = 0;  // bytes of an unfinished line kept at the front of the buffer
  int64_t next_line = 1;
  auto parse = [&](const char* begin, const char* end) -> Status {
    NIMBUS_RETURN_IF_ERROR(parser.Parse(std::string_view(begin, static_cast<std::size_t>(end - begin)), next_line, *csr));
    next_line = parser.last_line() + 1;
    return Status::Ok();
  };
  while (true) {
    if (carried == buffer.size()) buffer.resize(buffer.size() * 2);  // a line longer than the buffer
    const ssize_t n = ::read(fd.get(), buffer.data() + carried, buffer.size() - carried);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("cannot read " + path, errno);
    }
    if (n == 0) {
      NIMBUS_RETURN_IF_ERROR(parse(buffer.data(), buffer.data() + carried));
      break;
    }
    const char* begin = buffer.data();
    const char* end = begin + carried + static_cast<std::size_t>(n);
    const char* last_newline = static_cast<const char*>(::memrchr(begin, '\n', static_cast<std::size_t>(end - begin)));
    if (last_newline == nullptr) {
      carried = static_cast<std::size_t>(end - begin);
      continue;
    }
    NIMBUS_RETURN_IF_ERROR(parse(begin, last_newline + 1));
    carried = static_cast<std::size_t>(end - (last_newline + 1));
    std::memmove(buffer.data(), last_newline + 1, carried);
  }

  const int64_t lines = parser.last_line();
  if (csr->rows() == 0) {
    return InvalidArgument(path + ":" + std::to_string(lines == 0 ? 1 : lines) + ": " +
                           (lines == 0 ? "empty file: no data rows" : "no data rows (only blank or comment lines)"));
  }
  int64_t cols = static_cast<int64_t>(parser.max_index());
  if (options.label_mode == LabelMode::kClassification && !options.expected_labels &&
      parser.distinct_labels().count() < 2) {
    return InvalidArgument(path + ":" + std::to_string(lines) + ": every row has label " +
                           FormatLabel(csr->labels[0]) + ": a binary classifier needs two distinct labels");
  }
  const LabelEncoding encoding = EncodingOf(options, parser.distinct_labels());
  if (encoding.classification) {
    for (double& label : csr->labels.span()) label = encoding.Encode(label);
  }
  csr->row_ptr.ShrinkToFit();
  csr->col_idx.ShrinkToFit();
  csr->values.ShrinkToFit();
  csr->labels.ShrinkToFit();

  Dataset data;
  if (options.renumber_columns) data.columns = RenumberIfSparse(csr->col_idx.span(), &cols);
  data.matrix = csr->View(cols);
  data.labels = csr->labels.span();
  data.encoding = encoding;
  data.storage = std::move(csr);
  return data;
}

LabelEncoding EncodingOf(const LibsvmReadOptions& options, const DistinctLabels& labels) {
  if (options.expected_labels) return *options.expected_labels;
  if (options.label_mode == LabelMode::kRegression) {
    LabelEncoding encoding;
    encoding.classification = false;
    return encoding;
  }
  return labels.Encoding();
}

Result<Dataset> ReadLibsvmFileFor(const std::string& path, const LabelEncoding& labels) {
  LibsvmReadOptions options;
  options.label_mode = labels.classification ? LabelMode::kClassification : LabelMode::kRegression;
  if (labels.classification) options.expected_labels = labels;
  options.renumber_columns = true;  // a hashed feature space costs no vector of its size
  return ReadLibsvmFile(path, options);
}

}  // namespace nimbus
