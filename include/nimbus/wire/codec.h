// The one versioned wire format between master and workers. A message is a multipart ZeroMQ
// message: a fixed 72-byte little-endian header frame, then up to four payload frames of raw
// bytes (fixed-layout fields, arrays of doubles, text).
//
//   header: magic "NMBW" | version u16 | type u16 | run id u64 | worker u32 | frame count u32 |
//           invocation u64 | round i64 | frame sizes 4 x u64
//
// Decode() trusts nothing: a wrong magic, version, type, frame count or size is an error
// with a reason, and the receiver drops and counts the message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nimbus/core/status.h"
#include "nimbus/wire/messages.h"

namespace nimbus {

inline constexpr uint32_t kWireMagic = 0x57424d4e;  // the bytes "NMBW", read little-endian
// 2: general-form consensus (supports); 3: lean (float32) vectors; 4: round kinds (Newton);
// 5: class weights in ASSIGN; 8: products on a direction's support; 9: a heartbeat counts
// its worker's reconnects, HELLO says its memory limit; 12: a relay's group in ASSIGN; 13: the
// group's launch command, hosts and advertised host; 14: mostly-zero vectors as their nonzeros
inline constexpr uint16_t kWireVersion = 14;
inline constexpr std::size_t kWireHeaderBytes = 88;
inline constexpr std::size_t kMaxPayloadFrames = 6;

enum class MessageType : uint16_t {
  kHello = 1,      // worker -> master: I started (run, worker, invocation, clocks)
  kAssign = 2,     // master -> worker: your shard, the problem, the options
  kReady = 3,      // worker -> master: shard loaded (sizes, curvature, load time)
  kRound = 4,      // master -> worker: kind, z, rho, tolerances [, resume state or point]
  kReply = 5,      // worker -> master: w, scalars, timings
  kBye = 6,        // either way: leaving, with a reason
  kHeartbeat = 7,  // either way: still here
  kScanned = 8,    // worker -> master: what its part of the text holds (rows, labels, features)
};
const char* MessageTypeName(MessageType type);

// Bytes of one frame, owned or shared (a z sent to K workers is not copied K times).
class Frame {
 public:
  Frame() = default;
  static Frame Copy(const void* data, std::size_t size);
  static Frame Copy(std::string_view text) { return Copy(text.data(), text.size()); }
  static Frame Share(const SharedVector& values);
  static Frame Adopt(std::string bytes);
  // Bytes kept alive by `owner` (a received ZeroMQ message, say).
  static Frame View(std::shared_ptr<const void> owner, const void* data, std::size_t size);

  const std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::string_view text() const { return {reinterpret_cast<const char*>(data_), size_}; }
  const std::shared_ptr<const void>& owner() const { return owner_; }

 private:
  std::shared_ptr<const void> owner_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

struct Envelope {
  MessageType type = MessageType::kHeartbeat;
  uint64_t run_id = 0;
  uint32_t worker = 0;
  uint64_t invocation = 0;
  int64_t round = -1;
};

struct WireMessage {
  Envelope envelope;
  std::vector<Frame> payload;
};

// Header frame followed by the payload frames.
std::vector<Frame> Encode(const WireMessage& message);
// frames[0] is the header. Checks magic, version, type and every frame's size.
Result<WireMessage> Decode(std::vector<Frame> frames);

// ---- The bodies of each message type ----

struct HelloBody {
  double process_start_wall = 0;  // when the worker process began
  double send_wall = 0;           // the worker's clock when it sent HELLO (for the clock offset)
  int64_t pid = 0;
  // The most memory the worker may use (its address-space limit, its cgroup's memory.max, a
  // Lambda function's memory size: the least of them), in bytes; 0: no limit it can see.
  int64_t memory_limit_bytes = 0;
};

// What a worker needs to know to join a run. Plain numbers: the runtime maps them to and
// from ProblemSpec and WorkerOptions.
struct AssignBody {
  std::string store_uri;  // where the shard lives
  std::string shard_key;
  uint64_t shard_checksum = 0;  // 0: not checked
  std::string loss = "logistic";  // the loss's name: nimbus's or one the worker program registered
  double l1 = 0, l2 = 0;
  int64_t intercept = 0;
  int64_t rows = 0, cols = 0;  // N and d of the whole problem
  int64_t classes = 1, multinomial = 0;  // ProblemSpec::classes and ::multinomial
  std::vector<double> class_weights;      // ProblemSpec::class_weights (empty: every class 1)
  int64_t copies = 1;                     // ProblemSpec::copies and ::copy_scales
  std::vector<double> copy_scales;
  std::vector<uint8_t> folds;             // the fold each of the shard's rows is held out in (empty: none)
  int64_t local_solver = 0;
  int64_t general_form = 0;           // 1: the worker works on its support alone
  double heartbeat_seconds = 1;       // how often to send HEARTBEAT
  double master_timeout_seconds = 30; // silence from the master after which a worker leaves
  std::string faults;                 // tests and demos: faults to stage (worker/fault_injection.h's text)
  // Or, in place of the shard, a part of LIBSVM text to read: without its plan, the worker
  // reads and scans it, says SCANNED and waits for the ASSIGN that has the plan.
  std::optional<TextPart> text;
  // Or, to a relay, its group of shards in the store at store_uri (shard_key then unused).
  std::optional<RelayGroup> relay;
};

struct ScannedBody {
  TextScanned scan;
};

struct ReadyBody {
  WorkerReady ready;
};

struct ByeBody {
  std::string reason;
};

struct HeartbeatBody {
  double send_wall = 0;
  // A worker's: the times its link to the master broke and was made again (what crossed the
  // broken connection may be lost). 0 from the master.
  int64_t link_reconnects = 0;
  // A worker reading its part of the text: the bytes read so far (progress; 0 otherwise).
  uint64_t text_read = 0;
};

WireMessage PackHello(const Envelope& envelope, const HelloBody& body);
WireMessage PackAssign(const Envelope& envelope, const AssignBody& body);
WireMessage PackReady(const Envelope& envelope, const ReadyBody& body);
// A ROUND's z and a REPLY's w go as doubles, or float32 when lean; where the vector is mostly
// zeros (active-set Newton's points and products), as its nonzero entries' positions and values
// (when that is under 3/4 of the dense bytes). Either way each entry reads back as it went.
// The bytes a vector so takes on the wire:
std::size_t VectorFrameBytes(const SharedVector& values, bool lean);
// The z (and resume vectors) are shared, not copied, when they go dense as doubles.
WireMessage PackRound(const Envelope& envelope, const RoundRequest& request);
// With `lean`, w goes as float32 (the worker answers a lean ROUND in kind); UnpackReply
// reads either.
WireMessage PackReply(const Envelope& envelope, const WorkerReply& reply, bool lean = false);
WireMessage PackBye(const Envelope& envelope, const ByeBody& body);
WireMessage PackHeartbeat(const Envelope& envelope, const HeartbeatBody& body);
WireMessage PackScanned(const Envelope& envelope, const ScannedBody& body);

// Each checks that the message has the type and frame layout of its body.
Result<HelloBody> UnpackHello(const WireMessage& message);
Result<AssignBody> UnpackAssign(const WireMessage& message);
Result<ReadyBody> UnpackReady(const WireMessage& message);
// `model_size` is the expected length of z, w and the resume vectors: the model's, or in the
// general form the worker's support's.
Result<RoundRequest> UnpackRound(const WireMessage& message, std::size_t model_size);
Result<WorkerReply> UnpackReply(const WireMessage& message, std::size_t model_size);
Result<ByeBody> UnpackBye(const WireMessage& message);
Result<HeartbeatBody> UnpackHeartbeat(const WireMessage& message);
Result<ScannedBody> UnpackScanned(const WireMessage& message);

}  // namespace nimbus
