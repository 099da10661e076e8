// The ZeroMQ transport over real sockets on 127.0.0.1: messages both ways, deadlines, and the
// checks that drop and count malformed and foreign traffic.
#include "nimbus/transport/transport.h"

#include <gtest/gtest.h>
#include <zmq.h>

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
  header[4] = 9;
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

}  // namespace
}  // namespace nimbus
