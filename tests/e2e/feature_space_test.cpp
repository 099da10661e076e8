// End to end: a feature space of any size. A LIBSVM file whose largest index is 2^31 - 1 is
// trained in a few megabytes more than a twin file with the columns renumbered by hand (1 to
// 4), on the threads and the process runtime (it once took 24 GB: every vector was sized by
// the largest index); its model lists the file's own feature numbers, and it is the twin's
// model: the same objective as liblinear's on the twin, the same predictions on test rows with
// features it never saw.
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "e2e_support.h"

namespace nimbus::testing {
namespace {

using Json = nlohmann::json;

// How much more memory a training run on the 2 hashed rows may take at its peak than the same
// run on their twin (features 1 to 4): a few megabytes. The binary and its libraries take
// about 18 MB (about 100 MB built with AddressSanitizer), the twin's run no more; a vector of
// 2^31 doubles would take 16 GiB.
constexpr long kAboveTwinLimitKb = 16 * 1024;

// Features 3, 1000, 77777 and 2^31 - 1; in the twin they are 1, 2, 3 and 4.
constexpr char kHashedRows[] = "1 3:0.5 1000:1 2147483647:1\n-1 3:-1 77777:2\n";
constexpr char kTwinRows[] = "1 1:0.5 2:1 4:1\n-1 1:-1 3:2\n";
// Test rows, with features the model never saw (5 and 2^31 - 2; in the twin 5 and 6, past
// its 4 features, where liblinear and nimbus both weigh them 0).
constexpr char kHashedTest[] = "1 3:1 2147483647:0.2\n-1 1000:-1 77777:0.1\n1 5:4 77777:1\n-1 3:-0.3 2147483646:9\n"
                               "1 1000:2 2147483646:-3\n";
constexpr char kTwinTest[] = "1 1:1 4:0.2\n-1 2:-1 3:0.1\n1 3:1 5:4\n-1 1:-0.3 6:9\n1 2:2 6:-3\n";

class FeatureSpace : public ::testing::Test {
 protected:
  FeatureSpace() {
    WriteTextFile(dir_.File("hashed.svm"), kHashedRows);
    WriteTextFile(dir_.File("twin.svm"), kTwinRows);
    WriteTextFile(dir_.File("hashed-test.svm"), kHashedTest);
    WriteTextFile(dir_.File("twin-test.svm"), kTwinTest);
  }

  // `nimbus train` with the default problem (l2 = 1/N, liblinear's C = 1), checked for
  // success; its summary.
  Json TrainWith(const std::vector<std::string>& args, long* peak_kb = nullptr) {
    std::vector<std::string> all{"train", "--quiet", "--gradient-tolerance", "1e-10", "--summary-json",
                                 dir_.File("summary.json")};
    all.insert(all.end(), args.begin(), args.end());
    const CommandResult result = RunNimbus(all);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    if (peak_kb != nullptr) *peak_kb = result.max_rss_kb;
    return Json::parse(ReadTextFile(dir_.File("summary.json")));
  }

  // The peak memory of the twin's training on `runtime`.
  long TwinPeakKb(const std::string& runtime) {
    long peak_kb = 0;
    TrainWith({"--data", dir_.File("twin.svm"), "--runtime", runtime, "--out", dir_.File("twin-peak.json")}, &peak_kb);
    return peak_kb;
  }

  std::string Predict(const std::string& model, const std::string& data) {
    const CommandResult result = RunNimbus({"predict", "--model", model, "--data", data, "--scores"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.out;
  }

  TempDir dir_;
};

// "1 0.66\n-1 0.39\n" -> {1, -1}, {0.66, 0.39}.
void SplitPredictions(const std::string& text, std::vector<std::string>* labels, std::vector<double>* scores) {
  std::istringstream in(text);
  std::string label;
  double score = 0;
  while (in >> label >> score) {
    labels->push_back(label);
    scores->push_back(score);
  }
}

TEST_F(FeatureSpace, TwoRowsUpToIndex2To31TrainInAFewMegabytesAsTheirTwinWould) {
  // liblinear on the twin, to a tight tolerance: F* and its predictions.
  const std::string reference = TrainLiblinear(0, 1.0, 1e-10, dir_.File("twin.svm"), dir_.File("twin-liblinear.txt"));
  const double optimum = ObjectiveOf(reference, dir_.File("twin.svm"), 0, 0.5);
  const CommandResult theirs = RunCommand({"liblinear-predict", dir_.File("twin-test.svm"), reference, dir_.File("theirs.txt")});
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err;

  TrainWith({"--data", dir_.File("twin.svm"), "--out", dir_.File("twin.json")});
  std::vector<std::string> twin_labels;
  std::vector<double> twin_scores;
  SplitPredictions(Predict(dir_.File("twin.json"), dir_.File("twin-test.svm")), &twin_labels, &twin_scores);
  ASSERT_EQ(twin_labels.size(), 5u);
  std::string theirs_text = ReadTextFile(dir_.File("theirs.txt"));
  std::vector<std::string> theirs_labels;
  std::istringstream theirs_in(theirs_text);
  for (std::string label; theirs_in >> label;) theirs_labels.push_back(label);
  EXPECT_EQ(twin_labels, theirs_labels);

  for (const std::string runtime : {"threads", "process"}) {
    SCOPED_TRACE(runtime);
    const std::string model = dir_.File("hashed-" + runtime + ".json");
    long peak_kb = 0;
    const Json summary = TrainWith({"--data", dir_.File("hashed.svm"), "--runtime", runtime, "--out", model}, &peak_kb);
    const long twin_kb = TwinPeakKb(runtime);
    EXPECT_GT(peak_kb, 0);
    EXPECT_LT(peak_kb, twin_kb + kAboveTwinLimitKb) << "peak resident set " << peak_kb << " KiB, the twin's " << twin_kb;
    EXPECT_EQ(summary["cols"], 2147483647);
    EXPECT_EQ(summary["solved_cols"], 4);
    EXPECT_NEAR(summary["objective"].get<double>(), optimum, 1e-9 * optimum);

    // The model lists the file's own feature numbers.
    const Json written = Json::parse(ReadTextFile(model));
    EXPECT_EQ(written["cols"], 2147483647);
    EXPECT_EQ(written["weights"]["indices"], Json::parse("[3, 1000, 77777, 2147483647]"));

    // Its predictions on the test rows are the twin model's on the twin's test rows.
    std::vector<std::string> labels;
    std::vector<double> scores;
    SplitPredictions(Predict(model, dir_.File("hashed-test.svm")), &labels, &scores);
    EXPECT_EQ(labels, twin_labels);
    ASSERT_EQ(scores.size(), twin_scores.size());
    for (std::size_t r = 0; r < scores.size(); ++r) EXPECT_NEAR(scores[r], twin_scores[r], 1e-9) << "row " << r;
    // By hand from the model's weights: rows 3 and 5 weigh their unseen features 0, so their
    // probabilities are sigmoid(w_77777) and sigmoid(2 w_1000).
    const std::vector<double> w = written["weights"]["values"].get<std::vector<double>>();
    ASSERT_EQ(w.size(), 4u);
    EXPECT_NEAR(scores[2], 1 / (1 + std::exp(-w[2])), 1e-15);
    EXPECT_NEAR(scores[4], 1 / (1 + std::exp(-2 * w[1])), 1e-15);
  }
}

// Shards of the same file hold the 4 columns, the manifest the map back; a store trains to the
// same model as the file, on threads and worker processes.
TEST_F(FeatureSpace, ShardsOfAHashedFileTrainToTheSameModel) {
  const CommandResult split =
      RunNimbus({"split", "--data", dir_.File("hashed.svm"), "--shards", "2", "--out", dir_.File("store")});
  ASSERT_EQ(split.exit_code, 0) << split.err;
  EXPECT_NE(split.out.find("2147483647 features (4 occur, renumbered)"), std::string::npos) << split.out;
  EXPECT_TRUE(FileExists(dir_.File("store/features.bin")));
  TrainWith({"--data", dir_.File("hashed.svm"), "--workers", "2", "--out", dir_.File("file.json")});
  for (const std::string runtime : {"threads", "process"}) {
    long peak_kb = 0;
    TrainWith({"--data", dir_.File("store"), "--runtime", runtime, "--out", dir_.File("store.json")}, &peak_kb);
    const long twin_kb = TwinPeakKb(runtime);
    EXPECT_LT(peak_kb, twin_kb + kAboveTwinLimitKb) << runtime << ": " << peak_kb << " KiB, the twin's " << twin_kb;
    EXPECT_EQ(ReadTextFile(dir_.File("store.json")), ReadTextFile(dir_.File("file.json"))) << runtime;
  }
}

// liblinear's format is dense: refused before the run, naming the size, for 2^31 - 1
// features; written in full, and read by liblinear-predict, for a space of 1000.
TEST_F(FeatureSpace, LiblinearModelsAreDenseWhereThatIsReasonable) {
  const CommandResult refused = RunNimbus({"train", "--data", dir_.File("hashed.svm"), "--model-format", "liblinear",
                                           "--out", dir_.File("m.txt")});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("this model has 2147483647 features"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find("nimbus train: 2 rows"), std::string::npos) << "refused only after the start: " << refused.err;
  EXPECT_FALSE(FileExists(dir_.File("m.txt")));

  WriteTextFile(dir_.File("small.svm"), "1 3:0.5 1000:1\n-1 3:-1 500:2\n1 500:-1\n");
  WriteTextFile(dir_.File("small-test.svm"), "1 3:1\n-1 500:1 700:5\n1 999:2 1000:1\n-1 3:-2 1000:0.5\n");
  TrainWith({"--data", dir_.File("small.svm"), "--model-format", "liblinear", "--out", dir_.File("small.txt")});
  const std::string text = ReadTextFile(dir_.File("small.txt"));
  EXPECT_NE(text.find("nr_feature 1000\n"), std::string::npos);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 6 + 1000);
  const CommandResult theirs = RunCommand({"liblinear-predict", dir_.File("small-test.svm"), dir_.File("small.txt"),
                                           dir_.File("theirs.txt")});
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
  const CommandResult ours =
      RunNimbus({"predict", "--model", dir_.File("small.txt"), "--data", dir_.File("small-test.svm")});
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  EXPECT_EQ(ours.out, ReadTextFile(dir_.File("theirs.txt")));
}

}  // namespace
}  // namespace nimbus::testing
