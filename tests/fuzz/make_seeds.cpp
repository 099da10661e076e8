// Writes the seed corpora that come from nimbus's own writers: shards and a manifest of a
// LIBSVM file split in two, and one encoded message of every type (header frame, then the
// payload frames, back to back: the layout wire_fuzz.cpp reads).
//
// usage: fuzz_make_seeds DATA.svm CORPUS_DIR   (DATA.svm: a small file from nimbus gen)
#include <cstdio>
#include <fstream>
#include <string>

#include "nimbus/checkpoint/checkpoint.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/data/manifest.h"
#include "nimbus/data/store.h"
#include "nimbus/wire/codec.h"

namespace {

using namespace nimbus;

void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_make_seeds: %s\n", what.c_str());
  std::exit(1);
}

void WriteFile(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) Fail("cannot write " + path);
}

void WriteMessage(const std::string& path, const WireMessage& message) {
  std::string bytes;
  for (const Frame& frame : Encode(message)) bytes += frame.text();
  WriteFile(path, bytes);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) Fail("usage: fuzz_make_seeds DATA.svm CORPUS_DIR");
  const std::string corpus = argv[2];
  Result<Dataset> data = ReadLibsvmFile(argv[1]);
  if (!data.ok()) Fail(data.status().ToString());
  DirectoryStore store(corpus + "/.split");
  const std::string directories = corpus + "/.split " + corpus + "/shard " + corpus + "/manifest " + corpus + "/wire " +
                                  corpus + "/checkpoint";
  if (std::system(("mkdir -p " + directories).c_str()) != 0) {
    Fail("cannot make the corpus directories");
  }
  Result<Manifest> manifest = WriteShards(*data, 2, "seed.svm", store);
  if (!manifest.ok()) Fail(manifest.status().ToString());
  for (int i = 0; i < 2; ++i) {
    Result<std::shared_ptr<const Blob>> blob = store.Get(ShardKey(i));
    if (!blob.ok()) Fail(blob.status().ToString());
    WriteFile(corpus + "/shard/seed-" + std::to_string(i), (*blob)->text());
  }
  WriteFile(corpus + "/manifest/seed", ManifestToJson(*manifest));

  Envelope envelope;
  envelope.run_id = 0x1234;
  envelope.worker = 1;
  envelope.invocation = 2;
  envelope.round = 3;
  WriteMessage(corpus + "/wire/hello", PackHello(envelope, {1.5, 2.5, 42}));
  AssignBody assign;
  assign.store_uri = "/tmp/shards";
  assign.shard_key = "shard-00001.bin";
  assign.rows = 270;
  assign.cols = 13;
  assign.general_form = 1;
  WriteMessage(corpus + "/wire/assign", PackAssign(envelope, assign));
  // A part of text, planned: two files, a range of one, the plan's renumbered features.
  TextPart part;
  part.files = {{"/data", "a.svm", 1000, 0}, {"s3://bucket/p", "b.svm.gz", 400, 1}};
  part.pieces = {{0, 500, 1000}, {1, 0, 400}};
  TextPlanned plan;
  plan.class_values = {-1, 1};
  plan.source_cols = 1000;
  plan.features = std::make_shared<const std::vector<uint32_t>>(std::vector<uint32_t>{3, 17, 999});
  plan.first_row = 20;
  plan.rows = 30;
  plan.nnz = 90;
  part.plan = plan;
  assign.text = part;
  WriteMessage(corpus + "/wire/assign-text", PackAssign(envelope, assign));
  assign.text.reset();
  RelayGroup group;
  group.shards = {{"shard-00000.bin", 7, 10, 30, 4096}, {"shard-00001.bin", 0, 12, 33, 4096}};
  group.fanout = 2;
  group.listen = "tcp://0.0.0.0:0";
  group.launch = "ssh {host} nimbus worker {args}";
  group.hosts = {"w1", "w2"};
  assign.relay = group;
  WriteMessage(corpus + "/wire/assign-relay", PackAssign(envelope, assign));
  assign.relay.reset();
  ScannedBody scanned;
  scanned.scan.rows = 30;
  scanned.scan.nnz = 90;
  scanned.scan.max_index = 1000;
  scanned.scan.labels = {-1, 1};
  scanned.scan.label_rows = {12, 18};
  scanned.scan.features = {3, 17, 999};
  WriteMessage(corpus + "/wire/scanned", PackScanned(envelope, scanned));
  ReadyBody ready;
  ready.ready.rows = 135;
  ready.ready.support = std::make_shared<std::vector<uint32_t>>(std::vector<uint32_t>{0, 2, 5});
  WriteMessage(corpus + "/wire/ready", PackReady(envelope, ready));
  RoundRequest round;
  round.z = std::vector<double>{0.5, -1.0, 2.0};
  WriteMessage(corpus + "/wire/round", PackRound(envelope, round));
  round.lean = true;
  auto resume = std::make_shared<ResumeState>();
  resume->u = {1, 2, 3};
  round.resume = resume;
  WriteMessage(corpus + "/wire/round-lean-resume", PackRound(envelope, round));
  RoundRequest sparse;  // mostly zeros: its nonzero entries alone
  sparse.kind = RoundKind::kHessianVector;
  std::vector<double> few(40, 0.0);
  few[7] = 0.5;
  few[31] = -2.0;
  sparse.z = few;
  WriteMessage(corpus + "/wire/round-sparse", PackRound(envelope, sparse));
  sparse.lean = true;
  WriteMessage(corpus + "/wire/round-sparse-lean", PackRound(envelope, sparse));
  RoundRequest column;  // the column method's: the rows' derivatives, and the block's question
  column.kind = RoundKind::kColumnStep;
  column.z = std::vector<double>{0.1, -0.2, 0.3, 0.05, 0.05, 0.02};
  column.query = std::vector<double>{0, 2, 1, 0, 0.01, 0, 20, 0.1, 1, 0, 0, 2, 0, 2, 0.5, 3};
  WriteMessage(corpus + "/wire/round-column", PackRound(envelope, column));
  WorkerReply reply;
  reply.w = std::vector<double>{0.25, 0.5, -4.0};
  reply.scalars.valid = true;
  WriteMessage(corpus + "/wire/reply", PackReply(envelope, reply));
  WriteMessage(corpus + "/wire/reply-lean", PackReply(envelope, reply, true));
  WorkerReply sparse_reply;
  sparse_reply.w = few;
  sparse_reply.scalars.valid = true;
  WriteMessage(corpus + "/wire/reply-sparse", PackReply(envelope, sparse_reply));
  WorkerReply failed;
  failed.status = ReplyStatus::kFailed;
  failed.error = "cannot resume";
  WriteMessage(corpus + "/wire/reply-failed", PackReply(envelope, failed));
  WriteMessage(corpus + "/wire/bye", PackBye(envelope, {"the run is over"}));
  WriteMessage(corpus + "/wire/heartbeat", PackHeartbeat(envelope, {7.0}));
  // A checkpoint of three workers, one of which has answered a single round.
  Checkpoint checkpoint;
  checkpoint.state.next_round = 4;
  checkpoint.state.z = std::vector<double>{0.5, -1.5, 0, 2};
  checkpoint.state.z_last = std::vector<double>{0.25, -1, 0, 1.5};
  checkpoint.state.rho = checkpoint.state.rho_last = checkpoint.state.rho_previous = 0.3;
  checkpoint.state.alpha = 1.6;
  using V = std::vector<double>;
  checkpoint.state.workers = {{10, 30, V{1, 2}, V{0.5, 1}}, {11, 29, V{3, 4, 5}, {}}, {9, 27, V{6}, V{7}}};
  checkpoint.arguments = {"--data", "d.svm", "--l1", "1e-4"};
  checkpoint.working_directory = "/tmp";
  WriteFile(corpus + "/checkpoint/seed", EncodeCheckpoint(checkpoint));
  if (std::system(("rm -rf " + corpus + "/.split").c_str()) != 0) Fail("cannot remove the split");
  return 0;
}
