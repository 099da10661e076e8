// Text where it lies: slices of files (whole, or byte ranges whose ends fall anywhere, mid-line
// included), read line by line through gzip, zstd and xz, against the file's own lines; and
// the rows and scans of parts against the whole file read at once.
#include "nimbus/data/text_input.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "data/test_datasets.h"
#include "nimbus/data/libsvm_reader.h"
#include "nimbus/data/text_rows.h"
#include "support/test_support.h"

namespace nimbus {
namespace {

using testing::TempDir;
using testing::WriteTextFile;

std::vector<std::string> LinesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class TextInputTest : public ::testing::Test {
 protected:
  TextFile File(const std::string& name, const std::string& contents) {
    WriteTextFile(dir_.File(name), contents);
    if (!store_) store_ = std::make_shared<DirectoryStore>(dir_.path());
    return TextFile{dir_.path(), name, contents.size(), CompressionOf(name), store_};
  }
  // A file compressed by the command-line tool (gzip, zstd or xz) from `contents`.
  TextFile Compressed(const std::string& name, const std::string& contents, const std::string& tool) {
    const std::string plain = name.substr(0, name.rfind('.'));
    WriteTextFile(dir_.File(plain), contents);
    const std::string command = tool + " -q -c " + dir_.File(plain) + " > " + dir_.File(name);
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    if (!store_) store_ = std::make_shared<DirectoryStore>(dir_.path());
    return TextFile{dir_.path(), name, store_->Size(name).value(), CompressionOf(name), store_};
  }
  // Every line the slices read, in order.
  static std::vector<std::string> Read(const std::vector<TextFile>& files, const std::vector<TextSlice>& slices,
                                       std::size_t block_bytes = 64) {
    std::vector<std::string> lines;
    for (const TextSlice& slice : slices) {
      SliceLines reader(files, slice, block_bytes);
      while (true) {
        Result<std::string_view> block = reader.Next();
        EXPECT_TRUE(block.ok()) << block.status().ToString();
        if (!block.ok() || block->empty()) break;
        for (const std::string& line : LinesOf(std::string(*block))) lines.push_back(line);
      }
    }
    return lines;
  }

  TempDir dir_;
  std::shared_ptr<Store> store_;
};

const std::string kText = "1 1:0.5 3:2\n-1 2:1\n# a comment\n\n1 4:3 7:1.25\n-1\n1 1:1 2:1 3:1\n";

// Every cut of the file into two ranges, at every byte, and every three-way cut: each line is
// read once, in order, whatever the cut (a range from mid-line takes the next line on; an
// empty range or one inside a line takes none).
TEST_F(TextInputTest, EveryCutReadsEveryLineOnce) {
  const std::vector<TextFile> files = {File("a.svm", kText)};
  const std::vector<std::string> expected = LinesOf(kText);
  const uint64_t size = kText.size();
  for (uint64_t cut = 0; cut <= size; ++cut) {
    for (uint64_t second = cut; second <= size; ++second) {
      const std::vector<TextSlice> slices = {{{TextPiece{0, 0, cut}}}, {{TextPiece{0, cut, second}}},
                                             {{TextPiece{0, second, size}}}};
      ASSERT_EQ(Read(files, slices, 8), expected) << "cuts at " << cut << " and " << second;
    }
  }
}

// A last line without a line break, CRLF line ends, and a line longer than the block buffer.
TEST_F(TextInputTest, ALastLineWithoutABreakAndLongLinesAreRead) {
  std::string longline = "1";
  for (int j = 1; j <= 200; ++j) longline += " " + std::to_string(j) + ":1";
  const std::string text = "1 1:1\r\n" + longline + "\n-1 3:2";
  const std::vector<TextFile> files = {File("b.svm", text)};
  for (uint64_t cut = 0; cut <= text.size(); cut += 7) {
    const std::vector<TextSlice> slices = {{{TextPiece{0, 0, cut}}}, {{TextPiece{0, cut, text.size()}}}};
    EXPECT_EQ(Read(files, slices, 16), (std::vector<std::string>{"1 1:1\r", longline, "-1 3:2"})) << cut;
  }
}

TEST_F(TextInputTest, SlicesOfOneFileAreNearlyEqualRangesThatCoverIt) {
  const std::vector<TextFile> files = {File("a.svm", std::string(1000, 'x'))};
  const std::vector<TextSlice> slices = SliceText(files, 3);
  ASSERT_EQ(slices.size(), 3u);
  uint64_t at = 0;
  for (const TextSlice& slice : slices) {
    ASSERT_EQ(slice.pieces.size(), 1u);
    EXPECT_EQ(slice.pieces[0].begin, at);
    EXPECT_NEAR(static_cast<double>(slice.bytes()), 1000.0 / 3, 1);
    at = slice.pieces[0].end;
  }
  EXPECT_EQ(at, 1000u);
}

// With at least as many files as slices, each slice takes whole files; with fewer, ranges; a
// compressed file always goes whole to one slice.
TEST_F(TextInputTest, SlicesTakeWholeFilesWhenThereAreEnoughAndCompressedFilesWhole) {
  const std::vector<TextFile> files = {File("a.svm", std::string(100, 'x')), File("b.svm", std::string(300, 'x')),
                                       File("c.svm", std::string(100, 'x')), File("d.svm", std::string(100, 'x'))};
  std::set<uint32_t> seen;
  for (const TextSlice& slice : SliceText(files, 3)) {
    for (const TextPiece& piece : slice.pieces) {
      EXPECT_TRUE(piece.whole(files[piece.file])) << piece.file;
      EXPECT_TRUE(seen.insert(piece.file).second);
    }
  }
  EXPECT_EQ(seen.size(), 4u);
  const std::vector<TextFile> mixed = {File("e.svm", std::string(100, 'x')),
                                       Compressed("f.svm.gz", std::string(1000, 'y') + "\n", "gzip")};
  const std::vector<TextSlice> slices = SliceText(mixed, 4);
  int holding_f = 0;
  for (const TextSlice& slice : slices) {
    for (const TextPiece& piece : slice.pieces) {
      if (piece.file == 1) {
        ++holding_f;
        EXPECT_TRUE(piece.whole(mixed[1]));
      }
    }
  }
  EXPECT_EQ(holding_f, 1);
}

// The same lines from a plain file and from its gzip, zstd and xz forms (the gzip one two
// members long, as `cat a.gz b.gz` makes), in several slices of files.
TEST_F(TextInputTest, CompressedFilesReadAsThePlainText) {
  std::string text;
  for (int r = 0; r < 3000; ++r) text += (r % 2 ? "1" : "-1") + std::string(" 3:") + std::to_string(r) + "\n";
  const std::vector<std::string> expected = LinesOf(text);
  for (const auto& [name, tool] : std::vector<std::pair<std::string, std::string>>{
           {"t.svm.gz", "gzip"}, {"t.svm.zst", "zstd"}, {"t.svm.xz", "xz"}}) {
    const std::vector<TextFile> files = {Compressed(name, text, tool)};
    EXPECT_EQ(Read(files, SliceText(files, 1), 4096), expected) << name;
  }
  const std::string half = text.substr(0, text.size() / 2);
  TextFile first = Compressed("h1.svm.gz", half, "gzip");
  TextFile second = Compressed("h2.svm.gz", text.substr(half.size()), "gzip");
  const std::string joined = "cat " + dir_.File("h1.svm.gz") + " " + dir_.File("h2.svm.gz") + " > " + dir_.File("m.svm.gz");
  ASSERT_EQ(std::system(joined.c_str()), 0);
  const std::vector<TextFile> members = {TextFile{dir_.path(), "m.svm.gz", store_->Size("m.svm.gz").value(),
                                                  Compression::kGzip, store_}};
  EXPECT_EQ(Read(members, SliceText(members, 1), 1000), expected);
  const std::vector<TextFile> both = {first, File("plain.svm", "1 9:9\n"), second};
  std::vector<std::string> with_plain = LinesOf(half);
  with_plain.push_back("1 9:9");
  for (const std::string& line : LinesOf(text.substr(half.size()))) with_plain.push_back(line);
  EXPECT_EQ(Read(both, SliceText(both, 2), 1000), with_plain);
}

TEST_F(TextInputTest, ATruncatedCompressedFileIsAnErrorNamingIt) {
  std::string text;
  for (int r = 0; r < 20000; ++r) text += "1 1:" + std::to_string(r) + "\n";
  for (const auto& [name, tool] : std::vector<std::pair<std::string, std::string>>{
           {"u.svm.gz", "gzip"}, {"u.svm.zst", "zstd"}, {"u.svm.xz", "xz"}}) {
    TextFile file = Compressed(name, text, tool);
    const std::string cut = "truncate -s " + std::to_string(file.bytes / 2) + " " + dir_.File(name);
    ASSERT_EQ(std::system(cut.c_str()), 0);
    file.bytes /= 2;
    const std::vector<TextFile> files = {file};
    SliceLines reader(files, SliceText(files, 1)[0]);
    Status failed = Status::Ok();
    for (int i = 0; i < 100000 && failed.ok(); ++i) {
      Result<std::string_view> block = reader.Next();
      if (!block.ok()) failed = block.status();
      else if (block->empty()) break;
    }
    EXPECT_FALSE(failed.ok()) << name;
    EXPECT_NE(failed.message().find(dir_.File(name)), std::string::npos) << failed.message();
  }
}

// The parts' rows and scans, planned together, are the whole file's rows as the reader reads
// them at once: labels encoded the same way, columns renumbered to the same features.
TEST_F(TextInputTest, PartsPlannedTogetherAreTheWholeFile) {
  std::string text;
  std::mt19937_64 random(7);
  for (int r = 0; r < 500; ++r) {
    text += std::to_string(r % 3 == 0 ? 4 : 2);
    for (uint64_t j = 1; j <= 5; ++j) {
      text += " " + std::to_string(1000000 * j + random() % 1000000) + ":" + std::to_string(random() % 5 + 1);
    }
    text += "\n";
  }
  const std::vector<TextFile> files = {File("w.svm", text)};
  LibsvmReadOptions libsvm;
  libsvm.renumber_columns = true;
  Result<Dataset> whole = ReadLibsvmFile(dir_.File("w.svm"), libsvm);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  ASSERT_TRUE(whole->columns.renumbered());
  TextReadOptions options{libsvm, true};
  std::vector<std::shared_ptr<RowBlock>> parts;
  std::vector<TextScan> scans;
  for (const TextSlice& slice : SliceText(files, 4)) {
    parts.push_back(std::make_shared<RowBlock>());
    Result<TextScan> scan = ReadTextSlice(files, slice, options, *parts.back(), true);
    ASSERT_TRUE(scan.ok()) << scan.status().ToString();
    EXPECT_FALSE(scan->all_ones);
    EXPECT_TRUE(scan->all_floats);
    scans.push_back(std::move(scan).value());
  }
  Result<TextPlan> plan = PlanText(scans, libsvm, "w.svm");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->rows, 500);
  EXPECT_EQ(plan->source_cols, whole->source_cols());
  ASSERT_TRUE(plan->features);
  EXPECT_EQ(*plan->features, *whole->columns.features);
  EXPECT_EQ(plan->encoding.positive, 4);
  EXPECT_EQ(plan->class_rows.size(), 4u);
  std::vector<testing::PlainRow> rows;
  const TextPlanRows planned(*plan);
  for (std::size_t p = 0; p < parts.size(); ++p) {
    EXPECT_EQ(plan->first_rows[p], static_cast<int64_t>(rows.size()));
    ASSERT_TRUE(planned.Apply(*parts[p]).ok());
    for (const testing::PlainRow& row : testing::RowsOf(DatasetOfRows(parts[p], plan->cols(), plan->encoding))) {
      rows.push_back(row);
    }
  }
  EXPECT_EQ(rows, testing::RowsOf(*whole));
}

// Two slices read on three threads at once (each cut in up to three parts): one block of the
// whole file's rows in its order, each slice's rows counted, the parts' scans planned as the
// whole; a bad line in a later part still named by its line in the file.
TEST_F(TextInputTest, SlicesReadOnThreadsAreTheWholeFileInOrder) {
  std::string text;
  std::mt19937_64 random(11);
  for (int r = 0; r < 700; ++r) {
    text += r % 4 == 0 ? "+1" : "-1";
    for (uint64_t j = 1; j <= static_cast<uint64_t>(1 + r % 6); ++j) {
      text += " " + std::to_string(10 * j + random() % 10) + ":" + std::to_string(random() % 7 + 1);
    }
    text += "\n";
  }
  const std::vector<TextFile> files = {File("t.svm", text)};
  LibsvmReadOptions libsvm;
  Result<Dataset> whole = ReadLibsvmFile(dir_.File("t.svm"), libsvm);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  const std::vector<TextSlice> slices = SliceText(files, 2);
  Result<SlicesRead> read = ReadSlices(files, slices, TextReadOptions{libsvm, true}, 3);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_GT(read->scans.size(), slices.size());  // cut into parts
  ASSERT_EQ(read->slice_rows.size(), 2u);
  EXPECT_EQ(read->slice_rows[0] + read->slice_rows[1], 700);
  RowBlock first;
  Result<TextScan> first_scan = ReadTextSlice(files, slices[0], TextReadOptions{libsvm, true}, first, true);
  ASSERT_TRUE(first_scan.ok());
  EXPECT_EQ(read->slice_rows[0], first_scan->rows);
  Result<TextPlan> plan = PlanText(read->scans, libsvm, "t.svm");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  auto rows = std::make_shared<RowBlock>(std::move(read->rows));
  ASSERT_TRUE(TextPlanRows(*plan).Apply(*rows).ok());
  EXPECT_EQ(testing::RowsOf(DatasetOfRows(rows, plan->cols(), plan->encoding)), testing::RowsOf(*whole));

  std::string bad;
  for (int r = 1; r <= 299; ++r) bad += "1 1:" + std::to_string(r) + "\n";
  bad += "1 2:x\n1 1:1\n";
  const std::vector<TextFile> bad_files = {File("bad.svm", bad)};
  Result<SlicesRead> refused = ReadSlices(bad_files, SliceText(bad_files, 1), TextReadOptions{}, 3);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(dir_.File("bad.svm") + ":300: invalid value 'x'"), std::string::npos)
      << refused.status().message();
}

// A bad line found in a part that starts past the file's beginning is named by its line in
// the file.
TEST_F(TextInputTest, ABadLineInALaterPartIsNamedByItsLineInTheFile) {
  std::string text;
  for (int r = 1; r <= 99; ++r) text += "1 1:" + std::to_string(r) + "\n";
  text += "1 2:x\n1 1:1\n";
  const std::vector<TextFile> files = {File("bad.svm", text)};
  const std::vector<TextSlice> slices = SliceText(files, 3);
  TextReadOptions options;
  RowBlock rows;
  Result<TextScan> scan = ReadTextSlice(files, slices[2], options, rows, true);
  ASSERT_FALSE(scan.ok());
  EXPECT_NE(scan.status().message().find(dir_.File("bad.svm") + ":100: invalid value 'x'"), std::string::npos)
      << scan.status().message();
}

}  // namespace
}  // namespace nimbus
