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

// CurveZMQ (RFC 26): a key pair as Z85 text, 40 characters each.
struct CurveKeyPair {
  std::string public_key;
  std::string secret_key;
};
// True when this libzmq was built with CURVE.
bool CurveAvailable();
Result<CurveKeyPair> NewCurveKeyPair();
// OK when `key` is 40 characters of Z85 (a 32-byte key); the message names `what`.
Status CheckCurveKey(const std::string& key, const std::string& what);

// What a worker needs to join a secured run: the master's public key and the run's client
// key pair. Empty: plaintext (only for runs started with --insecure).
struct ClientCredentials {
  std::string server_public;
  CurveKeyPair client;
  bool secure() const { return !server_public.empty(); }
};
// What the master's socket needs: its own key pair and the one client key it admits.
struct ServerCredentials {
  CurveKeyPair server;
  std::string client_public;
  bool secure() const { return !server.secret_key.empty(); }
};
// Fresh keys for one run: the master keeps `server`, its workers get `client` with their
// invocation. A client proves it belongs to the run by holding the client secret key; the
// master proves itself by holding the server's.
struct RunKeys {
  ServerCredentials server;
  ClientCredentials client;
  static Result<RunKeys> Generate();
};

// True for endpoints no other host can reach: tcp on 127.0.0.0/8, localhost or [::1],
// inproc and ipc.
bool IsLoopbackEndpoint(const std::string& endpoint);

// This host's address on the route to a tcp://HOST:PORT endpoint (IPv4): where a process that
// dials it can be dialed back by others on that network, such as a relay by its workers. No
// packet is sent.
Result<std::string> LocalAddressToward(const std::string& endpoint);

// The ZeroMQ context of this process (one I/O thread, shared by every socket).
class ZmqContext {
 public:
  static std::shared_ptr<ZmqContext> Create();
  ~ZmqContext();
  void* get() const { return context_; }

  // The context's ZAP handler (RFC 27), started on first use: a CURVE server socket of
  // `domain` admits a client only if it proves it holds the secret key of `client_public`.
  Status AdmitOnly(const std::string& domain, const std::string& client_public);
  void Forget(const std::string& domain);
  // Handshakes of `domain` refused so far (a key other than the admitted one).
  int64_t Refused(const std::string& domain) const;

 private:
  ZmqContext() = default;
  class Authenticator;
  void* context_ = nullptr;
  std::unique_ptr<Authenticator> authenticator_;
};

// The master's end: a bound ROUTER socket.
class RouterTransport final : public Transport {
 public:
  // Binds `endpoint` ("tcp://127.0.0.1:0" picks a free port). Inbound frames larger than
  // `max_frame_bytes` are refused by ZeroMQ itself. With secure credentials every
  // connection is a CURVE handshake: a client without the run's client key never gets a
  // message through (it is refused before any frame reaches Receive), and all traffic is
  // encrypted.
  static Result<std::unique_ptr<RouterTransport>> Bind(std::shared_ptr<ZmqContext> context, const std::string& endpoint,
                                                       uint64_t run_id, int64_t max_frame_bytes,
                                                       const ServerCredentials& credentials = {});
  ~RouterTransport() override;
  // The endpoint actually bound (with the chosen port).
  const std::string& endpoint() const { return endpoint_; }
  bool secure() const { return !domain_.empty(); }
  // Clients refused at the handshake for a wrong key.
  int64_t refused_clients() const { return secure() ? context_->Refused(domain_) : 0; }

 protected:
  Status SendFrames(const std::string& peer, const std::vector<Frame>& frames) override;
  Result<RawIncoming> ReceiveFrames(Deadline deadline) override;

 private:
  RouterTransport(std::shared_ptr<ZmqContext> context, void* socket, uint64_t run_id)
      : Transport(run_id), context_(std::move(context)), socket_(socket) {}
  std::shared_ptr<ZmqContext> context_;
  void* socket_;
  std::string endpoint_;
  std::string domain_;  // the ZAP domain of a secure socket
};

// A worker's end: a DEALER socket connected out to the master.
class DealerTransport final : public Transport {
 public:
  static Result<std::unique_ptr<DealerTransport>> Connect(std::shared_ptr<ZmqContext> context,
                                                          const std::string& endpoint, const std::string& routing_id,
                                                          uint64_t run_id, const ClientCredentials& credentials = {});
  ~DealerTransport() override;
  // How often the connection broke and was made again since Connect (ZeroMQ reconnects by
  // itself, and what was crossing the broken connection is lost). Reads the socket's monitor:
  // call it from one thread only (any one; the counting socket is not the link's).
  int64_t Reconnects();

 protected:
  Status SendFrames(const std::string& peer, const std::vector<Frame>& frames) override;
  Result<RawIncoming> ReceiveFrames(Deadline deadline) override;

 private:
  Status WatchHandshakes();
  DealerTransport(std::shared_ptr<ZmqContext> context, void* socket, uint64_t run_id)
      : Transport(run_id), context_(std::move(context)), socket_(socket) {}
  std::shared_ptr<ZmqContext> context_;
  void* socket_;
  void* monitor_ = nullptr;  // the socket's handshakes, as ZeroMQ monitor events
  int64_t handshakes_ = 0;
};

}  // namespace nimbus
