#include "nimbus/core/zip_writer.h"

#include <zlib.h>

#include <limits>

namespace nimbus {
namespace {

void Put16(std::string& out, uint32_t value) {
  out += static_cast<char>(value & 0xff);
  out += static_cast<char>((value >> 8) & 0xff);
}

void Put32(std::string& out, uint32_t value) {
  Put16(out, value & 0xffff);
  Put16(out, value >> 16);
}

// Raw deflate (no zlib header), as ZIP's method 8 stores it.
Result<std::string> Deflate(std::string_view bytes) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Internal("deflateInit2 failed");
  }
  std::string out(deflateBound(&stream, bytes.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (status != Z_STREAM_END) return Internal("deflate did not finish");
  return out;
}

}  // namespace

Status ZipWriter::Add(const std::string& name, std::string_view bytes, uint32_t mode) {
  if (bytes.size() > std::numeric_limits<uint32_t>::max() / 2 || data_.size() > std::numeric_limits<uint32_t>::max() / 2) {
    return InvalidArgument("zip member " + name + ": too large for a ZIP without ZIP64");
  }
  NIMBUS_ASSIGN_OR_RETURN(std::string deflated, Deflate(bytes));
  Member member;
  member.name = name;
  member.crc = static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
  member.size = static_cast<uint32_t>(bytes.size());
  member.method = deflated.size() < bytes.size() ? 8 : 0;  // stored when deflate does not help
  const std::string_view stored = member.method == 8 ? std::string_view(deflated) : bytes;
  member.compressed = static_cast<uint32_t>(stored.size());
  member.offset = static_cast<uint32_t>(data_.size());
  member.mode = mode;
  // Local file header.
  Put32(data_, 0x04034b50);
  Put16(data_, 20);  // version needed
  Put16(data_, 0);   // flags
  Put16(data_, member.method);
  Put16(data_, 0);  // time
  Put16(data_, (1 << 5) | 1);  // date: 1980-01-01, so archives are reproducible
  Put32(data_, member.crc);
  Put32(data_, member.compressed);
  Put32(data_, member.size);
  Put16(data_, static_cast<uint32_t>(name.size()));
  Put16(data_, 0);
  data_ += name;
  data_.append(stored);
  members_.push_back(std::move(member));
  return Status::Ok();
}

std::string ZipWriter::Finish() {
  std::string out = data_;
  const auto directory_offset = static_cast<uint32_t>(out.size());
  for (const Member& m : members_) {
    Put32(out, 0x02014b50);
    Put16(out, (3 << 8) | 20);  // made by: Unix, version 2.0
    Put16(out, 20);
    Put16(out, 0);
    Put16(out, m.method);
    Put16(out, 0);
    Put16(out, (1 << 5) | 1);
    Put32(out, m.crc);
    Put32(out, m.compressed);
    Put32(out, m.size);
    Put16(out, static_cast<uint32_t>(m.name.size()));
    Put16(out, 0);  // extra
    Put16(out, 0);  // comment
    Put16(out, 0);  // disk
    Put16(out, 0);  // internal attributes
    Put32(out, (0100000u | m.mode) << 16);  // external attributes: a regular file with its mode
    Put32(out, m.offset);
    out += m.name;
  }
  const auto directory_size = static_cast<uint32_t>(out.size() - directory_offset);
  Put32(out, 0x06054b50);
  Put16(out, 0);
  Put16(out, 0);
  Put16(out, static_cast<uint32_t>(members_.size()));
  Put16(out, static_cast<uint32_t>(members_.size()));
  Put32(out, directory_size);
  Put32(out, directory_offset);
  Put16(out, 0);
  return out;
}

}  // namespace nimbus
