// The envelope of a message between ranks: an MPI job starts each worker once, so every
// message is of invocation 1.
#pragma once

#include <cstdint>

#include "nimbus/wire/codec.h"

namespace nimbus {

inline Envelope RankEnvelope(int worker, MessageType type, int64_t round = -1) {
  Envelope envelope;
  envelope.type = type;
  envelope.worker = static_cast<uint32_t>(worker);
  envelope.invocation = 1;
  envelope.round = round;
  return envelope;
}

}  // namespace nimbus
