// Every way in to a training run, each against the split store's answer: the workers read
// their own parts of the text (byte ranges that end mid-line, an empty one, one of a single
// row; by Newton and by ADMM, on threads, processes and a launch command's workers), several files (plain, .gz, .zst, .xz), an S3 prefix read by ranged GETs from
// moto_server; a replaced worker reads its part again; and a bad line in a later worker's part
// is named by its file and line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e/e2e_support.h"
#include "nimbus/cloud/s3.h"
#include "nimbus/data/store.h"
#include "nimbus/data/text_input.h"

namespace nimbus::testing {
namespace {

using Json = nlohmann::json;

class WaysIn : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const CommandResult gen = RunNimbus({"gen", "--rows", "3000", "--cols", "400", "--nnz-per-row", "12", "--seed", "5",
                                         "--power-law", "1", "--out", dir_->File("data.svm")});
    ASSERT_EQ(gen.exit_code, 0) << gen.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  // The run's summary; `args` after the common ones.
  static Json Summary(std::vector<std::string> args) {
    const std::string summary = dir_->File("summary-" + std::to_string(++runs_) + ".json");
    std::vector<std::string> all = {"--l1", "1e-4", "--summary-json", summary};
    all.insert(all.end(), args.begin(), args.end());
    Train(all);
    return FileExists(summary) ? Json::parse(ReadTextFile(summary)) : Json();
  }
  // The objective of training on `shards` shards that `nimbus split` wrote from `data`.
  static double StoreObjective(const std::string& data, int shards) {
    const std::string store = dir_->File("store-" + std::to_string(++runs_));
    const CommandResult split = RunNimbus({"split", "--data", data, "--shards", std::to_string(shards), "--out", store});
    EXPECT_EQ(split.exit_code, 0) << split.err;
    return Summary({"--data", store})["objective"].get<double>();
  }
  static void ExpectSameOptimum(const Json& summary, double expected) {
    ASSERT_TRUE(summary.is_object());
    EXPECT_EQ(summary["termination"], "converged");
    EXPECT_NEAR(summary["objective"].get<double>(), expected, 1e-9 * expected);
  }

  static TempDir* dir_;
  static int runs_;
};

TempDir* WaysIn::dir_ = nullptr;
int WaysIn::runs_ = 0;

// The file in 3 and 5 byte ranges (cut mid-line), read by threads and by processes.
TEST_F(WaysIn, ByteRangesOfOneFileReachTheStoresOptimum) {
  const std::string data = dir_->File("data.svm");
  const std::string text = ReadTextFile(data);
  for (const int workers : {3, 5}) {
    // The cuts fall inside lines: each range begins after a line break it does not own.
    std::vector<TextFile> files = {{dir_->path(), "data.svm", text.size(), Compression::kNone, nullptr}};
    int mid_line = 0;
    for (const TextSlice& slice : SliceText(files, workers)) mid_line += text[slice.pieces[0].begin - (slice.pieces[0].begin > 0)] != '\n';
    EXPECT_GT(mid_line, 0);
    const double expected = StoreObjective(data, workers);
    for (const char* runtime : {"threads", "process"}) {
      SCOPED_TRACE(std::string(runtime) + ", " + std::to_string(workers) + " workers");
      ExpectSameOptimum(Summary({"--data", data, "--workers", std::to_string(workers), "--runtime", runtime}), expected);
    }
  }
}

// ADMM too: its answer from the text's byte ranges is its answer from the store (the same rows
// for each worker), on threads, worker processes and workers a launch command starts.
TEST_F(WaysIn, AdmmFromTheTextIsAdmmFromTheStore) {
  const std::string data = dir_->File("data.svm");
  const std::vector<std::string> admm = {"--algorithm", "admm", "--eps-rel", "1e-7", "--eps-abs", "1e-10", "--workers", "3"};
  const std::string store = dir_->File("store-admm");
  ASSERT_EQ(RunNimbus({"split", "--data", data, "--shards", "3", "--out", store}).exit_code, 0);
  std::vector<std::string> from_store = {"--data", store};
  from_store.insert(from_store.end(), admm.begin(), admm.end());
  const Json expected = Summary(from_store);
  ASSERT_TRUE(expected.is_object());
  EXPECT_NEAR(expected["objective"].get<double>(), StoreObjective(data, 3), 1e-6 * expected["objective"].get<double>());
  for (const std::vector<std::string>& runtime : std::vector<std::vector<std::string>>{
           {"--runtime", "threads"}, {"--runtime", "process"},
           {"--runtime", "command", "--launch", std::string(NIMBUS_BINARY) + " worker {args}"}}) {
    SCOPED_TRACE(runtime[1]);
    std::vector<std::string> args = {"--data", data};
    args.insert(args.end(), admm.begin(), admm.end());
    args.insert(args.end(), runtime.begin(), runtime.end());
    ExpectSameOptimum(Summary(args), expected["objective"].get<double>());
  }
}

// A first line longer than a third of the file: the middle worker's range lies inside it and
// owns no line, the last worker's holds one row. Both train, and the answer is the store's
// (whose split leaves the empty part out).
TEST_F(WaysIn, AnEmptyRangeAndARangeOfOneRow) {
  std::string text = "1";
  for (int j = 1; j <= 300; ++j) text += " " + std::to_string(j) + ":" + std::to_string(j % 7 + 1);
  text += "\n";
  const std::string rest = "-1 1:1 5:2\n1 2:1 9:3\n-1 3:2 250:1\n1 7:1\n";
  const std::string last = "-1 4:1 8:2 12:1\n";
  // Three ranges of a third each: the first holds the long line (its start), the second lies
  // inside it, the third begins past it.
  const std::size_t third = (text.size() + rest.size() + last.size()) / 3;
  ASSERT_GT(text.size(), 2 * third) << "the long line must cover the second range";
  const std::string path = dir_->File("long.svm");
  WriteTextFile(path, text + rest + last);
  const double expected = StoreObjective(path, 3);
  for (const char* runtime : {"threads", "process"}) {
    SCOPED_TRACE(runtime);
    const Json summary = Summary({"--data", path, "--workers", "3", "--runtime", runtime});
    ExpectSameOptimum(summary, expected);
    EXPECT_EQ(summary["rows"], 6);
  }
}

// A directory of files, plain and compressed three ways: the rows in the order of their
// names, as the concatenated file's; and the same files listed with commas.
TEST_F(WaysIn, SeveralFilesPlainAndCompressed) {
  const std::string text = ReadTextFile(dir_->File("data.svm"));
  std::vector<std::string> parts;
  std::size_t at = 0;
  for (int p = 0; p < 4; ++p) {
    const std::size_t end = p == 3 ? text.size() : text.find('\n', text.size() * (p + 1) / 4) + 1;
    parts.push_back(text.substr(at, end - at));
    at = end;
  }
  const std::string folder = dir_->File("parts");
  ASSERT_EQ(std::system(("mkdir -p " + folder).c_str()), 0);
  const std::vector<std::pair<std::string, std::string>> files = {
      {"a.svm", ""}, {"b.svm", "gzip"}, {"c.svm", "zstd -q --rm"}, {"d.svm", "xz"}};
  std::string listed;
  for (std::size_t p = 0; p < files.size(); ++p) {
    const std::string file = folder + "/" + files[p].first;
    WriteTextFile(file, parts[p]);
    if (!files[p].second.empty()) {
      ASSERT_EQ(std::system((files[p].second + " " + file).c_str()), 0) << files[p].second;
    }
  }
  for (const std::string& name : ListDirectory(folder)) listed += (listed.empty() ? "" : ",") + folder + "/" + name;
  ASSERT_EQ(ListDirectory(folder), (std::vector<std::string>{"a.svm", "b.svm.gz", "c.svm.zst", "d.svm.xz"}));
  const double expected = StoreObjective(folder, 4);
  EXPECT_NEAR(expected, StoreObjective(dir_->File("data.svm"), 4), 1e-6 * expected);  // same rows, other parts
  for (const char* runtime : {"threads", "process"}) {
    SCOPED_TRACE(runtime);
    ExpectSameOptimum(Summary({"--data", folder, "--workers", "4", "--runtime", runtime}), expected);
    ExpectSameOptimum(Summary({"--data", listed, "--workers", "4", "--runtime", runtime}), expected);
  }
}

// Text under an S3 prefix, read by ranged GETs (parts of 5 MB: the file's every range is a few
// GETs), by threads and by worker processes.
TEST_F(WaysIn, AnS3PrefixReadByRangedGets) {
  MotoServer server;
  server.ExportEnvironment();
  AwsConfig config;
  config.credentials = {"testing", "testing", ""};
  config.endpoint_url = server.endpoint();
  S3Client s3(config);
  ASSERT_TRUE(s3.CreateBucket("data").ok());
  const std::string text = ReadTextFile(dir_->File("data.svm"));
  const std::size_t half = text.find('\n', text.size() / 2) + 1;
  ASSERT_TRUE(s3.PutObject("data", "train/part-0.svm", text.substr(0, half)).ok());
  ASSERT_TRUE(s3.PutObject("data", "train/part-1.svm", text.substr(half)).ok());
  ASSERT_TRUE(s3.PutObject("data", "train/_SUCCESS", "").ok());
  const double expected = StoreObjective(dir_->File("data.svm"), 3);
  for (const char* runtime : {"threads", "process"}) {
    SCOPED_TRACE(runtime);
    const Json from_prefix = Summary({"--data", "s3://data/train", "--workers", "3", "--runtime", runtime});
    EXPECT_NEAR(from_prefix["objective"].get<double>(), expected, 1e-6 * expected);
    const Json from_object = Summary({"--data", "s3://data/train/part-0.svm,s3://data/train/part-1.svm", "--workers", "3",
                                      "--runtime", runtime});
    EXPECT_EQ(from_object["objective"], from_prefix["objective"]);
  }
  const CommandResult missing = RunNimbus({"train", "--data", "s3://data/nothing-here", "--l1", "1e-4"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("s3://data/nothing-here: no such object, nor objects under it"), std::string::npos)
      << missing.err;
}

// Values held compactly and exactly: binary features in no bytes, small counts in 4, in the
// shards and in the workers that read text; the answer is that of doubles (shard format 1),
// and the compact shards are the smaller.
TEST_F(WaysIn, CompactValuesGiveTheAnswerOfDoubles) {
  for (const bool binary : {true, false}) {
    SCOPED_TRACE(binary ? "binary" : "counts");
    std::string text;
    uint64_t state = 12345;
    auto next = [&state] { return state = state * 6364136223846793005ULL + 1442695040888963407ULL; };
    for (int r = 0; r < 2000; ++r) {
      text += next() % 3 == 0 ? "1" : "-1";
      uint64_t index = 0;
      for (int e = 0; e < 8; ++e) {
        index += 1 + (next() >> 33) % 5000;
        text += " " + std::to_string(index) + ":" + (binary ? "1" : std::to_string(1 + (next() >> 40) % 9));
      }
      text += "\n";
    }
    const std::string path = dir_->File(binary ? "binary.svm" : "counts.svm");
    WriteTextFile(path, text);
    const std::string doubles = dir_->File(binary ? "doubles-b" : "doubles-c");
    const std::string compact = dir_->File(binary ? "compact-b" : "compact-c");
    ASSERT_EQ(RunNimbus({"split", "--data", path, "--shards", "2", "--out", doubles, "--double-values"}).exit_code, 0);
    const CommandResult split = RunNimbus({"split", "--data", path, "--shards", "2", "--out", compact});
    ASSERT_EQ(split.exit_code, 0) << split.err;
    EXPECT_NE(split.out.find("bytes per nonzero"), std::string::npos) << split.out;
    const auto bytes = [](const std::string& file) { return std::stoull(RunCommand({"stat", "-c", "%s", file}).out); };
    const uint64_t saved = bytes(doubles + "/shard-00000.bin") - bytes(compact + "/shard-00000.bin");
    EXPECT_GT(saved, 0u);
    const double expected = Summary({"--data", doubles})["objective"].get<double>();
    ExpectSameOptimum(Summary({"--data", compact}), expected);
    for (const char* runtime : {"threads", "process"}) {
      ExpectSameOptimum(Summary({"--data", path, "--workers", "2", "--runtime", runtime}), expected);
    }
  }
}

// A worker process killed in round 3 is replaced; the replacement reads its part again, and the
// run ends where an undisturbed one does.
TEST_F(WaysIn, AReplacedWorkerReadsItsPartAgain) {
  const std::string data = dir_->File("data.svm");
  const Json quiet = Summary({"--data", data, "--workers", "3", "--runtime", "process"});
  const Json crashed = Summary({"--data", data, "--workers", "3", "--runtime", "process", "--inject-crash", "@1:3"});
  EXPECT_GE(crashed["worker_restarts"].get<int>(), 1);
  EXPECT_NEAR(crashed["objective"].get<double>(), quiet["objective"].get<double>(),
              1e-9 * quiet["objective"].get<double>());
}

// On a terminal (here script(1)'s), train shows the workers' reading as it goes, on a line
// that overwrites itself and ends with every byte read; off a terminal it shows nothing.
TEST_F(WaysIn, TheWorkersReadingIsShownOnATerminal) {
  const std::string command = std::string(NIMBUS_BINARY) + " train --data " + dir_->File("data.svm") +
                              " --l1 1e-4 --workers 3 --runtime process";
  const CommandResult shown = RunCommand({"script", "-qec", command, "/dev/null"});
  EXPECT_EQ(shown.exit_code, 0) << shown.out;
  EXPECT_NE(shown.out.find("nimbus train: the workers read "), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("(100.0%); 3 of 3 done"), std::string::npos) << shown.out;
  const CommandResult plain = RunNimbus({"train", "--data", dir_->File("data.svm"), "--l1", "1e-4", "--workers", "3"});
  EXPECT_EQ(plain.err.find("the workers read"), std::string::npos) << plain.err;
}

// A bad line in the last worker's part: the error names the file and the line's number in it
// (not in the part), from threads and from a worker process alike, and nothing is written.
TEST_F(WaysIn, ABadLineInALaterWorkersPartIsNamedByFileAndLine) {
  std::string text = ReadTextFile(dir_->File("data.svm"));
  const std::size_t at = text.find('\n', text.size() * 9 / 10) + 1;
  text.insert(at, "1 3:1 2:5\n");
  const long line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 1;
  const std::string path = dir_->File("bad.svm");
  WriteTextFile(path, text);
  for (const char* runtime : {"threads", "process"}) {
    SCOPED_TRACE(runtime);
    const CommandResult result = RunNimbus({"train", "--data", path, "--workers", "3", "--runtime", runtime, "--out",
                                            dir_->File("never.json")});
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(result.err.find(path + ":" + std::to_string(line) + ": feature index 2 after 3"), std::string::npos)
        << result.err;
    EXPECT_FALSE(FileExists(dir_->File("never.json")));
  }
}

}  // namespace
}  // namespace nimbus::testing
