#include "nimbus/core/file_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cerrno>
#include <filesystem>
#include <system_error>
#include <utility>

namespace nimbus {
namespace {

constexpr std::size_t kWriteBufferBytes = 1 << 20;

Status WriteAll(int fd, const char* data, std::size_t size, const std::string& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("cannot write " + path, errno);
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> ReadFileToString(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return NotFound(path + ": no such file");
    return ErrnoError("cannot open " + path, errno);
  }
  std::string contents;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd);
      return ErrnoError("cannot read " + path, error);
    }
    if (n == 0) break;
    contents.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return contents;
}

Result<uint64_t> RegularFileSize(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return NotFound(path + ": no such file");
    return ErrnoError("cannot stat " + path, errno);
  }
  if (!S_ISREG(st.st_mode)) return InvalidArgument(path + ": not a regular file");
  return static_cast<uint64_t>(st.st_size);
}

AtomicFileWriter::AtomicFileWriter(std::string path, std::string temp_path, int fd)
    : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd) {
  buffer_.reserve(kWriteBufferBytes);
}

Result<AtomicFileWriter> AtomicFileWriter::Open(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  const std::string temp_path =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  const int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("cannot create " + path, errno);
  return AtomicFileWriter(path, temp_path, fd);
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept
    : path_(std::move(other.path_)),
      temp_path_(std::move(other.temp_path_)),
      fd_(std::exchange(other.fd_, -1)),
      buffer_(std::move(other.buffer_)),
      error_(std::move(other.error_)) {}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(temp_path_.c_str());
  }
}

Status AtomicFileWriter::FlushBuffer() {
  if (!error_.ok()) return error_;
  error_ = WriteAll(fd_, buffer_.data(), buffer_.size(), path_);
  buffer_.clear();
  return error_;
}

Status AtomicFileWriter::Write(std::string_view bytes) {
  if (fd_ < 0) return FailedPrecondition("write to a closed file " + path_);
  if (buffer_.size() + bytes.size() > kWriteBufferBytes) NIMBUS_RETURN_IF_ERROR(FlushBuffer());
  if (bytes.size() >= kWriteBufferBytes) {
    error_ = WriteAll(fd_, bytes.data(), bytes.size(), path_);
    return error_;
  }
  buffer_.append(bytes);
  return Status::Ok();
}

Status AtomicFileWriter::Commit() {
  if (fd_ < 0) return FailedPrecondition("commit of a closed file " + path_);
  Status status = FlushBuffer();
  if (status.ok() && ::fsync(fd_) != 0) status = ErrnoError("cannot sync " + path_, errno);
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0 && status.ok()) status = ErrnoError("cannot close " + path_, errno);
  if (status.ok() && ::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    status = ErrnoError("cannot rename " + temp_path_ + " to " + path_, errno);
  }
  if (!status.ok()) ::unlink(temp_path_.c_str());
  return status;
}

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  NIMBUS_ASSIGN_OR_RETURN(AtomicFileWriter writer, AtomicFileWriter::Open(path));
  NIMBUS_RETURN_IF_ERROR(writer.Write(contents));
  return writer.Commit();
}

Result<MappedFile> MappedFile::Open(const std::string& path) {
  NIMBUS_ASSIGN_OR_RETURN(uint64_t size, RegularFileSize(path));
  MappedFile file;
  if (size == 0) return file;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open " + path, errno);
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  const int error = errno;
  ::close(fd);
  if (p == MAP_FAILED) return ErrnoError("cannot map " + path, error);
  file.data_ = p;
  file.size_ = size;
  return file;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

std::string AbsolutePath(const std::string& path) {
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(path, error);
  return error ? path : absolute.lexically_normal().string();
}

Result<TemporaryDirectory> TemporaryDirectory::Create(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/" + prefix + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return ErrnoError("cannot create a temporary directory " + pattern, errno);
  TemporaryDirectory directory;
  directory.path_ = pattern;
  return directory;
}

TemporaryDirectory::~TemporaryDirectory() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

TemporaryDirectory& TemporaryDirectory::operator=(TemporaryDirectory&& other) noexcept {
  if (this != &other) {
    this->~TemporaryDirectory();
    path_ = std::exchange(other.path_, {});
  }
  return *this;
}

Status MakeDirectories(const std::string& path) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error) return IoError("cannot create directory " + path + ": " + error.message());
  return Status::Ok();
}

}  // namespace nimbus
