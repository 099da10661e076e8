// A worker's part of LIBSVM text (wire/messages.h: TextPart): read and scanned where it lies,
// then, once the master's plan of the whole comes, made the worker's shard. Every runtime's
// workers do it so: threads, processes, Lambda functions, MPI ranks.
#pragma once

#include <memory>

#include "nimbus/core/status.h"
#include "nimbus/data/dataset.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/data/text_input.h"
#include "nimbus/data/text_rows.h"
#include "nimbus/wire/messages.h"

namespace nimbus {

// The part's files (with their stores opened by `open`) and slice, as data/text_input.h has them.
struct TextPartFiles {
  std::vector<TextFile> files;
  TextSlice slice;
};
Result<TextPartFiles> OpenTextPart(const TextPart& part, const StoreOpener& open);
// And back, for the master's assignment of `slice` of `files`.
TextPart TextPartOf(const std::vector<TextFile>& files, const TextSlice& slice, const LibsvmReadOptions& options);

TextScanned ScannedOf(const TextScan& scan);
TextScan ScanOf(const TextScanned& scanned);

// The rows a worker read, before the plan.
struct TextPartRows {
  std::shared_ptr<RowBlock> rows;
  TextScanned scan;
  double seconds = 0;
  std::vector<double> weights;  // a held part's own (empty: none, or the plan's file's)
};

// A part held by the process that serves it (a Dask worker's partition: nimbus.h,
// TrainingData::HeldByWorkers): its one file is {kHeldStore, the part's key, 0 bytes}, and the
// worker takes its rows from the HeldRows its host gave it instead of reading text.
inline constexpr const char* kHeldStore = "held:";
struct HeldRows {
  std::string key;
  RowBlock rows;                // labels as the caller has them (encoded by the plan, as text's are)
  std::vector<double> weights;  // one per row, or none
};
bool IsHeldPart(const TextPart& part);
// The held rows as read text's: fails unless `held` is the part's (its key) and still unread.
Result<TextPartRows> TakeHeldRows(const TextPart& part, std::shared_ptr<HeldRows>& held);
// `bytes_so_far` (or null): the text read from the store so far, as it is read.
Result<TextPartRows> ReadTextPart(const TextPart& part, const StoreOpener& open,
                                  std::atomic<uint64_t>* bytes_so_far = nullptr);
// The bytes of text the part holds (of compressed files, as stored).
uint64_t TextBytes(const TextPart& part);

// The rows as the plan (part.plan) has them: labels encoded, columns renumbered, the rows'
// weights attached; a shard of `cols` columns. Fails if the rows are not those the scan found
// (a replacement that read other text than the worker it replaces).
Result<Dataset> FinishTextPart(TextPartRows rows, const TextPart& part, const StoreOpener& open);

// The plan of the whole as a part's rows take it on.
TextPlanned PlannedFor(const TextPlan& plan, std::size_t part, const TextScan& scan);
LabelEncoding EncodingOf(const TextPlanned& plan);

}  // namespace nimbus
