// `nimbus split` in bounded memory: LIBSVM text of any size into shards, on every core.
//
// Two passes over the text, each cut into parts that threads take in turn. The first scans
// every part (its rows, entries, labels, largest index, the features that occur); the scans
// make the plan of the whole (text_rows.h); the second reads each part again and writes its
// rows, encoded and renumbered, straight to their place in their shard's file (the scans give
// every part's offset). Memory is a few blocks of text per thread and the model-sized list of
// features, whatever the size of the text; the shards go to their files as they are made.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "nimbus/core/status.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/data/manifest.h"
#include "nimbus/data/store.h"
#include "nimbus/data/text_input.h"

namespace nimbus {

struct TextSplitOptions {
  int shards = 1;  // one per worker: each a slice of the text (text_input.h: SliceText)
  LibsvmReadOptions libsvm;
  // Each row's weight, one per line and a line per row; the shards carry them.
  std::optional<TextFile> sample_weights;
  int threads = 0;  // 0: this machine's cores
  // Each shard's values in 4 bytes where every one is exactly a float, in none where every one
  // is 1 (format version 2); exact either way. Off: doubles (version 1, for older builds).
  bool compact_values = true;
  // Where a shard for a store that is not a directory is written before it goes up (empty:
  // $TMPDIR or /tmp).
  std::string scratch_directory;
  // Called now and then from the working threads (one at a time): the pass ("reading",
  // "writing"), and its bytes done of its total.
  std::function<void(const std::string& pass, uint64_t done, uint64_t total)> on_progress;
};

struct TextSplitResult {
  Manifest manifest;
  int empty_parts = 0;  // slices that held no line, left out of the manifest
  uint64_t bytes_read = 0;
  uint64_t shard_bytes = 0;         // the shards' files, as written
  uint64_t double_shard_bytes = 0;  // what they would take with every value a double
};

Result<TextSplitResult> SplitText(const TextFiles& input, const TextSplitOptions& options, Store& out);

}  // namespace nimbus
