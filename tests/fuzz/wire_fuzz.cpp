// The wire decoder on any bytes, as the frames of one multipart message: the first 88 bytes
// are the header frame, the rest is cut into frames by the sizes the header declares (so the
// fuzzer reaches the bodies), and what remains is one more frame. A message that decodes is
// unpacked as its type says; a body that unpacks is packed again, and that canonical form
// must decode, unpack and pack to the same bytes.
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <vector>

#include "fuzz_check.h"
#include "nimbus/wire/codec.h"

namespace {

using namespace nimbus;

std::vector<Frame> Split(const uint8_t* data, size_t size) {
  std::vector<Frame> frames;
  const size_t header = std::min(size, kWireHeaderBytes);
  frames.push_back(Frame::Copy(data, header));
  size_t at = header;
  if (header == kWireHeaderBytes) {
    uint32_t count = 0;
    std::memcpy(&count, data + 20, sizeof count);  // the header's frame count
    for (uint32_t i = 0; i < std::min<uint32_t>(count, kMaxPayloadFrames) && at < size; ++i) {
      uint64_t declared = 0;
      std::memcpy(&declared, data + 40 + 8 * i, sizeof declared);
      const size_t take = static_cast<size_t>(std::min<uint64_t>(declared, size - at));
      frames.push_back(Frame::Copy(data + at, take));
      at += take;
    }
  }
  if (at < size) frames.push_back(Frame::Copy(data + at, size - at));
  return frames;
}

// `pack` packs what `unpack` read; the packed form must survive a second trip unchanged.
template <typename Unpack, typename Pack>
void CheckCanonical(const WireMessage& packed, Unpack unpack, Pack pack) {
  const std::vector<Frame> first = Encode(packed);
  Result<WireMessage> decoded = Decode(first);
  FUZZ_CHECK(decoded.ok());
  auto body = unpack(*decoded);
  FUZZ_CHECK(body.ok());
  const std::vector<Frame> second = Encode(pack(*body));
  FUZZ_CHECK(first.size() == second.size());
  for (size_t i = 0; i < first.size(); ++i) FUZZ_CHECK(first[i].text() == second[i].text());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Result<WireMessage> decoded = Decode(Split(data, size));
  if (!decoded.ok()) return 0;
  const WireMessage& m = *decoded;
  const Envelope& e = m.envelope;
  switch (e.type) {
    case MessageType::kHello:
      if (auto body = UnpackHello(m); body.ok()) {
        auto pack = [&](const HelloBody& b) { return PackHello(e, b); };
        CheckCanonical(pack(*body), UnpackHello, pack);
      }
      break;
    case MessageType::kAssign:
      if (auto body = UnpackAssign(m); body.ok()) {
        auto pack = [&](const AssignBody& b) { return PackAssign(e, b); };
        CheckCanonical(pack(*body), UnpackAssign, pack);
      }
      break;
    case MessageType::kReady:
      if (auto body = UnpackReady(m); body.ok()) {
        auto pack = [&](const ReadyBody& b) { return PackReady(e, b); };
        CheckCanonical(pack(*body), UnpackReady, pack);
      }
      break;
    case MessageType::kRound: {
      // The model size the receiver expects: as the frame holds doubles, floats, or neither.
      const size_t bytes = m.payload.size() > 1 ? m.payload[1].size() : 0;
      for (const size_t n : {bytes / 8, bytes / 4, size_t{3}}) {
        if (auto body = UnpackRound(m, n); body.ok()) {
          // (A column round's z is as long as it is, whatever the receiver's model.)
          FUZZ_CHECK(body->z.size() == n || body->kind == RoundKind::kColumnStep);
          auto unpack = [n](const WireMessage& w) { return UnpackRound(w, n); };
          auto pack = [&](const RoundRequest& r) { return PackRound(e, r); };
          CheckCanonical(pack(*body), unpack, pack);
        }
      }
      break;
    }
    case MessageType::kReply: {
      const size_t bytes = m.payload.size() > 1 ? m.payload[1].size() : 0;
      for (const size_t n : {bytes / 16, bytes / 8, bytes / 4, size_t{3}}) {  // w: one or two vectors
        if (auto body = UnpackReply(m, n); body.ok()) {
          const bool lean = body->status == ReplyStatus::kOk && n > 0 && bytes == 4 * n * body->w_vectors;
          auto unpack = [n](const WireMessage& w) { return UnpackReply(w, n); };
          auto pack = [&](const WorkerReply& r) { return PackReply(e, r, lean); };
          CheckCanonical(pack(*body), unpack, pack);
        }
      }
      break;
    }
    case MessageType::kBye:
      if (auto body = UnpackBye(m); body.ok()) {
        auto pack = [&](const ByeBody& b) { return PackBye(e, b); };
        CheckCanonical(pack(*body), UnpackBye, pack);
      }
      break;
    case MessageType::kHeartbeat:
      if (auto body = UnpackHeartbeat(m); body.ok()) {
        auto pack = [&](const HeartbeatBody& b) { return PackHeartbeat(e, b); };
        CheckCanonical(pack(*body), UnpackHeartbeat, pack);
      }
      break;
    case MessageType::kScanned:
      if (auto body = UnpackScanned(m); body.ok()) {
        auto pack = [&](const ScannedBody& b) { return PackScanned(e, b); };
        CheckCanonical(pack(*body), UnpackScanned, pack);
      }
      break;
  }
  return 0;
}
