#include "nimbus/transport/transport.h"

#include <zmq.h>

#include <algorithm>
#include <cerrno>
#include <climits>

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

// Waits for the socket to become readable until the deadline.
Status WaitReadable(void* socket, Deadline deadline) {
  while (true) {
    zmq_pollitem_t item{socket, 0, ZMQ_POLLIN, 0};
    const double remaining = deadline.RemainingSeconds();
    if (remaining <= 0) return DeadlineExceeded("no message before the deadline");
    const long timeout_ms = static_cast<long>(std::min(remaining * 1000.0 + 1, 3600.0 * 1000));
    const int ready = zmq_poll(&item, 1, timeout_ms);
    if (ready < 0) {
      if (zmq_errno() == EINTR) continue;
      return ZmqError("poll");
    }
    if (ready > 0) return Status::Ok();
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

std::shared_ptr<ZmqContext> ZmqContext::Create() {
  std::shared_ptr<ZmqContext> context(new ZmqContext());
  context->context_ = zmq_ctx_new();
  return context;
}

ZmqContext::~ZmqContext() {
  if (context_ != nullptr) zmq_ctx_term(context_);
}

Result<std::unique_ptr<RouterTransport>> RouterTransport::Bind(std::shared_ptr<ZmqContext> context,
                                                               const std::string& endpoint, uint64_t run_id,
                                                               int64_t max_frame_bytes) {
  void* socket = NewSocket(*context, ZMQ_ROUTER);
  if (socket == nullptr) return ZmqError("cannot create a ROUTER socket");
  std::unique_ptr<RouterTransport> transport(new RouterTransport(context, socket, run_id));
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

RouterTransport::~RouterTransport() { zmq_close(socket_); }

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
                                                                  const std::string& routing_id, uint64_t run_id) {
  void* socket = NewSocket(*context, ZMQ_DEALER);
  if (socket == nullptr) return ZmqError("cannot create a DEALER socket");
  std::unique_ptr<DealerTransport> transport(new DealerTransport(context, socket, run_id));
  zmq_setsockopt(socket, ZMQ_ROUTING_ID, routing_id.data(), routing_id.size());
  const int send_timeout_ms = 10000;
  zmq_setsockopt(socket, ZMQ_SNDTIMEO, &send_timeout_ms, sizeof send_timeout_ms);
  if (zmq_connect(socket, endpoint.c_str()) != 0) return ZmqError("cannot connect to " + endpoint);
  return transport;
}

DealerTransport::~DealerTransport() { zmq_close(socket_); }

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
