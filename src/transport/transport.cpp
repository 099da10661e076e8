#include "nimbus/transport/transport.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zmq.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

namespace nimbus {
namespace {

Status ZmqError(const std::string& what) { return Unavailable(what + ": " + zmq_strerror(zmq_errno())); }

// ZeroMQ frees a zero-copy frame from its I/O thread: the hint holds a reference to the
// frame's owner until then.
void ReleaseOwner(void* /*data*/, void* hint) { delete static_cast<std::shared_ptr<const void>*>(hint); }

Status SendFrame(void* socket, const Frame& frame, bool more) {
  zmq_msg_t message;
  auto* hint = new std::shared_ptr<const void>(frame.owner());
  // zmq_msg_init_data takes a non-const pointer but never writes through it.
  if (zmq_msg_init_data(&message, const_cast<std::byte*>(frame.data()), frame.size(), ReleaseOwner, hint) != 0) {
    delete hint;
    return ZmqError("zmq_msg_init_data");
  }
  while (zmq_msg_send(&message, socket, more ? ZMQ_SNDMORE : 0) < 0) {
    if (zmq_errno() == EINTR) continue;
    const Status error = ZmqError("send");
    zmq_msg_close(&message);
    return error;
  }
  return Status::Ok();
}

Status SendCopy(void* socket, const std::string& bytes, bool more) {
  while (zmq_send(socket, bytes.data(), bytes.size(), more ? ZMQ_SNDMORE : 0) < 0) {
    if (zmq_errno() != EINTR) return ZmqError("send");
  }
  return Status::Ok();
}

// Waits for the socket to become readable until the deadline. A deadline already past still
// finds a message that is waiting (a poll that does not wait): after a stall of this process
// its queue holds what came meanwhile, heartbeats included.
Status WaitReadable(void* socket, Deadline deadline) {
  while (true) {
    zmq_pollitem_t item{socket, 0, ZMQ_POLLIN, 0};
    const double remaining = deadline.RemainingSeconds();
    const long timeout_ms = remaining <= 0 ? 0 : static_cast<long>(std::min(remaining * 1000.0 + 1, 3600.0 * 1000));
    const int ready = zmq_poll(&item, 1, timeout_ms);
    if (ready < 0) {
      if (zmq_errno() == EINTR) continue;
      return ZmqError("poll");
    }
    if (ready > 0) return Status::Ok();
    if (remaining <= 0) return DeadlineExceeded("no message before the deadline");
  }
}

// Every part of one multipart message, the frames held without a copy.
Result<std::vector<Frame>> ReceiveParts(void* socket) {
  std::vector<Frame> parts;
  while (true) {
    auto message = std::shared_ptr<zmq_msg_t>(new zmq_msg_t, [](zmq_msg_t* m) {
      zmq_msg_close(m);
      delete m;
    });
    zmq_msg_init(message.get());
    while (zmq_msg_recv(message.get(), socket, 0) < 0) {
      if (zmq_errno() != EINTR) return ZmqError("receive");
    }
    const bool more = zmq_msg_more(message.get()) != 0;
    void* data = zmq_msg_data(message.get());
    const std::size_t size = zmq_msg_size(message.get());
    parts.push_back(Frame::View(std::move(message), data, size));
    if (!more) return parts;
  }
}

uint64_t BytesOf(const std::vector<Frame>& frames) {
  uint64_t bytes = 0;
  for (const Frame& frame : frames) bytes += frame.size();
  return bytes;
}

void* NewSocket(ZmqContext& context, int type) {
  void* socket = zmq_socket(context.get(), type);
  if (socket != nullptr) {
    const int linger = 0;  // closing never waits for unsent messages
    zmq_setsockopt(socket, ZMQ_LINGER, &linger, sizeof linger);
  }
  return socket;
}

}  // namespace

Status Transport::Send(const std::string& peer, const WireMessage& message, uint64_t* bytes) {
  WireMessage stamped = message;
  stamped.envelope.run_id = run_id_;
  const std::vector<Frame> frames = Encode(stamped);
  NIMBUS_RETURN_IF_ERROR(SendFrames(peer, frames));
  ++stats_.messages_sent;
  stats_.bytes_sent += BytesOf(frames);
  if (bytes != nullptr) *bytes = BytesOf(frames);
  return Status::Ok();
}

Result<Incoming> Transport::Receive(Deadline deadline) {
  while (true) {
    NIMBUS_ASSIGN_OR_RETURN(RawIncoming raw, ReceiveFrames(deadline));
    const uint64_t bytes = BytesOf(raw.frames);
    Result<WireMessage> message = Decode(std::move(raw.frames));
    if (!message.ok()) {
      ++stats_.dropped_malformed;
      stats_.last_drop = message.status().message();
      continue;
    }
    if (message->envelope.run_id != run_id_) {
      ++stats_.dropped_foreign;
      stats_.last_drop = "a message of another run";
      continue;
    }
    ++stats_.messages_received;
    stats_.bytes_received += bytes;
    return Incoming{std::move(raw.peer), std::move(message).value(), bytes};
  }
}

void Transport::CountStale(const std::string& why) {
  ++stats_.dropped_stale;
  stats_.last_drop = why;
}

bool CurveAvailable() { return zmq_has("curve") != 0; }

Result<CurveKeyPair> NewCurveKeyPair() {
  if (!CurveAvailable()) {
    return FailedPrecondition("this libzmq has no CURVE security; run with --insecure on loopback");
  }
  char public_key[41];
  char secret_key[41];
  if (zmq_curve_keypair(public_key, secret_key) != 0) return ZmqError("cannot make a CURVE key pair");
  return CurveKeyPair{public_key, secret_key};
}

Status CheckCurveKey(const std::string& key, const std::string& what) {
  uint8_t decoded[32];
  if (key.size() != 40 || zmq_z85_decode(decoded, key.c_str()) == nullptr) {
    return InvalidArgument(what + ": not a CURVE key (40 characters of Z85)");
  }
  return Status::Ok();
}

Result<RunKeys> RunKeys::Generate() {
  RunKeys keys;
  NIMBUS_ASSIGN_OR_RETURN(keys.server.server, NewCurveKeyPair());
  NIMBUS_ASSIGN_OR_RETURN(keys.client.client, NewCurveKeyPair());
  keys.server.client_public = keys.client.client.public_key;
  keys.client.server_public = keys.server.server.public_key;
  return keys;
}

bool IsLoopbackEndpoint(const std::string& endpoint) {
  if (endpoint.rfind("inproc://", 0) == 0 || endpoint.rfind("ipc://", 0) == 0) return true;
  if (endpoint.rfind("tcp://", 0) != 0) return false;
  const std::string host = endpoint.substr(6, endpoint.rfind(':') == std::string::npos ? std::string::npos
                                                                                        : endpoint.rfind(':') - 6);
  return host.rfind("127.", 0) == 0 || host == "localhost" || host == "[::1]";
}

Result<std::string> LocalAddressToward(const std::string& endpoint) {
  const std::size_t colon = endpoint.rfind(':');
  if (endpoint.rfind("tcp://", 0) != 0 || colon == std::string::npos || colon < 6) {
    return InvalidArgument("'" + endpoint + "': not tcp://HOST:PORT");
  }
  const std::string host = endpoint.substr(6, colon - 6), port = endpoint.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (const int error = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); error != 0) {
    return InvalidArgument("'" + endpoint + "': " + gai_strerror(error));
  }
  // A datagram socket's connect only picks the route and the source address.
  const int socket_fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in local{};
  socklen_t length = sizeof local;
  const bool routed = socket_fd >= 0 && ::connect(socket_fd, found->ai_addr, found->ai_addrlen) == 0 &&
                      ::getsockname(socket_fd, reinterpret_cast<sockaddr*>(&local), &length) == 0;
  const int saved_errno = errno;
  freeaddrinfo(found);
  if (socket_fd >= 0) ::close(socket_fd);
  if (!routed) return Unavailable("no route to '" + endpoint + "': " + std::strerror(saved_errno));
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &local.sin_addr, text, sizeof text);
  return std::string(text);
}

// The ZAP handler: a REP socket on the context's fixed inproc endpoint, answering each
// handshake's request in its own thread. Requests (RFC 27): version, request id, domain,
// address, identity, mechanism, then the mechanism's credentials (CURVE: the client's
// 32-byte public key, which the handshake has already proven the client holds the secret of).
class ZmqContext::Authenticator {
 public:
  static Result<std::unique_ptr<Authenticator>> Start(void* context) {
    void* socket = zmq_socket(context, ZMQ_REP);
    if (socket == nullptr) return ZmqError("cannot create the ZAP socket");
    const int linger = 0;
    zmq_setsockopt(socket, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_bind(socket, "inproc://zeromq.zap.01") != 0) {
      const Status error = ZmqError("cannot start the ZAP handler");
      zmq_close(socket);
      return error;
    }
    std::unique_ptr<Authenticator> authenticator(new Authenticator(socket));
    authenticator->thread_ = std::thread([a = authenticator.get()] { a->Serve(); });
    return authenticator;
  }
  ~Authenticator() {
    stop_.store(true);
    thread_.join();
    zmq_close(socket_);
  }
  void Admit(const std::string& domain, const std::string& key) {
    std::lock_guard lock(mutex_);
    domains_[domain] = {key, 0};
  }
  void Forget(const std::string& domain) {
    std::lock_guard lock(mutex_);
    domains_.erase(domain);
  }
  int64_t Refused(const std::string& domain) const {
    std::lock_guard lock(mutex_);
    const auto it = domains_.find(domain);
    return it == domains_.end() ? 0 : it->second.refused;
  }

 private:
  struct Domain {
    std::string key;  // 32 bytes
    int64_t refused = 0;
  };
  explicit Authenticator(void* socket) : socket_(socket) {}

  void Serve() {
    while (!stop_.load()) {
      zmq_pollitem_t item{socket_, 0, ZMQ_POLLIN, 0};
      if (zmq_poll(&item, 1, 100) <= 0) continue;  // the timeout lets the stop flag be seen
      std::vector<std::string> request;
      bool more = true;
      while (more) {
        zmq_msg_t part;
        zmq_msg_init(&part);
        if (zmq_msg_recv(&part, socket_, 0) < 0) {
          zmq_msg_close(&part);
          break;
        }
        request.emplace_back(static_cast<const char*>(zmq_msg_data(&part)), zmq_msg_size(&part));
        more = zmq_msg_more(&part) != 0;
        zmq_msg_close(&part);
      }
      if (more || request.size() < 2) continue;
      const bool admitted = Decide(request);
      const std::vector<std::string> reply{"1.0", request[1], admitted ? "200" : "400",
                                           admitted ? "OK" : "not a client of this run", "", ""};
      for (std::size_t i = 0; i < reply.size(); ++i) {
        zmq_send(socket_, reply[i].data(), reply[i].size(), i + 1 < reply.size() ? ZMQ_SNDMORE : 0);
      }
    }
  }

  bool Decide(const std::vector<std::string>& request) {
    std::lock_guard lock(mutex_);
    if (request.size() < 7 || request[0] != "1.0") return false;
    const auto it = domains_.find(request[2]);
    if (it == domains_.end()) return false;
    const bool admitted = request[5] == "CURVE" && request[6] == it->second.key;
    if (!admitted) ++it->second.refused;
    return admitted;
  }

  void* socket_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::mutex mutex_;
  std::map<std::string, Domain> domains_;
};

std::shared_ptr<ZmqContext> ZmqContext::Create() {
  std::shared_ptr<ZmqContext> context(new ZmqContext());
  context->context_ = zmq_ctx_new();
  return context;
}

ZmqContext::~ZmqContext() {
  authenticator_.reset();  // its socket must close before the context can end
  if (context_ != nullptr) zmq_ctx_term(context_);
}

Status ZmqContext::AdmitOnly(const std::string& domain, const std::string& client_public) {
  NIMBUS_RETURN_IF_ERROR(CheckCurveKey(client_public, "the run's client key"));
  uint8_t key[32];
  zmq_z85_decode(key, client_public.c_str());
  if (authenticator_ == nullptr) {
    NIMBUS_ASSIGN_OR_RETURN(authenticator_, Authenticator::Start(context_));
  }
  authenticator_->Admit(domain, std::string(reinterpret_cast<const char*>(key), sizeof key));
  return Status::Ok();
}

void ZmqContext::Forget(const std::string& domain) {
  if (authenticator_ != nullptr) authenticator_->Forget(domain);
}

int64_t ZmqContext::Refused(const std::string& domain) const {
  return authenticator_ == nullptr ? 0 : authenticator_->Refused(domain);
}

Result<std::unique_ptr<RouterTransport>> RouterTransport::Bind(std::shared_ptr<ZmqContext> context,
                                                               const std::string& endpoint, uint64_t run_id,
                                                               int64_t max_frame_bytes,
                                                               const ServerCredentials& credentials) {
  void* socket = NewSocket(*context, ZMQ_ROUTER);
  if (socket == nullptr) return ZmqError("cannot create a ROUTER socket");
  std::unique_ptr<RouterTransport> transport(new RouterTransport(context, socket, run_id));
  if (credentials.secure()) {
    NIMBUS_RETURN_IF_ERROR(CheckCurveKey(credentials.server.secret_key, "the master's secret key"));
    // One ZAP domain per socket, so that routers sharing a context admit their own clients.
    static std::atomic<uint64_t> sockets{0};
    transport->domain_ = "nimbus." + std::to_string(run_id) + "." + std::to_string(sockets.fetch_add(1));
    NIMBUS_RETURN_IF_ERROR(context->AdmitOnly(transport->domain_, credentials.client_public));
    const int server = 1;
    zmq_setsockopt(socket, ZMQ_CURVE_SERVER, &server, sizeof server);
    zmq_setsockopt(socket, ZMQ_CURVE_SECRETKEY, credentials.server.secret_key.c_str(), 40);
    zmq_setsockopt(socket, ZMQ_ZAP_DOMAIN, transport->domain_.data(), transport->domain_.size());
  }
  const int mandatory = 1;  // sending to a peer that is gone is an error, not a silent drop
  zmq_setsockopt(socket, ZMQ_ROUTER_MANDATORY, &mandatory, sizeof mandatory);
  zmq_setsockopt(socket, ZMQ_MAXMSGSIZE, &max_frame_bytes, sizeof max_frame_bytes);
  const int send_timeout_ms = 10000;
  zmq_setsockopt(socket, ZMQ_SNDTIMEO, &send_timeout_ms, sizeof send_timeout_ms);
  if (zmq_bind(socket, endpoint.c_str()) != 0) return ZmqError("cannot listen on " + endpoint);
  char bound[256];
  std::size_t length = sizeof bound;
  zmq_getsockopt(socket, ZMQ_LAST_ENDPOINT, bound, &length);
  transport->endpoint_ = bound;
  return transport;
}

RouterTransport::~RouterTransport() {
  zmq_close(socket_);
  if (!domain_.empty()) context_->Forget(domain_);
}

Status RouterTransport::SendFrames(const std::string& peer, const std::vector<Frame>& frames) {
  NIMBUS_RETURN_IF_ERROR(SendCopy(socket_, peer, true).WithContext("to " + peer));
  for (std::size_t i = 0; i < frames.size(); ++i) {
    NIMBUS_RETURN_IF_ERROR(SendFrame(socket_, frames[i], i + 1 < frames.size()));
  }
  return Status::Ok();
}

Result<Transport::RawIncoming> RouterTransport::ReceiveFrames(Deadline deadline) {
  NIMBUS_RETURN_IF_ERROR(WaitReadable(socket_, deadline));
  NIMBUS_ASSIGN_OR_RETURN(std::vector<Frame> parts, ReceiveParts(socket_));
  RawIncoming raw;
  raw.peer = std::string(parts.front().text());
  parts.erase(parts.begin());
  raw.frames = std::move(parts);
  return raw;
}

Result<std::unique_ptr<DealerTransport>> DealerTransport::Connect(std::shared_ptr<ZmqContext> context,
                                                                  const std::string& endpoint,
                                                                  const std::string& routing_id, uint64_t run_id,
                                                                  const ClientCredentials& credentials) {
  void* socket = NewSocket(*context, ZMQ_DEALER);
  if (socket == nullptr) return ZmqError("cannot create a DEALER socket");
  std::unique_ptr<DealerTransport> transport(new DealerTransport(context, socket, run_id));
  if (credentials.secure()) {
    NIMBUS_RETURN_IF_ERROR(CheckCurveKey(credentials.server_public, "the master's public key"));
    NIMBUS_RETURN_IF_ERROR(CheckCurveKey(credentials.client.public_key, "the client public key"));
    NIMBUS_RETURN_IF_ERROR(CheckCurveKey(credentials.client.secret_key, "the client secret key"));
    zmq_setsockopt(socket, ZMQ_CURVE_SERVERKEY, credentials.server_public.c_str(), 40);
    zmq_setsockopt(socket, ZMQ_CURVE_PUBLICKEY, credentials.client.public_key.c_str(), 40);
    zmq_setsockopt(socket, ZMQ_CURVE_SECRETKEY, credentials.client.secret_key.c_str(), 40);
  }
  zmq_setsockopt(socket, ZMQ_ROUTING_ID, routing_id.data(), routing_id.size());
  const int send_timeout_ms = 10000;
  zmq_setsockopt(socket, ZMQ_SNDTIMEO, &send_timeout_ms, sizeof send_timeout_ms);
  NIMBUS_RETURN_IF_ERROR(transport->WatchHandshakes());
  if (zmq_connect(socket, endpoint.c_str()) != 0) return ZmqError("cannot connect to " + endpoint);
  return transport;
}

// Before the connection is made, so that its first handshake is seen too.
Status DealerTransport::WatchHandshakes() {
  static std::atomic<uint64_t> monitors{0};
  const std::string address = "inproc://nimbus-dealer-monitor-" + std::to_string(monitors.fetch_add(1));
  if (zmq_socket_monitor(socket_, address.c_str(), ZMQ_EVENT_HANDSHAKE_SUCCEEDED) != 0) {
    return ZmqError("cannot monitor the link");
  }
  monitor_ = NewSocket(*context_, ZMQ_PAIR);
  if (monitor_ == nullptr || zmq_connect(monitor_, address.c_str()) != 0) return ZmqError("cannot monitor the link");
  return Status::Ok();
}

int64_t DealerTransport::Reconnects() {
  // Each event is two frames: 6 bytes (event, value), then the endpoint.
  zmq_msg_t frame;
  zmq_msg_init(&frame);
  while (zmq_msg_recv(&frame, monitor_, ZMQ_DONTWAIT) >= 0) {
    if (!zmq_msg_more(&frame)) ++handshakes_;
  }
  zmq_msg_close(&frame);
  return std::max<int64_t>(0, handshakes_ - 1);
}

DealerTransport::~DealerTransport() {
  if (monitor_ != nullptr) zmq_close(monitor_);
  zmq_socket_monitor(socket_, nullptr, 0);
  zmq_close(socket_);
}

Status DealerTransport::SendFrames(const std::string& /*peer*/, const std::vector<Frame>& frames) {
  for (std::size_t i = 0; i < frames.size(); ++i) {
    NIMBUS_RETURN_IF_ERROR(SendFrame(socket_, frames[i], i + 1 < frames.size()));
  }
  return Status::Ok();
}

Result<Transport::RawIncoming> DealerTransport::ReceiveFrames(Deadline deadline) {
  NIMBUS_RETURN_IF_ERROR(WaitReadable(socket_, deadline));
  NIMBUS_ASSIGN_OR_RETURN(std::vector<Frame> parts, ReceiveParts(socket_));
  return RawIncoming{"", std::move(parts)};
}

}  // namespace nimbus
