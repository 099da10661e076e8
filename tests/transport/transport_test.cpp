// The ZeroMQ transport over real sockets on 127.0.0.1: messages both ways, deadlines, and the
// checks that drop and count malformed and foreign traffic.
#include "nimbus/transport/transport.h"

#include <gtest/gtest.h>
#include <zmq.h>

#include <chrono>
#include <cstring>
#include <thread>

namespace nimbus {
namespace {

constexpr uint64_t kRun = 4242;

class TransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    context_ = ZmqContext::Create();
    Result<std::unique_ptr<RouterTransport>> router =
        RouterTransport::Bind(context_, "tcp://127.0.0.1:0", kRun, int64_t{1} << 24);
    ASSERT_TRUE(router.ok()) << router.status().ToString();
    router_ = std::move(router).value();
    ASSERT_EQ(router_->endpoint().rfind("tcp://127.0.0.1:", 0), 0u) << router_->endpoint();
  }

  std::unique_ptr<DealerTransport> Dealer(const std::string& id, uint64_t run = kRun) {
    Result<std::unique_ptr<DealerTransport>> dealer = DealerTransport::Connect(context_, router_->endpoint(), id, run);
    EXPECT_TRUE(dealer.ok()) << dealer.status().ToString();
    return dealer.ok() ? std::move(dealer).value() : nullptr;
  }

  static Envelope Hello(uint32_t worker) {
    Envelope envelope;
    envelope.worker = worker;
    envelope.invocation = 1;
    return envelope;
  }

  std::shared_ptr<ZmqContext> context_;
  std::unique_ptr<RouterTransport> router_;
};

TEST_F(TransportTest, MessagesGoBothWaysWithTheirPeer) {
  auto dealer = Dealer("w0.1");
  ASSERT_TRUE(dealer->Send("", PackHello(Hello(0), {1, 2, 3})).ok());
  Result<Incoming> hello = router_->Receive(Deadline::After(5));
  ASSERT_TRUE(hello.ok()) << hello.status().ToString();
  EXPECT_EQ(hello->peer, "w0.1");
  EXPECT_EQ(hello->message.envelope.type, MessageType::kHello);
  EXPECT_EQ(hello->message.envelope.run_id, kRun);  // stamped by Send

  // A large z goes out without a copy and arrives whole.
  RoundRequest request;
  request.round = 5;
  auto z = std::make_shared<std::vector<double>>(200000);
  for (std::size_t j = 0; j < z->size(); ++j) (*z)[j] = static_cast<double>(j) * 0.5;
  request.z = z;
  Envelope envelope = Hello(0);
  envelope.round = 5;
  ASSERT_TRUE(router_->Send("w0.1", PackRound(envelope, request)).ok());
  Result<Incoming> round = dealer->Receive(Deadline::After(5));
  ASSERT_TRUE(round.ok()) << round.status().ToString();
  Result<RoundRequest> back = UnpackRound(round->message, z->size());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->z.ToVector(), *z);
  EXPECT_EQ(router_->stats().messages_sent, 1u);
  EXPECT_GT(router_->stats().bytes_sent, z->size() * sizeof(double));
  EXPECT_EQ(dealer->stats().messages_received, 1u);
}

TEST_F(TransportTest, ReceiveEndsAtItsDeadline) {
  const Stopwatch watch;
  Result<Incoming> nothing = router_->Receive(Deadline::After(0.2));
  EXPECT_EQ(nothing.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_GE(watch.ElapsedSeconds(), 0.19);
  EXPECT_LT(watch.ElapsedSeconds(), 2.0);
}

// A deadline already past still takes what is waiting, without waiting for more: after a stall
// the queue holds the heartbeats of that time (remote_executor_test: a master that stalls).
TEST_F(TransportTest, APastDeadlineTakesWhatIsWaitingAndNothingMore) {
  auto dealer = Dealer("w0.1");
  ASSERT_TRUE(dealer->Send("", PackHello(Hello(0), {1, 2, 3})).ok());
  bool taken = false;  // looked for every 10 ms, for at most 5 s: it is waiting once it has come
  for (int look = 0; look < 500 && !taken; ++look) {
    taken = router_->Receive(Deadline::After(0)).ok();
    if (!taken) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(taken);
  const Stopwatch watch;
  EXPECT_EQ(router_->Receive(Deadline::After(0)).status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_LT(watch.ElapsedSeconds(), 1.0);
}

TEST_F(TransportTest, SendingToAPeerThatIsNotThereFails) {
  EXPECT_FALSE(router_->Send("nobody", PackBye(Hello(0), {"x"})).ok());
}

TEST_F(TransportTest, ForeignAndMalformedMessagesAreDroppedAndCounted) {
  auto stranger = Dealer("x", kRun + 1);  // another run
  ASSERT_TRUE(stranger->Send("", PackHello(Hello(0), {1, 2, 3})).ok());

  // Raw frames from a plain ZeroMQ socket: a wrong version, then a truncated payload.
  void* raw = zmq_socket(context_->get(), ZMQ_DEALER);
  ASSERT_EQ(zmq_connect(raw, router_->endpoint().c_str()), 0);
  auto send_raw = [&](std::vector<Frame> frames) {
    for (std::size_t i = 0; i < frames.size(); ++i) {
      zmq_send(raw, frames[i].data(), frames[i].size(), i + 1 < frames.size() ? ZMQ_SNDMORE : 0);
    }
  };
  Envelope envelope = Hello(0);
  envelope.run_id = kRun;
  std::vector<Frame> wrong_version = Encode(PackHello(envelope, {1, 2, 3}));
  std::string header(wrong_version[0].text());
  header[4] = static_cast<char>(kWireVersion + 1);  // a version this build does not speak
  wrong_version[0] = Frame::Adopt(header);
  send_raw(wrong_version);
  std::vector<Frame> truncated = Encode(PackHello(envelope, {1, 2, 3}));
  truncated[1] = Frame::Copy(std::string(truncated[1].text()).substr(0, 5));
  send_raw(truncated);
  send_raw({Frame::Copy("not a header at all")});

  // Then one good message, which is what Receive returns.
  auto worker = Dealer("w1.1");
  ASSERT_TRUE(worker->Send("", PackHello(Hello(1), {1, 2, 3})).ok());
  Result<Incoming> good = router_->Receive(Deadline::After(5));
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(good->peer, "w1.1");
  // All four bad ones came first on this connection order, or the good one overtook some of
  // them: drain until the counters settle.
  for (int i = 0; i < 20 && router_->stats().dropped_malformed + router_->stats().dropped_foreign < 4; ++i) {
    (void)router_->Receive(Deadline::After(0.05));
  }
  EXPECT_EQ(router_->stats().dropped_foreign, 1u);
  EXPECT_EQ(router_->stats().dropped_malformed, 3u);
  EXPECT_EQ(router_->stats().messages_received, 1u);
  zmq_close(raw);
}

Envelope HelloEnvelope() {
  Envelope envelope;
  envelope.invocation = 1;
  return envelope;
}

// A secured run: a ROUTER with the run's server keys, workers with its client keys.
class SecureTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(CurveAvailable());
    Result<RunKeys> keys = RunKeys::Generate();
    ASSERT_TRUE(keys.ok()) << keys.status().ToString();
    keys_ = *keys;
    context_ = ZmqContext::Create();
    Result<std::unique_ptr<RouterTransport>> router =
        RouterTransport::Bind(context_, "tcp://127.0.0.1:0", kRun, int64_t{1} << 24, keys_.server);
    ASSERT_TRUE(router.ok()) << router.status().ToString();
    router_ = std::move(router).value();
    ASSERT_TRUE(router_->secure());
  }

  // A client in a context of its own, as a worker process or an intruder would have.
  std::unique_ptr<DealerTransport> Client(const std::string& id, const ClientCredentials& credentials) {
    if (client_context_ == nullptr) client_context_ = ZmqContext::Create();
    Result<std::unique_ptr<DealerTransport>> dealer =
        DealerTransport::Connect(client_context_, router_->endpoint(), id, kRun, credentials);
    EXPECT_TRUE(dealer.ok()) << dealer.status().ToString();
    return dealer.ok() ? std::move(dealer).value() : nullptr;
  }

  // What an intruder would send: a HELLO to register and a REPLY with a poisoned w, both
  // well formed and of the right run.
  static void SendHelloAndReply(DealerTransport& client) {
    Envelope envelope;
    envelope.worker = 0;
    envelope.invocation = 1;
    (void)client.Send("", PackHello(envelope, {1, 2, 3}));
    WorkerReply reply;
    reply.round = 0;
    reply.w = std::vector<double>(100, 1e6);
    envelope.round = 0;
    (void)client.Send("", PackReply(envelope, reply));
  }

  RunKeys keys_;
  std::shared_ptr<ZmqContext> context_;
  std::shared_ptr<ZmqContext> client_context_;
  std::unique_ptr<RouterTransport> router_;
};

TEST_F(SecureTransportTest, AWorkerWithTheRunsKeysIsHeardAndAnswered) {
  auto worker = Client("w0.1", keys_.client);
  ASSERT_TRUE(worker->Send("", PackHello(HelloEnvelope(), {1, 2, 3})).ok());
  Result<Incoming> hello = router_->Receive(Deadline::After(5));
  ASSERT_TRUE(hello.ok()) << hello.status().ToString();
  EXPECT_EQ(hello->peer, "w0.1");
  ASSERT_TRUE(router_->Send("w0.1", PackBye(HelloEnvelope(), {"done"})).ok());
  Result<Incoming> answer = worker->Receive(Deadline::After(5));
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(answer->message.envelope.type, MessageType::kBye);
  EXPECT_EQ(router_->refused_clients(), 0);
}

TEST_F(SecureTransportTest, ClientsWithoutTheRunsKeysCanNeitherRegisterNorInjectAReply) {
  // 1. plaintext: the handshake fails on the mechanism, before any frame is read
  auto plaintext = Client("intruder.plain", {});
  // 2. the master's public key (which is not secret) with a key pair of its own
  ClientCredentials own_pair = keys_.client;
  own_pair.client = *NewCurveKeyPair();
  auto impostor = Client("intruder.pair", own_pair);
  // 3. the run's client public key without its secret (a made-up secret)
  ClientCredentials stolen_public = keys_.client;
  stolen_public.client.secret_key = NewCurveKeyPair()->secret_key;
  auto thief = Client("intruder.public", stolen_public);
  // 4. the right client keys for another master (a wrong server key)
  ClientCredentials other_master = keys_.client;
  other_master.server_public = NewCurveKeyPair()->public_key;
  auto misdirected = Client("intruder.server", other_master);
  for (DealerTransport* intruder : {plaintext.get(), impostor.get(), thief.get(), misdirected.get()}) {
    SendHelloAndReply(*intruder);
  }
  // Nothing of theirs arrives (bounded: 1.5 s of listening), and the ZAP handler refused
  // the key pair it was shown (the others fail earlier, in the handshake's cryptography).
  Result<Incoming> nothing = router_->Receive(Deadline::After(1.5));
  EXPECT_EQ(nothing.status().code(), StatusCode::kDeadlineExceeded)
      << (nothing.ok() ? "a message from " + nothing->peer + " got in" : nothing.status().ToString());
  EXPECT_EQ(router_->stats().messages_received, 0u);
  EXPECT_GE(router_->refused_clients(), 1);

  // The run's own worker still gets through, and only its messages arrive.
  auto worker = Client("w0.1", keys_.client);
  SendHelloAndReply(*worker);
  for (int i = 0; i < 2; ++i) {
    Result<Incoming> heard = router_->Receive(Deadline::After(5));
    ASSERT_TRUE(heard.ok()) << heard.status().ToString();
    EXPECT_EQ(heard->peer, "w0.1");
  }
  EXPECT_EQ(router_->Receive(Deadline::After(0.3)).status().code(), StatusCode::kDeadlineExceeded);
}

TEST_F(SecureTransportTest, KeysAreCheckedAndLoopbackIsRecognized) {
  EXPECT_FALSE(CheckCurveKey("short", "--server-key").ok());
  EXPECT_NE(CheckCurveKey("short", "--server-key").message().find("--server-key"), std::string::npos);
  EXPECT_FALSE(CheckCurveKey(std::string(40, '"'), "key").ok());  // not in the Z85 alphabet
  EXPECT_TRUE(CheckCurveKey(keys_.client.server_public, "key").ok());
  ClientCredentials broken = keys_.client;
  broken.client.secret_key = "x";
  EXPECT_FALSE(DealerTransport::Connect(context_, router_->endpoint(), "w", kRun, broken).ok());

  EXPECT_TRUE(IsLoopbackEndpoint("tcp://127.0.0.1:5555"));
  EXPECT_TRUE(IsLoopbackEndpoint("tcp://127.0.0.1:0"));
  EXPECT_TRUE(IsLoopbackEndpoint("tcp://localhost:1"));
  EXPECT_TRUE(IsLoopbackEndpoint("tcp://[::1]:1"));
  EXPECT_TRUE(IsLoopbackEndpoint("inproc://x"));
  EXPECT_FALSE(IsLoopbackEndpoint("tcp://0.0.0.0:5555"));
  EXPECT_FALSE(IsLoopbackEndpoint("tcp://*:5555"));
  EXPECT_FALSE(IsLoopbackEndpoint("tcp://10.0.0.1:5555"));
  EXPECT_FALSE(IsLoopbackEndpoint("tcp://eth0:5555"));
}

}  // namespace
}  // namespace nimbus
