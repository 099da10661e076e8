#include "nimbus/data/text_input.h"

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "nimbus/data/manifest.h"

namespace nimbus {

Compression CompressionOf(std::string_view name) {
  if (name.ends_with(".gz")) return Compression::kGzip;
  if (name.ends_with(".zst")) return Compression::kZstd;
  if (name.ends_with(".xz")) return Compression::kXz;
  return Compression::kNone;
}

const char* CompressionName(Compression compression) {
  switch (compression) {
    case Compression::kGzip: return "gzip";
    case Compression::kZstd: return "zstd";
    case Compression::kXz: return "xz";
    case Compression::kNone: break;
  }
  return "none";
}

uint64_t TextFiles::bytes() const {
  uint64_t total = 0;
  for (const TextFile& file : files) total += file.bytes;
  return total;
}

uint64_t TextSlice::bytes() const {
  uint64_t total = 0;
  for (const TextPiece& piece : pieces) total += piece.end - piece.begin;
  return total;
}

bool IsDataFileName(std::string_view name) {
  const auto slash = name.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? name : name.substr(slash + 1);
  return !base.empty() && base != kManifestKey && base[0] != '.' && base[0] != '_' && !base.ends_with("~");
}

Status OpenTextStores(std::vector<TextFile>& files, const StoreOpener& open) {
  std::map<std::string, std::shared_ptr<Store>> opened;
  for (TextFile& file : files) {
    if (file.store) continue;
    std::shared_ptr<Store>& store = opened[file.store_uri];
    if (!store) {
      Result<std::unique_ptr<Store>> made = open(file.store_uri);
      if (!made.ok()) return made.status().WithContext("cannot open " + file.store_uri);
      store = std::move(made).value();
    }
    file.store = store;
  }
  return Status::Ok();
}

namespace {

// A run of bytes to cut: a file's [begin, end), splittable unless compressed.
struct Span {
  uint32_t file;
  uint64_t begin, end;
  bool splittable;
};

// The cuts as positions in the spans' concatenation, for runs of whole spans: each cut at the
// span boundary nearest its share of the bytes, after the cut before it and leaving a span
// for each run after it, so that every run holds at least one span.
std::vector<uint64_t> WholeSpanCuts(const std::vector<Span>& spans, int parts, uint64_t total) {
  std::vector<uint64_t> boundaries = {0};  // boundaries[i]: where span i begins
  for (const Span& span : spans) boundaries.push_back(boundaries.back() + (span.end - span.begin));
  std::vector<uint64_t> cuts;
  std::size_t previous = 0;  // the index of the last cut's boundary
  for (int i = 1; i < parts; ++i) {
    const auto target = static_cast<uint64_t>(static_cast<long double>(total) * i / parts);
    const std::size_t lowest = previous + 1, highest = spans.size() - static_cast<std::size_t>(parts - i);
    std::size_t best = lowest;
    for (std::size_t b = lowest; b <= highest; ++b) {
      const auto distance = [&](std::size_t at) {
        return boundaries[at] > target ? boundaries[at] - target : target - boundaries[at];
      };
      if (distance(b) < distance(best)) best = b;
    }
    cuts.push_back(boundaries[best]);
    previous = best;
  }
  return cuts;
}

// Cuts the spans, in order, into `parts` runs of nearly equal bytes: of whole spans (with
// `whole_spans`, given at least as many spans as parts), else at byte positions, a cut inside a
// span that must stay whole moving to its nearer end.
std::vector<TextSlice> Cut(const std::vector<Span>& spans, int parts, bool whole_spans) {
  uint64_t total = 0;
  for (const Span& span : spans) total += span.end - span.begin;
  std::vector<TextSlice> slices(static_cast<std::size_t>(std::max(parts, 1)));
  std::vector<uint64_t> cuts;
  if (whole_spans && spans.size() >= static_cast<std::size_t>(parts)) {
    cuts = WholeSpanCuts(spans, parts, total);
  } else {
    for (int i = 1; i < parts; ++i) {
      uint64_t cut = static_cast<uint64_t>(static_cast<long double>(total) * i / parts);
      uint64_t start = 0;
      for (const Span& span : spans) {
        const uint64_t length = span.end - span.begin;
        if (cut < start + length && cut > start && !span.splittable) {
          cut = cut - start < start + length - cut ? start : start + length;
          break;
        }
        start += length;
      }
      cuts.push_back(std::max(cut, cuts.empty() ? uint64_t{0} : cuts.back()));
    }
  }
  cuts.push_back(total);
  std::size_t slice = 0;
  uint64_t start = 0;
  for (const Span& span : spans) {
    const uint64_t length = span.end - span.begin;
    uint64_t at = start;
    while (at < start + length) {
      while (cuts[slice] <= at) ++slice;
      const uint64_t stop = std::min(start + length, cuts[slice]);
      slices[slice].pieces.push_back({span.file, span.begin + (at - start), span.begin + (stop - start)});
      at = stop;
    }
    start += length;
  }
  return slices;
}

}  // namespace

std::vector<TextSlice> SliceText(const std::vector<TextFile>& files, int parts) {
  std::vector<Span> spans;
  for (std::size_t f = 0; f < files.size(); ++f) {
    if (files[f].bytes > 0) {
      spans.push_back({static_cast<uint32_t>(f), 0, files[f].bytes, files[f].compression == Compression::kNone});
    }
  }
  return Cut(spans, parts, /*whole_spans=*/true);
}

std::vector<TextSlice> SubdivideSlice(const std::vector<TextFile>& files, const TextSlice& slice, int parts) {
  std::vector<Span> spans;
  for (const TextPiece& piece : slice.pieces) {
    spans.push_back({piece.file, piece.begin, piece.end, files[piece.file].compression == Compression::kNone});
  }
  std::vector<TextSlice> cut = Cut(spans, parts, false);
  std::erase_if(cut, [](const TextSlice& s) { return s.pieces.empty(); });
  return cut;
}

// ---- Decoders: the text of a blob's bytes, plain or decompressed as it is read ----

class SliceLines::Decoder {
 public:
  Decoder(std::unique_ptr<ByteReader> reader, std::string name, uint64_t* bytes_read)
      : reader_(std::move(reader)), name_(std::move(name)), bytes_read_(bytes_read) {}
  virtual ~Decoder() = default;
  // Up to into.size() bytes of text; 0 at its end.
  virtual Result<std::size_t> Read(std::span<char> into) = 0;

 protected:
  // More compressed input into in_ (in_begin_ .. in_end_); false at the blob's end.
  Result<bool> Refill() {
    if (in_.empty()) in_.resize(std::size_t{1} << 20);
    NIMBUS_ASSIGN_OR_RETURN(const std::size_t got, reader_->Read(in_));
    *bytes_read_ += got;
    in_begin_ = 0;
    in_end_ = got;
    return got > 0;
  }
  Status Corrupt(const std::string& format, const std::string& why) const {
    return DataLoss(name_ + ": not a valid " + format + " stream: " + why);
  }

  std::unique_ptr<ByteReader> reader_;
  std::string name_;
  uint64_t* bytes_read_;
  std::vector<char> in_;
  std::size_t in_begin_ = 0, in_end_ = 0;
};

namespace {

using Decoder = SliceLines::Decoder;

class PlainDecoder final : public Decoder {
 public:
  using Decoder::Decoder;
  Result<std::size_t> Read(std::span<char> into) override {
    NIMBUS_ASSIGN_OR_RETURN(const std::size_t got, reader_->Read(into));
    *bytes_read_ += got;
    return got;
  }
};

// gzip (or zlib) members one after another, as `cat a.gz b.gz` or pigz make them.
class GzipDecoder final : public Decoder {
 public:
  GzipDecoder(std::unique_ptr<ByteReader> reader, std::string name, uint64_t* bytes_read)
      : Decoder(std::move(reader), std::move(name), bytes_read) {
    ok_ = inflateInit2(&stream_, 15 + 32) == Z_OK;  // 32: a gzip or zlib header, detected
  }
  ~GzipDecoder() override { inflateEnd(&stream_); }

  Result<std::size_t> Read(std::span<char> into) override {
    if (!ok_) return ResourceExhausted(name_ + ": cannot start zlib");
    stream_.next_out = reinterpret_cast<Bytef*>(into.data());
    stream_.avail_out = static_cast<uInt>(std::min<std::size_t>(into.size(), 1u << 30));
    const uInt wanted = stream_.avail_out;
    while (stream_.avail_out > 0) {
      bool end_of_input = false;
      if (in_begin_ == in_end_) {
        NIMBUS_ASSIGN_OR_RETURN(const bool more, Refill());
        end_of_input = !more;
      }
      if (ended_) {
        if (end_of_input) break;
        if (inflateReset(&stream_) != Z_OK) return Corrupt("gzip", "cannot start its next member");
        ended_ = false;
      }
      stream_.next_in = reinterpret_cast<Bytef*>(in_.data() + in_begin_);
      stream_.avail_in = static_cast<uInt>(in_end_ - in_begin_);
      const uInt room = stream_.avail_out;
      const int status = inflate(&stream_, Z_NO_FLUSH);
      in_begin_ = in_end_ - stream_.avail_in;
      if (status == Z_STREAM_END) {
        ended_ = true;
      } else if (status != Z_OK && status != Z_BUF_ERROR) {
        return Corrupt("gzip", stream_.msg != nullptr ? stream_.msg : "inflate failed");
      } else if (end_of_input && stream_.avail_out == room) {
        return Corrupt("gzip", "it ends in the middle of a member (truncated?)");
      }
    }
    return static_cast<std::size_t>(wanted - stream_.avail_out);
  }

 private:
  z_stream stream_{};
  bool ok_ = false;
  bool ended_ = false;  // the last member ended; more input starts another
};

class ZstdDecoder final : public Decoder {
 public:
  ZstdDecoder(std::unique_ptr<ByteReader> reader, std::string name, uint64_t* bytes_read)
      : Decoder(std::move(reader), std::move(name), bytes_read), context_(ZSTD_createDCtx()) {}
  ~ZstdDecoder() override { ZSTD_freeDCtx(context_); }

  Result<std::size_t> Read(std::span<char> into) override {
    if (context_ == nullptr) return ResourceExhausted(name_ + ": cannot start zstd");
    ZSTD_outBuffer out{into.data(), into.size(), 0};
    while (out.pos == 0) {
      bool end_of_input = false;
      if (in_begin_ == in_end_) {
        NIMBUS_ASSIGN_OR_RETURN(const bool more, Refill());
        end_of_input = !more;
      }
      ZSTD_inBuffer in{in_.data(), in_end_, in_begin_};
      const std::size_t status = ZSTD_decompressStream(context_, &out, &in);  // flushes, given no input
      if (ZSTD_isError(status)) return Corrupt("zstd", ZSTD_getErrorName(status));
      if (in.pos > in_begin_ || out.pos > 0) frame_done_ = status == 0;  // 0: a frame ended, flushed
      in_begin_ = in.pos;
      if (end_of_input && out.pos == 0) {
        if (!frame_done_) return Corrupt("zstd", "it ends in the middle of a frame (truncated?)");
        break;
      }
    }
    return out.pos;
  }

 private:
  ZSTD_DCtx* context_;
  bool frame_done_ = false;
};

class XzDecoder final : public Decoder {
 public:
  XzDecoder(std::unique_ptr<ByteReader> reader, std::string name, uint64_t* bytes_read)
      : Decoder(std::move(reader), std::move(name), bytes_read) {
    ok_ = lzma_stream_decoder(&stream_, UINT64_MAX, LZMA_CONCATENATED) == LZMA_OK;
  }
  ~XzDecoder() override { lzma_end(&stream_); }

  Result<std::size_t> Read(std::span<char> into) override {
    if (!ok_) return ResourceExhausted(name_ + ": cannot start liblzma");
    stream_.next_out = reinterpret_cast<uint8_t*>(into.data());
    stream_.avail_out = into.size();
    while (stream_.avail_out == into.size() && !ended_) {
      if (in_begin_ == in_end_ && !finishing_) {
        NIMBUS_ASSIGN_OR_RETURN(const bool more, Refill());
        finishing_ = !more;
      }
      stream_.next_in = reinterpret_cast<const uint8_t*>(in_.data() + in_begin_);
      stream_.avail_in = in_end_ - in_begin_;
      const lzma_ret status = lzma_code(&stream_, finishing_ ? LZMA_FINISH : LZMA_RUN);
      in_begin_ = in_end_ - stream_.avail_in;
      if (status == LZMA_STREAM_END) {
        ended_ = true;
      } else if (status == LZMA_BUF_ERROR && finishing_) {
        return Corrupt("xz", "it ends in the middle of a block (truncated?)");
      } else if (status != LZMA_OK) {
        return Corrupt("xz", "liblzma error " + std::to_string(static_cast<int>(status)));
      }
    }
    return into.size() - stream_.avail_out;
  }

 private:
  lzma_stream stream_ = LZMA_STREAM_INIT;
  bool ok_ = false, finishing_ = false, ended_ = false;
};

}  // namespace

// ---- SliceLines ----

SliceLines::SliceLines(const std::vector<TextFile>& files, TextSlice slice, std::size_t block_bytes)
    : files_(files), slice_(std::move(slice)), block_bytes_(std::max<std::size_t>(block_bytes, 64)) {}

SliceLines::~SliceLines() = default;

Status SliceLines::OpenPiece() {
  const TextPiece& piece = slice_.pieces[piece_];
  const TextFile& file = files_[piece.file];
  const std::string name = file.store->Describe(file.key);
  const bool plain = file.compression == Compression::kNone;
  // A range from past 0 reads from the byte before it (is that a line break?) to the line under
  // way at its end, wherever that line ends.
  const uint64_t from = plain && piece.begin > 0 ? piece.begin - 1 : 0;
  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<ByteReader> reader, file.store->OpenRange(file.key, from, UINT64_MAX));
  switch (file.compression) {
    case Compression::kNone: decoder_ = std::make_unique<PlainDecoder>(std::move(reader), name, &bytes_read_); break;
    case Compression::kGzip: decoder_ = std::make_unique<GzipDecoder>(std::move(reader), name, &bytes_read_); break;
    case Compression::kZstd: decoder_ = std::make_unique<ZstdDecoder>(std::move(reader), name, &bytes_read_); break;
    case Compression::kXz: decoder_ = std::make_unique<XzDecoder>(std::move(reader), name, &bytes_read_); break;
  }
  // No bigger than a plain piece needs: a small file is read without clearing a megabyte.
  const std::size_t wanted = plain ? static_cast<std::size_t>(std::min<uint64_t>(block_bytes_, piece.end - from + 64))
                                   : block_bytes_;
  if (buffer_.size() < wanted) buffer_.resize(wanted);
  begin_ = end_ = 0;
  offset_ = from;
  line_start_ = plain ? piece.begin : 0;
  skipping_ = plain && piece.begin > 0;
  input_done_ = piece_done_ = false;
  file_ = piece.file;
  lines_ = 0;
  open_ = true;
  return Status::Ok();
}

Status SliceLines::Fill() {
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);  // a line longer than the buffer
  NIMBUS_ASSIGN_OR_RETURN(const std::size_t got,
                          decoder_->Read(std::span<char>(buffer_.data() + end_, buffer_.size() - end_)));
  end_ += got;
  input_done_ = got == 0;
  return Status::Ok();
}

Result<std::string_view> SliceLines::Next() {
  while (true) {
    if (!open_ || piece_done_) {
      if (open_) ++piece_;
      open_ = false;
      if (piece_ >= slice_.pieces.size()) return std::string_view();
      NIMBUS_RETURN_IF_ERROR(OpenPiece());
    }
    const TextPiece& piece = slice_.pieces[piece_];
    const bool plain = files_[piece.file].compression == Compression::kNone;
    if (begin_ == end_ && !input_done_) NIMBUS_RETURN_IF_ERROR(Fill());
    if (skipping_) {
      const char* at = static_cast<const char*>(std::memchr(buffer_.data() + begin_, '\n', end_ - begin_));
      const std::size_t skipped = at != nullptr ? static_cast<std::size_t>(at - buffer_.data()) + 1 - begin_ : end_ - begin_;
      begin_ += skipped;
      offset_ += skipped;
      if (at != nullptr) {
        skipping_ = false;
        line_start_ = offset_;
      }
      if (offset_ >= piece.end || (at == nullptr && input_done_)) piece_done_ = true;  // no line starts in it
      continue;
    }
    if (plain && offset_ >= piece.end) {  // every line that starts in the range is out
      piece_done_ = true;
      continue;
    }
    const char* data = buffer_.data() + begin_;
    const std::size_t available = end_ - begin_;
    const char* last = available > 0 ? static_cast<const char*>(::memrchr(data, '\n', available)) : nullptr;
    std::size_t length = 0;
    if (last == nullptr) {
      if (!input_done_) {
        NIMBUS_RETURN_IF_ERROR(Fill());
        continue;
      }
      length = available;  // the file's last line, without a line break
      piece_done_ = true;
      if (length == 0) continue;
    } else {
      length = static_cast<std::size_t>(last - data) + 1;
    }
    if (plain && offset_ + length > piece.end) {
      // The block runs past the range: end it with the line under way at the range's end.
      const std::size_t from = static_cast<std::size_t>(piece.end - 1 - offset_);
      const char* stop = static_cast<const char*>(std::memchr(data + from, '\n', length - from));
      length = stop != nullptr ? static_cast<std::size_t>(stop - data) + 1 : length;
      piece_done_ = true;
    }
    const std::string_view block(data, length);
    begin_ += length;
    offset_ += length;
    first_line_ = lines_ + 1;
    lines_ += static_cast<int64_t>(std::count(block.begin(), block.end(), '\n')) + (block.back() != '\n' ? 1 : 0);
    return block;
  }
}

Result<int64_t> SliceLines::LineInFile(int64_t line_in_piece) const {
  if (piece_ >= slice_.pieces.size()) return line_in_piece;
  const TextFile& file = files_[slice_.pieces[piece_].file];
  if (file.compression != Compression::kNone || line_start_ == 0) return line_in_piece;
  NIMBUS_ASSIGN_OR_RETURN(const int64_t before, CountLineBreaks(*file.store, file.key, line_start_));
  return before + line_in_piece;
}

Result<int64_t> CountLineBreaks(Store& store, const std::string& key, uint64_t end) {
  NIMBUS_ASSIGN_OR_RETURN(std::unique_ptr<ByteReader> reader, store.OpenRange(key, 0, end));
  std::vector<char> buffer(std::size_t{1} << 20);
  int64_t breaks = 0;
  while (true) {
    NIMBUS_ASSIGN_OR_RETURN(const std::size_t got, reader->Read(buffer));
    if (got == 0) return breaks;
    breaks += std::count(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(got), '\n');
  }
}

}  // namespace nimbus
