// Rows' own weights s_r (liblinear's instance weights): a row counts s_r times in the loss.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nimbus/core/status.h"
#include "nimbus/data/dataset.h"
#include "nimbus/data/store.h"
#include "nimbus/data/text_input.h"

namespace nimbus {

// A text file with one weight per line, a line per data row, each a finite number >= 0 (no
// blank lines, so that line r is row r), not every one 0. Errors name the file and line: an
// unreadable number, a negative or non-finite weight, or more or fewer lines than `rows`; or
// the file, if every weight is 0.
Result<std::vector<double>> ReadSampleWeights(const std::string& path, int64_t rows);

// ReadSampleWeights for `data`'s rows, into data.weights (kept alive with its arrays).
Status ReadSampleWeightsInto(const std::string& path, Dataset& data);

// A weights file read a few lines at a time (for rows that come a block at a time), to the
// same rules as ReadSampleWeights.
class SampleWeightReader {
 public:
  // From byte `offset` of `file`, where its line `first_line` (0-based) begins.
  static Result<SampleWeightReader> Open(const TextFile& file, uint64_t offset = 0, int64_t first_line = 0);
  // The next `count` weights, after those in `weights` (which it clears first).
  Status Read(int64_t count, std::vector<double>& weights);
  // Fails if the file holds more weights than were read (more lines than rows).
  Status ExpectEnd(int64_t rows);
  // The byte where the next line begins.
  uint64_t offset() const { return offset_; }

 private:
  Result<bool> NextLine(std::string& line);

  std::unique_ptr<ByteReader> reader_;
  std::string name_;
  int64_t line_ = 0;  // lines read so far, from the file's first
  uint64_t offset_ = 0;
  std::vector<char> buffer_;
  std::size_t at_ = 0, end_ = 0;
};

// The byte offsets in `file` of its lines `lines` (0-based, ascending), after checking that it
// has `rows` lines in all.
Result<std::vector<uint64_t>> SampleWeightOffsets(const TextFile& file, const std::vector<int64_t>& lines, int64_t rows);

// The caller's array, held to the same rules; errors say "`what`[r]".
Status CheckSampleWeights(std::span<const double> weights, int64_t rows, const std::string& what);

}  // namespace nimbus
