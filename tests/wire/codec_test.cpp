// The wire format: every message survives a round trip bit for bit, and every kind of damage
// is refused with a reason (never trusted, never a crash).
#include "nimbus/wire/codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace nimbus {
namespace {

Envelope TestEnvelope(MessageType type) {
  Envelope envelope;
  envelope.type = type;
  envelope.run_id = 0x1234567890abcdefULL;
  envelope.worker = 3;
  envelope.invocation = 7;
  envelope.round = 42;
  return envelope;
}

// Encodes then decodes through plain byte copies, as a socket would deliver them.
WireMessage Transmit(const WireMessage& message) {
  std::vector<Frame> frames;
  for (const Frame& frame : Encode(message)) frames.push_back(Frame::Copy(frame.data(), frame.size()));
  Result<WireMessage> decoded = Decode(std::move(frames));
  EXPECT_TRUE(decoded.ok()) << decoded.status().ToString();
  return decoded.ok() ? *decoded : WireMessage{};
}

std::shared_ptr<const std::vector<double>> Vector(std::vector<double> values) {
  return std::make_shared<const std::vector<double>>(std::move(values));
}

TEST(CodecTest, HeaderCarriesTheEnvelope) {
  const WireMessage received = Transmit(PackHeartbeat(TestEnvelope(MessageType::kHeartbeat), {12.5, 3}));
  EXPECT_EQ(received.envelope.type, MessageType::kHeartbeat);
  EXPECT_EQ(received.envelope.run_id, 0x1234567890abcdefULL);
  EXPECT_EQ(received.envelope.worker, 3u);
  EXPECT_EQ(received.envelope.invocation, 7u);
  EXPECT_EQ(received.envelope.round, 42);
  EXPECT_EQ(UnpackHeartbeat(received)->send_wall, 12.5);
  EXPECT_EQ(UnpackHeartbeat(received)->link_reconnects, 3);
  // The header is the documented 72 bytes, little-endian, starting with "NMBW".
  const std::vector<Frame> frames = Encode(PackHeartbeat(TestEnvelope(MessageType::kHeartbeat), {0}));
  ASSERT_EQ(frames[0].size(), kWireHeaderBytes);
  EXPECT_EQ(std::memcmp(frames[0].data(), "NMBW", 4), 0);
}

TEST(CodecTest, HelloAssignReadyByeRoundTrip) {
  const HelloBody hello = UnpackHello(Transmit(PackHello(TestEnvelope(MessageType::kHello), {1.5, 2.5, 777}))).value();
  EXPECT_EQ(hello.process_start_wall, 1.5);
  EXPECT_EQ(hello.send_wall, 2.5);
  EXPECT_EQ(hello.pid, 777);

  AssignBody assign;
  assign.store_uri = "/data/shards dir";
  assign.shard_key = "shard-00003.bin";
  assign.shard_checksum = 0xfeedULL;
  assign.loss = "squared_hinge";
  assign.l1 = 1e-5;
  assign.l2 = 0.25;
  assign.intercept = 1;
  assign.rows = 1000;
  assign.cols = 77;
  assign.local_solver = 1;
  assign.general_form = 1;
  assign.heartbeat_seconds = 0.5;
  assign.master_timeout_seconds = 9;
  assign.faults = "0.125 30 0.5 2 1 4 2 5 99";  // opaque to the wire (worker/fault_injection.h)
  assign.classes = 3;
  assign.multinomial = 1;
  assign.class_weights = {0.5, 2, 1};
  assign.copies = 3;
  assign.copy_scales = {1.5, 1.25, 1};
  assign.folds = {0, 1, 1, 0, 1};
  const AssignBody back = UnpackAssign(Transmit(PackAssign(TestEnvelope(MessageType::kAssign), assign))).value();
  EXPECT_EQ(back.store_uri, assign.store_uri);
  EXPECT_EQ(back.shard_key, assign.shard_key);
  EXPECT_EQ(back.shard_checksum, assign.shard_checksum);
  EXPECT_EQ(back.loss, "squared_hinge");
  EXPECT_EQ(back.l1, 1e-5);
  EXPECT_EQ(back.l2, 0.25);
  EXPECT_EQ(back.intercept, 1);
  EXPECT_EQ(back.rows, 1000);
  EXPECT_EQ(back.cols, 77);
  EXPECT_EQ(back.classes, 3);
  EXPECT_EQ(back.multinomial, 1);
  EXPECT_EQ(back.class_weights, assign.class_weights);
  EXPECT_EQ(back.copies, 3);
  EXPECT_EQ(back.copy_scales, assign.copy_scales);
  EXPECT_EQ(back.folds, assign.folds);
  EXPECT_EQ(back.class_weights, (std::vector<double>{0.5, 2, 1}));
  EXPECT_EQ(back.local_solver, 1);
  EXPECT_EQ(back.general_form, 1);
  EXPECT_EQ(back.heartbeat_seconds, 0.5);
  EXPECT_EQ(back.master_timeout_seconds, 9);
  EXPECT_EQ(back.faults, "0.125 30 0.5 2 1 4 2 5 99");
  EXPECT_FALSE(back.relay.has_value());

  ReadyBody ready;
  ready.ready = {3, 100, 77, 900, 12.5, 0.25, 10.0, 10.5, 11.0, 11.5, 7, nullptr};
  const WorkerReady r = UnpackReady(Transmit(PackReady(TestEnvelope(MessageType::kReady), ready)))->ready;
  EXPECT_EQ(r.support, nullptr);  // the dense form
  EXPECT_EQ(r.worker, 3);
  EXPECT_EQ(r.rows, 100);
  EXPECT_EQ(r.cols, 77);
  EXPECT_EQ(r.nnz, 900);
  EXPECT_EQ(r.curvature_trace, 12.5);
  EXPECT_EQ(r.load_seconds, 0.25);
  EXPECT_EQ(r.hello_wall, 11.0);
  EXPECT_EQ(r.invocation, 7u);

  EXPECT_EQ(UnpackBye(Transmit(PackBye(TestEnvelope(MessageType::kBye), {"lifetime: 1 s"})))->reason, "lifetime: 1 s");

  // The general form: the support travels once, with READY.
  ready.ready.support = std::make_shared<std::vector<uint32_t>>(std::vector<uint32_t>{0, 5, 6, 4000000000u});
  const WorkerReady general = UnpackReady(Transmit(PackReady(TestEnvelope(MessageType::kReady), ready)))->ready;
  ASSERT_NE(general.support, nullptr);
  EXPECT_EQ(*general.support, *ready.ready.support);
  ready.ready.support = std::make_shared<std::vector<uint32_t>>(std::vector<uint32_t>{0, 5, 5});
  Result<ReadyBody> unsorted = UnpackReady(Transmit(PackReady(TestEnvelope(MessageType::kReady), ready)));
  ASSERT_FALSE(unsorted.ok());
  EXPECT_NE(unsorted.status().message().find("does not ascend"), std::string::npos);
}

TEST(CodecTest, RoundRoundTripsWithAndWithoutResumeState) {
  RoundRequest request;
  request.round = 9;
  request.z = Vector({1.0, -2.0, 3.5});
  request.rho = 0.125;
  request.relaxation = 1.6;
  request.inner_tolerance = 1e-7;
  request.inner_relative_tolerance = 0.3;
  RoundRequest back = UnpackRound(Transmit(PackRound(TestEnvelope(MessageType::kRound), request)), 3).value();
  EXPECT_EQ(back.round, 9);
  EXPECT_EQ(back.z, request.z);
  EXPECT_EQ(back.rho, 0.125);
  EXPECT_EQ(back.relaxation, 1.6);
  EXPECT_EQ(back.inner_tolerance, 1e-7);
  EXPECT_EQ(back.inner_relative_tolerance, 0.3);
  EXPECT_EQ(back.resume, nullptr);

  auto resume = std::make_shared<ResumeState>();
  resume->u = {0.5, 0.25, -1};
  resume->x = {4, 5, 6};
  resume->x_relaxed = {7, 8, 9};
  resume->rho_of_u = 2.0;
  request.resume = resume;
  back = UnpackRound(Transmit(PackRound(TestEnvelope(MessageType::kRound), request)), 3).value();
  ASSERT_NE(back.resume, nullptr);
  EXPECT_EQ(back.resume->u, resume->u);
  EXPECT_EQ(back.resume->x, resume->x);
  EXPECT_EQ(back.resume->x_relaxed, resume->x_relaxed);
  EXPECT_EQ(back.resume->rho_of_u, 2.0);

  // The dual alone.
  resume->x.clear();
  resume->x_relaxed.clear();
  back = UnpackRound(Transmit(PackRound(TestEnvelope(MessageType::kRound), request)), 3).value();
  ASSERT_NE(back.resume, nullptr);
  EXPECT_EQ(back.resume->u, resume->u);
  EXPECT_TRUE(back.resume->x.empty());
}

// Newton's rounds: an evaluation, a product with and without its point, and the replies of
// two vectors (gradient and diagonal) and of one.
TEST(CodecTest, NewtonRoundsAndRepliesRoundTrip) {
  RoundRequest evaluate;
  evaluate.round = 4;
  evaluate.kind = RoundKind::kEvaluate;
  evaluate.z = Vector({0.5, -1.0});
  RoundRequest back = UnpackRound(Transmit(PackRound(TestEnvelope(MessageType::kRound), evaluate)), 2).value();
  EXPECT_EQ(back.kind, RoundKind::kEvaluate);
  EXPECT_EQ(back.z, evaluate.z);
  EXPECT_TRUE(back.point.empty());

  RoundRequest product;
  product.round = 5;
  product.kind = RoundKind::kHessianVector;
  product.z = Vector({1.0, 2.0});
  product.point_round = 4;
  back = UnpackRound(Transmit(PackRound(TestEnvelope(MessageType::kRound), product)), 2).value();
  EXPECT_EQ(back.kind, RoundKind::kHessianVector);
  EXPECT_EQ(back.point_round, 4);
  EXPECT_TRUE(back.point.empty());
  EXPECT_FALSE(back.on_support);
  product.on_support = true;  // the working set's product
  EXPECT_TRUE(UnpackRound(Transmit(PackRound(TestEnvelope(MessageType::kRound), product)), 2).value().on_support);
  product.on_support = false;
  product.point = Vector({0.5, -1.0});
  back = UnpackRound(Transmit(PackRound(TestEnvelope(MessageType::kRound), product)), 2).value();
  EXPECT_EQ(back.point, product.point);
  // A kept ADMM state never rides on a Newton round; a point only on a product.
  product.resume = std::make_shared<ResumeState>(ResumeState{{1, 2}, {}, {}, 1.0});
  back = UnpackRound(Transmit(PackRound(TestEnvelope(MessageType::kRound), product)), 2).value();
  EXPECT_EQ(back.resume, nullptr);
  EXPECT_EQ(back.point, product.point);
  evaluate.point = product.point;
  back = UnpackRound(Transmit(PackRound(TestEnvelope(MessageType::kRound), evaluate)), 2).value();
  EXPECT_TRUE(back.point.empty());

  WorkerReply gradient;
  gradient.round = 4;
  gradient.w = Vector({1, 2, 3, 4});
  gradient.w_vectors = 2;
  gradient.scalars.loss_at_z = 0.25;
  WorkerReply reply = UnpackReply(Transmit(PackReply(TestEnvelope(MessageType::kReply), gradient)), 2).value();
  EXPECT_EQ(reply.w, gradient.w);
  EXPECT_EQ(reply.w_vectors, 2);
  EXPECT_EQ(reply.scalars.loss_at_z, 0.25);
  // Two vectors where one is expected (or the other way round) do not fit.
  EXPECT_FALSE(UnpackReply(Transmit(PackReply(TestEnvelope(MessageType::kReply), gradient)), 4).ok());
}

// Cross-validation's score rounds: the model and a question of any length go out, figures of
// any length come back; a score's figures must be whole doubles.
TEST(CodecTest, ScoreRoundsAndTheirFiguresRoundTrip) {
  RoundRequest score;
  score.round = 9;
  score.kind = RoundKind::kScore;
  score.z = Vector({0.5, -1.0, 2.0});
  score.query = Vector({9, 1, 0, 4, 2, 17});
  RoundRequest back = UnpackRound(Transmit(PackRound(TestEnvelope(MessageType::kRound), score)), 3).value();
  EXPECT_EQ(back.kind, RoundKind::kScore);
  EXPECT_EQ(back.z, score.z);
  EXPECT_EQ(back.query, score.query);
  score.query = SharedVector();
  EXPECT_TRUE(UnpackRound(Transmit(PackRound(TestEnvelope(MessageType::kRound), score)), 3).value().query.empty());
  EXPECT_FALSE(UnpackRound(Transmit(PackRound(TestEnvelope(MessageType::kRound), score)), 2).ok());  // z of 3, not 2

  WorkerReply figures;
  figures.round = 9;
  figures.w = Vector({1, 2, 3, 4, 5, 6, 7});
  figures.w_vectors = 0;
  const WorkerReply reply = UnpackReply(Transmit(PackReply(TestEnvelope(MessageType::kReply), figures)), 3).value();
  EXPECT_EQ(reply.w, figures.w);
  EXPECT_EQ(reply.w_vectors, 0);
  // Figures never go lean (float32 would lose counts), even when the round was: found by
  // fuzz_wire, an empty score reply packed lean could not be read back (regressions/wire).
  const WorkerReply asked_lean =
      UnpackReply(Transmit(PackReply(TestEnvelope(MessageType::kReply), figures, /*lean=*/true)), 3).value();
  EXPECT_EQ(asked_lean.w, figures.w);
  figures.w = SharedVector();
  EXPECT_TRUE(UnpackReply(Transmit(PackReply(TestEnvelope(MessageType::kReply), figures, /*lean=*/true)), 3).ok());
}

// A column round's z is the rows' derivatives, as long as they are (not the model's length), and
// travels in whole doubles even when asked lean: the line search needs them exact.
TEST(CodecTest, ColumnRoundsCarryTheirRowsDerivativesWhole) {
  RoundRequest step;
  step.round = 4;
  step.kind = RoundKind::kColumnStep;
  step.lean = true;
  step.z = Vector({1.0 / 3.0, -2.5e-7, 0.0, 0.0, 1e-300});  // five doubles, for a model of 3
  step.query = Vector({0, 2, 1, 0, 0.01, 0, 20, 0.1, 1, 0, 0, 2, 0, 2, 0.5, 3});
  const RoundRequest back = UnpackRound(Transmit(PackRound(TestEnvelope(MessageType::kRound), step)), 3).value();
  EXPECT_EQ(back.kind, RoundKind::kColumnStep);
  EXPECT_EQ(back.z.ToVector(), step.z.ToVector());
  EXPECT_EQ(back.query, step.query);
  step.z = SharedVector();  // a margins round: no derivatives
  EXPECT_TRUE(UnpackRound(Transmit(PackRound(TestEnvelope(MessageType::kRound), step)), 3).value().z.empty());

  WorkerReply answer;
  answer.round = 4;
  answer.w = Vector({0.5, -1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0});
  answer.w_vectors = 0;
  EXPECT_EQ(UnpackReply(Transmit(PackReply(TestEnvelope(MessageType::kReply), answer, /*lean=*/true)), 3).value().w,
            answer.w);
}

TEST(CodecTest, LeanVectorsHalveTheBytesAndStayWithinFloatRounding) {
  RoundRequest request;
  request.z = Vector({1.0 / 3.0, -2.5e-7, 123456.789, 0.0, -1e30});
  request.lean = true;
  const WireMessage lean = PackRound(TestEnvelope(MessageType::kRound), request);
  EXPECT_EQ(lean.payload[1].size(), 5 * sizeof(float));
  const RoundRequest back = UnpackRound(Transmit(lean), 5).value();
  EXPECT_TRUE(back.lean);
  for (std::size_t i = 0; i < 5; ++i) {
    // Round to nearest: within half a unit in the last place of a float, 2^-24 relative.
    EXPECT_LE(std::abs(back.z[i] - request.z[i]), std::ldexp(std::abs(request.z[i]), -24)) << i;
  }
  // A worker answers in kind, and the master reads it as doubles again.
  WorkerReply reply;
  reply.w = std::vector<double>{0.1, -7.25};
  const WireMessage lean_reply = PackReply(TestEnvelope(MessageType::kReply), reply, /*lean=*/true);
  EXPECT_EQ(lean_reply.payload[1].size(), 2 * sizeof(float));
  const WorkerReply reply_back = UnpackReply(Transmit(lean_reply), 2).value();
  EXPECT_EQ(reply_back.w[0], static_cast<double>(0.1f));
  EXPECT_EQ(reply_back.w[1], -7.25);
  // An entry beyond float32's range sends the vector as doubles, exactly.
  request.z = Vector({1.0, 1e300});
  const WireMessage wide = PackRound(TestEnvelope(MessageType::kRound), request);
  EXPECT_EQ(wide.payload[1].size(), 2 * sizeof(double));
  const RoundRequest wide_back = UnpackRound(Transmit(wide), 2).value();
  EXPECT_FALSE(wide_back.lean);
  EXPECT_EQ(wide_back.z[1], 1e300);
  // A lean z of the wrong length is refused like any other.
  request.z = Vector({1.0, 2.0, 3.0});
  Result<RoundRequest> wrong = UnpackRound(Transmit(PackRound(TestEnvelope(MessageType::kRound), request)), 4);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("z has 12 bytes, expected 16 (float32)"), std::string::npos)
      << wrong.status().message();
}

// A vector that is mostly zeros (active-set Newton's products and points) travels as its
// nonzero entries' positions and values, and comes back bit for bit (-0.0 and NaN too); lean,
// as float32 values. A score's figures stay dense. A damaged sparse vector is refused.
TEST(CodecTest, MostlyZeroVectorsTravelAsTheirNonzerosExactly) {
  std::vector<double> sparse(1000, 0.0);
  sparse[3] = 1.0 / 3.0;
  sparse[500] = -0.0;
  sparse[999] = std::nan("");
  RoundRequest request;
  request.kind = RoundKind::kHessianVector;
  request.z = Vector(sparse);
  const WireMessage message = PackRound(TestEnvelope(MessageType::kRound), request);
  EXPECT_EQ(message.payload[1].size(), 8 + 3 * (4 + 8));  // the count, then positions and doubles
  const RoundRequest back = UnpackRound(Transmit(message), 1000).value();
  EXPECT_FALSE(back.lean);
  EXPECT_EQ(std::memcmp(back.z.data(), sparse.data(), sparse.size() * sizeof(double)), 0);

  request.lean = true;
  const WireMessage lean = PackRound(TestEnvelope(MessageType::kRound), request);
  EXPECT_EQ(lean.payload[1].size(), 8 + 3 * (4 + 4));
  const RoundRequest lean_back = UnpackRound(Transmit(lean), 1000).value();
  EXPECT_TRUE(lean_back.lean);
  EXPECT_EQ(lean_back.z[3], static_cast<double>(static_cast<float>(1.0 / 3.0)));
  EXPECT_TRUE(std::signbit(lean_back.z[500]));
  EXPECT_TRUE(std::isnan(lean_back.z[999]));
  EXPECT_EQ(lean_back.z[4], 0.0);
  // A double below float32's range arrives as zero, so it is not sent at all (found by
  // fuzz_wire: counted as nonzero, it made a second packing differ from the first).
  std::vector<double> tiny = sparse;
  tiny[10] = 1e-50;
  request.z = Vector(tiny);
  EXPECT_EQ(PackRound(TestEnvelope(MessageType::kRound), request).payload[1].size(), 8 + 3 * (4 + 4));
  EXPECT_EQ(UnpackRound(Transmit(PackRound(TestEnvelope(MessageType::kRound), request)), 1000).value().z[10], 0.0);
  request.lean = false;
  EXPECT_EQ(PackRound(TestEnvelope(MessageType::kRound), request).payload[1].size(), 8 + 4 * (4 + 8));
  request.z = Vector(sparse);

  WorkerReply reply;
  reply.w = std::vector<double>(sparse.begin(), sparse.end());
  const WireMessage sparse_reply = PackReply(TestEnvelope(MessageType::kReply), reply);
  EXPECT_EQ(sparse_reply.payload[1].size(), 8 + 3 * (4 + 8));
  const WorkerReply reply_back = UnpackReply(Transmit(sparse_reply), 1000).value();
  EXPECT_EQ(std::memcmp(reply_back.w.data(), sparse.data(), sparse.size() * sizeof(double)), 0);
  reply.w_vectors = 0;  // a score's figures: their count is the frame's size
  const WorkerReply score_back = UnpackReply(Transmit(PackReply(TestEnvelope(MessageType::kReply), reply)), 0).value();
  EXPECT_EQ(score_back.w.size(), 1000u);

  // Damaged: positions out of order, past the end, and a count the frame does not hold.
  auto entry = [](uint64_t count, std::vector<uint32_t> positions, std::size_t values) {
    std::string bytes(reinterpret_cast<const char*>(&count), sizeof count);
    bytes.append(reinterpret_cast<const char*>(positions.data()), positions.size() * sizeof(uint32_t));
    bytes.append(values * sizeof(double), '\0');
    return bytes;
  };
  for (const std::string& bad : {entry(3, {500, 3, 999}, 3), entry(3, {3, 500, 1000}, 3), entry(4, {3, 500, 999}, 3),
                                 std::string("1234")}) {
    WireMessage damaged = Transmit(message);
    damaged.payload[1] = Frame::Copy(bad);
    Result<RoundRequest> refused = UnpackRound(damaged, 1000);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("sparse"), std::string::npos) << refused.status().message();
  }
}

TEST(CodecTest, ReplyRoundTripsBitForBit) {
  WorkerReply reply;
  reply.worker = 3;
  reply.invocation = 7;
  reply.round = 42;
  reply.w = std::vector<double>{0.1, 1.0 / 3.0, -0.0, 1e-300};
  reply.scalars = {true, 1.5, 2.5, 3.5, 0.693};
  reply.timings.compute_seconds = 0.25;
  reply.timings.solve_seconds = 0.2;
  reply.timings.local_iterations = 3;
  reply.timings.cg_iterations = 11;
  reply.timings.data_passes = 17;
  reply.timings.start_wall = 100.5;
  reply.timings.end_wall = 100.75;
  const WorkerReply back = UnpackReply(Transmit(PackReply(TestEnvelope(MessageType::kReply), reply)), 4).value();
  EXPECT_EQ(back.worker, 3);
  EXPECT_EQ(back.invocation, 7u);
  EXPECT_EQ(back.round, 42);
  EXPECT_EQ(back.status, ReplyStatus::kOk);
  ASSERT_EQ(back.w.size(), 4u);
  EXPECT_EQ(std::memcmp(back.w.data(), reply.w.data(), 4 * sizeof(double)), 0);
  EXPECT_TRUE(back.scalars.valid);
  EXPECT_EQ(back.scalars.primal_squared, 1.5);
  EXPECT_EQ(back.scalars.loss_at_z, 0.693);
  EXPECT_EQ(back.timings.cg_iterations, 11);
  EXPECT_EQ(back.timings.data_passes, 17);
  EXPECT_EQ(back.timings.end_wall, 100.75);

  WorkerReply failed;
  failed.status = ReplyStatus::kFailed;
  failed.error = "cannot resume: u has 2 entries";
  const WorkerReply failed_back = UnpackReply(Transmit(PackReply(TestEnvelope(MessageType::kReply), failed)), 4).value();
  EXPECT_EQ(failed_back.status, ReplyStatus::kFailed);
  EXPECT_EQ(failed_back.error, failed.error);
  EXPECT_TRUE(failed_back.w.empty());
}

TEST(CodecTest, ZIsSharedNotCopied) {
  RoundRequest request;
  request.z = Vector(std::vector<double>(1000, 1.0));
  const WireMessage message = PackRound(TestEnvelope(MessageType::kRound), request);
  EXPECT_EQ(reinterpret_cast<const double*>(message.payload[1].data()), request.z.data());
}

// ---- Damage ----

std::vector<Frame> Valid() { return Encode(PackHeartbeat(TestEnvelope(MessageType::kHeartbeat), {1})); }

std::string Bytes(const Frame& frame) { return std::string(frame.text()); }

std::vector<Frame> WithHeaderByte(std::size_t offset, char value) {
  std::vector<Frame> frames = Valid();
  std::string header = Bytes(frames[0]);
  header[offset] = value;
  frames[0] = Frame::Adopt(header);
  return frames;
}

void ExpectRefused(std::vector<Frame> frames, const std::string& reason) {
  Result<WireMessage> decoded = Decode(std::move(frames));
  ASSERT_FALSE(decoded.ok()) << "accepted: " << reason;
  EXPECT_NE(decoded.status().message().find(reason), std::string::npos) << decoded.status().message();
}

TEST(CodecTest, DamagedMessagesAreRefused) {
  ExpectRefused({}, "header");
  ExpectRefused(WithHeaderByte(0, 'X'), "magic");
  constexpr int kFuture = kWireVersion + 1;  // a version from the future
  ExpectRefused(WithHeaderByte(4, static_cast<char>(kFuture)), "protocol version " + std::to_string(kFuture));
  ExpectRefused(WithHeaderByte(6, 99), "unknown message type 99");
  ExpectRefused(WithHeaderByte(6, 0), "unknown message type 0");

  std::vector<Frame> short_header = Valid();
  short_header[0] = Frame::Copy(Bytes(short_header[0]).substr(0, 40));
  ExpectRefused(std::move(short_header), "header");

  std::vector<Frame> truncated = Valid();
  truncated[1] = Frame::Copy(Bytes(truncated[1]).substr(0, 3));
  ExpectRefused(std::move(truncated), "truncated");

  std::vector<Frame> missing = Valid();
  missing.pop_back();
  ExpectRefused(std::move(missing), "frame count");

  std::vector<Frame> extra = Valid();
  extra.push_back(Frame::Copy("junk"));
  ExpectRefused(std::move(extra), "frame count");
}

TEST(CodecTest, BodiesOfTheWrongShapeAreRefused) {
  // A heartbeat is not a hello.
  const WireMessage heartbeat = Transmit(PackHeartbeat(TestEnvelope(MessageType::kHeartbeat), {1}));
  EXPECT_FALSE(UnpackHello(heartbeat).ok());
  // z of the wrong length for the model.
  RoundRequest request;
  request.z = Vector({1, 2, 3});
  const WireMessage round = Transmit(PackRound(TestEnvelope(MessageType::kRound), request));
  Result<RoundRequest> wrong = UnpackRound(round, 4);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("z has 24 bytes, expected 32"), std::string::npos) << wrong.status().message();
  // A field block of the wrong size.
  WireMessage hello = Transmit(PackHello(TestEnvelope(MessageType::kHello), {1, 2, 3}));
  hello.payload[0] = Frame::Copy("short");
  EXPECT_FALSE(UnpackHello(hello).ok());
  // A heartbeat counting a negative number of reconnects.
  EXPECT_FALSE(UnpackHeartbeat(Transmit(PackHeartbeat(TestEnvelope(MessageType::kHeartbeat), {1, -1}))).ok());
  // A reply whose status is not one we know.
  WorkerReply reply;
  reply.w = std::vector<double>{1, 2};
  WireMessage bad_status = Transmit(PackReply(TestEnvelope(MessageType::kReply), reply));
  std::string fields = Bytes(bad_status.payload[0]);
  fields[0] = 9;
  bad_status.payload[0] = Frame::Adopt(fields);
  EXPECT_FALSE(UnpackReply(bad_status, 2).ok());
  // An ASSIGN without a shard key.
  AssignBody assign;
  WireMessage no_key = Transmit(PackAssign(TestEnvelope(MessageType::kAssign), assign));
  no_key.payload[1] = Frame::Copy("no newline here");
  EXPECT_FALSE(UnpackAssign(no_key).ok());
}

// A relay's ASSIGN carries its group: every shard with its checksum and sizes, the runtime of
// its workers, its fanout, where it binds, how its workers on other hosts start and where they
// dial; a malformed group is refused.
TEST(CodecTest, ARelaysGroupRoundTripsAndAMalformedOneIsRefused) {
  AssignBody assign;
  assign.store_uri = "/data/shards";
  assign.faults = "0 0 0 -1 -1 -1 -1 0 7";
  RelayGroup group;
  group.shards = {{"shard-00000.bin", 0xabcdefULL, 10, 100, 4096}, {"shard-00001.bin", 0, 11, 99, 4000}};
  group.threads = true;
  group.fanout = 4;
  group.listen = "tcp://10.0.0.7:0";
  group.launch = "ssh {host} nimbus worker {args}";
  group.hosts = {"w1", "w2"};
  group.advertise_host = "10.0.0.7";
  assign.relay = group;
  const AssignBody back = UnpackAssign(Transmit(PackAssign(TestEnvelope(MessageType::kAssign), assign))).value();
  ASSERT_TRUE(back.relay.has_value());
  EXPECT_EQ(*back.relay, group);
  EXPECT_EQ(back.faults, assign.faults);
  EXPECT_EQ(back.store_uri, "/data/shards");

  for (const std::string relay : {"[]", "{\"shards\":[],\"threads\":false,\"fanout\":0,\"listen\":\"x\"}",
                                  "{\"shards\":[[\"k\",1,-2,3,4]],\"threads\":false,\"fanout\":0,\"listen\":\"x\"}",
                                  "{\"shards\":[[\"k\",1,2,3]],\"threads\":false,\"fanout\":0,\"listen\":\"x\"}",
                                  "{\"shards\":[[\"k\",1,2,3,4]],\"threads\":false,\"fanout\":0,\"listen\":\"x\","
                                  "\"launch\":\"l\",\"hosts\":[\"a\",\"b\"],\"advertise_host\":\"\"}",
                                  "not json"}) {
    WireMessage bad = Transmit(PackAssign(TestEnvelope(MessageType::kAssign), assign));
    bad.payload[1] = Frame::Copy("/data\nkey\nlogistic\n" + relay + "\nfaults");
    EXPECT_FALSE(UnpackAssign(bad).ok()) << relay;
  }
}

// Found by fuzz_wire: a SCANNED message whose field counts 2^62 features came with an empty
// feature list; 2^62 times 4 bytes wraps around to 0, the sizes seemed to agree, and making
// room for the list threw. A count is checked against the frame by division now.
TEST(CodecTest, AFeatureCountThatWrapsAroundIsRefused) {
  ScannedBody scanned;
  scanned.scan.rows = 2;
  scanned.scan.max_index = 10;
  const WireMessage valid = Transmit(PackScanned(TestEnvelope(MessageType::kScanned), scanned));
  ASSERT_TRUE(UnpackScanned(valid).ok());
  for (const int64_t features : {int64_t{1} << 62, (int64_t{1} << 62) + 1}) {
    WireMessage wrapped = valid;
    std::string fields = Bytes(wrapped.payload[0]);
    std::memcpy(fields.data() + fields.size() - sizeof features, &features, sizeof features);  // the last field
    wrapped.payload[0] = Frame::Adopt(fields);
    wrapped.payload[2] = Frame::Copy(std::string(features == int64_t{1} << 62 ? 0 : 4, '\0'));
    const Result<ScannedBody> refused = UnpackScanned(wrapped);
    ASSERT_FALSE(refused.ok()) << features;
    EXPECT_NE(refused.status().message().find("the feature list's size differs"), std::string::npos)
        << refused.status().message();
  }
}

}  // namespace
}  // namespace nimbus
