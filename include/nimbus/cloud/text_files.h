// Where a data location's rows are: the shards of a store (a manifest.json in a directory or
// under an S3 prefix), or LIBSVM text in one or more files (a file, a directory or an S3
// prefix of files, or several of these separated by commas).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "nimbus/core/status.h"
#include "nimbus/data/store.h"
#include "nimbus/data/text_input.h"

namespace nimbus {

struct DataLocation {
  std::string location;
  std::shared_ptr<Store> store;  // a store of shards, or
  TextFiles text;                // text files (with their stores opened)

  bool is_store() const { return store != nullptr; }
};

// Finds what `location` holds. An error names what is missing: a file, a key, an empty
// directory or prefix.
Result<DataLocation> LocateData(const std::string& location);
// Text files only (a store is an error, naming the command that takes one instead).
Result<TextFiles> FindTextFiles(const std::string& location);

}  // namespace nimbus
