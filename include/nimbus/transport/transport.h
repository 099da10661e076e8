// Framed messages with deadlines between the master and its workers, over ZeroMQ (tcp:// or
// inproc://). The master binds a ROUTER socket; each worker connects a DEALER out to it, so
// workers need no inbound connectivity (serverless functions have none).
//
// As ps-lite's van does, the public Send()/Receive() do the accounting and the checks around
// protected virtual frame I/O: every message that is malformed, of another protocol version
// or of another run is dropped and counted, never handed on.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nimbus/core/clock.h"
#include "nimbus/core/status.h"
#include "nimbus/wire/codec.h"

namespace nimbus {

struct TransportStats {
  uint64_t messages_sent = 0;
  uint64_t bytes_sent = 0;
  uint64_t messages_received = 0;  // valid messages of this run
  uint64_t bytes_received = 0;
  uint64_t dropped_malformed = 0;  // bad header, version, type, frame sizes
  uint64_t dropped_foreign = 0;    // another run id
  uint64_t dropped_stale = 0;      // counted by the layer above: old invocations or rounds
  std::string last_drop;           // why the last message was dropped
};

struct Incoming {
  std::string peer;  // the sender's routing id (ROUTER side); empty on the DEALER side
  WireMessage message;
  uint64_t bytes = 0;  // the message's size on the wire
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Sends; on success, `bytes` (if given) is the message's size on the wire.
  Status Send(const std::string& peer, const WireMessage& message, uint64_t* bytes = nullptr);
  // The next valid message of this run, or DeadlineExceeded.
  Result<Incoming> Receive(Deadline deadline);
  void CountStale(const std::string& why);
  const TransportStats& stats() const { return stats_; }
  uint64_t run_id() const { return run_id_; }

 protected:
  explicit Transport(uint64_t run_id) : run_id_(run_id) {}
  struct RawIncoming {
    std::string peer;
    std::vector<Frame> frames;
  };
  virtual Status SendFrames(const std::string& peer, const std::vector<Frame>& frames) = 0;
  // One multipart message, or DeadlineExceeded.
  virtual Result<RawIncoming> ReceiveFrames(Deadline deadline) = 0;

 private:
  uint64_t run_id_;
  TransportStats stats_;
};

// The ZeroMQ context of this process (one I/O thread, shared by every socket).
class ZmqContext {
 public:
  static std::shared_ptr<ZmqContext> Create();
  ~ZmqContext();
  void* get() const { return context_; }

 private:
  ZmqContext() = default;
  void* context_ = nullptr;
};

// The master's end: a bound ROUTER socket.
class RouterTransport final : public Transport {
 public:
  // Binds `endpoint` ("tcp://127.0.0.1:0" picks a free port). Inbound frames larger than
  // `max_frame_bytes` are refused by ZeroMQ itself.
  static Result<std::unique_ptr<RouterTransport>> Bind(std::shared_ptr<ZmqContext> context, const std::string& endpoint,
                                                       uint64_t run_id, int64_t max_frame_bytes);
  ~RouterTransport() override;
  // The endpoint actually bound (with the chosen port).
  const std::string& endpoint() const { return endpoint_; }

 protected:
  Status SendFrames(const std::string& peer, const std::vector<Frame>& frames) override;
  Result<RawIncoming> ReceiveFrames(Deadline deadline) override;

 private:
  RouterTransport(std::shared_ptr<ZmqContext> context, void* socket, uint64_t run_id)
      : Transport(run_id), context_(std::move(context)), socket_(socket) {}
  std::shared_ptr<ZmqContext> context_;
  void* socket_;
  std::string endpoint_;
};

// A worker's end: a DEALER socket connected out to the master.
class DealerTransport final : public Transport {
 public:
  static Result<std::unique_ptr<DealerTransport>> Connect(std::shared_ptr<ZmqContext> context,
                                                          const std::string& endpoint, const std::string& routing_id,
                                                          uint64_t run_id);
  ~DealerTransport() override;

 protected:
  Status SendFrames(const std::string& peer, const std::vector<Frame>& frames) override;
  Result<RawIncoming> ReceiveFrames(Deadline deadline) override;

 private:
  DealerTransport(std::shared_ptr<ZmqContext> context, void* socket, uint64_t run_id)
      : Transport(run_id), context_(std::move(context)), socket_(socket) {}
  std::shared_ptr<ZmqContext> context_;
  void* socket_;
};

}  // namespace nimbus
