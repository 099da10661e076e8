// LIBSVM text where it lies: one file, several, a directory or an S3 prefix of them,
// compressed or not, read in parts by whoever needs its rows (a worker its own part, split a
// part per thread) without one process ever holding all of it.
//
// A part (TextSlice) is whole files, or a byte range of one plain file. A range owns the lines
// that start in it, as Hadoop's input splits do: it begins after the first line break at or
// after its begin - 1 (a range from 0 begins at 0) and ends with the line under way at its
// end. So any cut of a file into ranges reads every line once, and a cut that falls
// mid-line costs nothing but the line's bytes past the cut.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nimbus/core/status.h"
#include "nimbus/data/store.h"

namespace nimbus {

enum class Compression { kNone, kGzip, kZstd, kXz };
// By the name's ending: .gz, .zst, .xz; anything else is plain text.
Compression CompressionOf(std::string_view name);
const char* CompressionName(Compression compression);

// A text file as a blob of a store: what travels to a worker is the store's URI and the key;
// the worker opens the store itself (OpenAnyStore).
struct TextFile {
  std::string store_uri;  // a directory (absolute) or s3://bucket/prefix
  std::string key;
  uint64_t bytes = 0;  // as stored (compressed, for a compressed file)
  Compression compression = Compression::kNone;
  std::shared_ptr<Store> store;  // opened (by FindTextFiles, or on the worker)
};

// Text files in the order their rows count: as given, a directory's or prefix's in ascending
// order of name.
struct TextFiles {
  std::string location;  // as the user gave it
  std::vector<TextFile> files;

  uint64_t bytes() const;
  std::string Describe(std::size_t file) const { return files[file].store->Describe(files[file].key); }
};

// Whether a listed blob is data: not a manifest, a hidden file ("."), a job's marker ("_",
// as Hadoop's _SUCCESS) or a backup ("~").
bool IsDataFileName(std::string_view name);

// The stores of files that travelled without them (a worker's), each URI opened once by
// `open`.
using StoreOpener = std::function<Result<std::unique_ptr<Store>>(const std::string& uri)>;
Status OpenTextStores(std::vector<TextFile>& files, const StoreOpener& open);

struct TextPiece {
  uint32_t file = 0;
  uint64_t begin = 0, end = 0;  // [begin, end) of its bytes; a compressed file's is all of them
  bool whole(const TextFile& f) const { return begin == 0 && end == f.bytes; }
};

struct TextSlice {
  std::vector<TextPiece> pieces;
  uint64_t bytes() const;
};

// `parts` slices in the files' order, each of nearly equal bytes. With at least as many files
// as parts, whole files; otherwise byte ranges of the plain files (a compressed file cannot be
// entered in the middle and goes whole to one slice). A slice may own no line (a range inside
// one long line, or a compressed file's neighbour); the slices together own every line once.
std::vector<TextSlice> SliceText(const std::vector<TextFile>& files, int parts);
// Each slice cut again into at most `parts` (for threads that share one slice's work): the
// pieces' ranges cut where SliceText would, so the lines are the same.
std::vector<TextSlice> SubdivideSlice(const std::vector<TextFile>& files, const TextSlice& slice, int parts);

// A slice's complete lines, a block at a time, through the decompressor its files need.
class SliceLines {
 public:
  SliceLines(const std::vector<TextFile>& files, TextSlice slice, std::size_t block_bytes = std::size_t{4} << 20);
  ~SliceLines();
  SliceLines(const SliceLines&) = delete;
  SliceLines& operator=(const SliceLines&) = delete;

  // The next block of whole lines of one file (each ends in '\n', but a file's last line may
  // not); empty once the slice is read. Valid until the next call.
  Result<std::string_view> Next();
  // The file of the last block, and that block's first line as a count of lines from its
  // piece's first (1 for the first).
  uint32_t file() const { return file_; }
  int64_t first_line() const { return first_line_; }
  // The number in its file of the line `line_in_piece` of the last block's piece, for an error
  // message: for a range that starts past 0, the lines before it are counted (a read of the
  // file up to the range).
  Result<int64_t> LineInFile(int64_t line_in_piece) const;
  // Bytes read from the store so far (compressed, for a compressed file).
  uint64_t bytes_read() const { return bytes_read_; }

  class Decoder;  // plain or decompressing (text_input.cpp)

 private:
  Status OpenPiece();
  Status Fill();

  const std::vector<TextFile>& files_;
  TextSlice slice_;
  std::size_t block_bytes_;
  std::size_t piece_ = 0;         // the piece being read
  bool open_ = false;
  std::unique_ptr<Decoder> decoder_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0, end_ = 0;  // buffer_[begin_, end_) holds bytes not yet handed out
  uint64_t offset_ = 0;              // the file offset of buffer_[begin_] (plain files)
  uint64_t line_start_ = 0;          // the file offset of the piece's first line (plain files)
  bool skipping_ = false;            // a range from past 0: before its first line start
  bool input_done_ = false;          // the decoder is drained
  bool piece_done_ = false;          // the piece's last line was handed out
  uint32_t file_ = 0;
  int64_t first_line_ = 1, lines_ = 0;  // lines handed out of the piece so far
  uint64_t bytes_read_ = 0;
};

// The number of line breaks in bytes [0, end) of a plain file.
Result<int64_t> CountLineBreaks(Store& store, const std::string& key, uint64_t end);

}  // namespace nimbus
