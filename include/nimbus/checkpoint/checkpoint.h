// Checkpoints of a run: the master's state between two rounds (solve/admm/admm_master.h,
// MasterState) and the arguments of the command that started the run, as one object
// "checkpoint.nimbus" in a store (a directory or s3://bucket/prefix), replaced whole at every
// write: a reader sees the previous checkpoint or the new one, never a mix (a temporary
// file renamed into place; an S3 PUT).
//
// Layout (little-endian):
//   offset  size
//        0     8  magic "NIMBUSCP"
//        8     4  format version (1)
//       12     4  zero
//       16     8  length L of the metadata
//       24     L  metadata, JSON: the algorithm, the scalars, each worker's rows, nonzeros
//                 and vector lengths, the arguments
//   24 + L     .  the vectors as doubles: z, z_last, then per worker w_last, w_previous
//      end-8   8  XXH3-64 of every byte before it
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "nimbus/solve/admm/admm_master.h"
#include "nimbus/core/status.h"
#include "nimbus/data/store.h"

namespace nimbus {

struct Checkpoint {
  MasterState state;
  std::vector<std::string> arguments;  // the train command's, to resume with
  std::string working_directory;       // where they were given (relative paths lead from there)
};

inline constexpr const char* kCheckpointKey = "checkpoint.nimbus";

// Writes `checkpoint` to `store` under kCheckpointKey, replacing the previous one.
Status WriteCheckpoint(Store& store, const Checkpoint& checkpoint);
// Reads the store's checkpoint; NotFound if it has none. Errors name the object.
Result<Checkpoint> ReadCheckpoint(Store& store);

// The bytes of a checkpoint, and back (`where` names the source in errors).
std::string EncodeCheckpoint(const Checkpoint& checkpoint);
Result<Checkpoint> DecodeCheckpoint(std::string_view bytes, const std::string& where);

}  // namespace nimbus
