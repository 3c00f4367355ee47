// The .npz format: a zip archive of .npy files, one per named array, stored
// (np.savez) or deflated (np.savez_compressed). libzip does the zip work.
#include <zip.h>

#include <memory>
#include <set>

#include "anvil/runtime/npy.h"
#include "anvil/support/error.h"
#include "runtime/binary_io.h"
#include "runtime/npy_format.h"

namespace anvil {
namespace {

struct ZipDiscard {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};
struct ZipFileClose {
  void operator()(zip_file_t* file) const { zip_fclose(file); }
};
struct ZipSourceFree {
  void operator()(zip_source_t* source) const { zip_source_free(source); }
};

// Deflate cannot expand data by more than about 1032 to 1, so a larger
// declared size is a lie; checking it bounds what a hostile archive makes us allocate.
constexpr uint64_t kMaxDeflateRatio = 1032;
constexpr char kSuffix[] = ".npy";

std::string take_message(zip_error_t* error) {
  std::string text = zip_error_strerror(error);
  zip_error_fini(error);
  return text;
}

// One entry's decompressed bytes, read straight into the tensor being built.
class ZipEntrySource : public detail::ByteSource {
 public:
  ZipEntrySource(zip_file_t* file, const std::string& what) : file_(file), what_(what) {}

  void read(void* dst, size_t n) override {
    auto* p = static_cast<char*>(dst);
    while (n > 0) {
      zip_int64_t got = zip_fread(file_, p, n);
      if (got < 0) throw_error(what_, ": damaged entry: ", zip_file_strerror(file_));
      if (got == 0) throw_error(what_, ": truncated: the entry ends ", n, " bytes early");
      p += got;
      n -= size_t(got);
    }
  }

  // Reads past the last byte, which is when libzip checks the entry's CRC.
  void finish() {
    char extra;
    zip_int64_t got = zip_fread(file_, &extra, 1);
    if (got < 0) throw_error(what_, ": damaged entry: ", zip_file_strerror(file_));
    if (got > 0) throw_error(what_, ": the entry holds more bytes than it declares");
  }

 private:
  zip_file_t* file_;
  const std::string& what_;
};

void check_entry(const zip_stat_t& st, uint64_t archive_size, const std::string& what) {
  constexpr zip_uint64_t kNeeded =
      ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD | ZIP_STAT_ENCRYPTION_METHOD;
  if ((st.valid & kNeeded) != kNeeded) throw_error(what, ": the zip directory entry is incomplete");
  if (st.encryption_method != ZIP_EM_NONE) throw_error(what, ": the entry is encrypted");
  if (st.comp_method != ZIP_CM_STORE && st.comp_method != ZIP_CM_DEFLATE)
    throw_error(what, ": compression method ", st.comp_method,
                " is not supported (only stored and deflate)");
  if (st.comp_size > archive_size)
    throw_error(what, ": declares ", st.comp_size, " compressed bytes, but the archive has ",
                archive_size);
  if (st.comp_method == ZIP_CM_STORE && st.size != st.comp_size)
    throw_error(what, ": a stored entry declares ", st.size, " bytes but holds ", st.comp_size);
  if (st.comp_method == ZIP_CM_DEFLATE && st.size / kMaxDeflateRatio > st.comp_size + 1)
    throw_error(what, ": declares ", st.size, " bytes, more than deflate can produce from ",
                st.comp_size);
}

}  // namespace

NamedTensors parse_npz(std::string_view bytes, const std::string& what) {
  if (bytes.empty()) throw_error(what, ": is empty");
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (!source) throw_error(what, ": ", take_message(&error));
  zip_t* raw = zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  if (!raw) {
    zip_source_free(source);
    throw_error(what, ": not a valid zip archive: ", take_message(&error));
  }
  zip_error_fini(&error);
  std::unique_ptr<zip_t, ZipDiscard> archive(raw);

  NamedTensors result;
  std::set<std::string> names;
  zip_int64_t count = zip_get_num_entries(raw, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(raw, zip_uint64_t(i), 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME))
      throw_error(what, ": entry ", i, ": ", zip_strerror(raw));
    std::string entry = st.name;
    std::string entry_what = what + ": entry '" + detail::printable(entry) + "'";
    if (!entry.ends_with(kSuffix)) throw_error(entry_what, ": is not a .npy file");
    std::string name = entry.substr(0, entry.size() - (sizeof(kSuffix) - 1));
    if (!names.insert(name).second) throw_error(entry_what, ": appears twice");
    check_entry(st, bytes.size(), entry_what);
    std::unique_ptr<zip_file_t, ZipFileClose> file(zip_fopen_index(raw, zip_uint64_t(i), 0));
    if (!file) throw_error(entry_what, ": ", zip_strerror(raw));
    ZipEntrySource entry_source(file.get(), entry_what);
    Tensor tensor = detail::read_npy_from(entry_source, st.size, entry_what);
    entry_source.finish();
    result.emplace_back(std::move(name), std::move(tensor));
  }
  return result;
}

NamedTensors read_npz(const std::filesystem::path& path) {
  std::string what = "npz file " + detail::quoted(path);
  return parse_npz(detail::read_file_bytes(path, what), what);
}

std::string serialize_npz(const NamedTensors& tensors, bool compress) {
  std::vector<std::string> blobs;
  std::set<std::string> names;
  for (const auto& [name, tensor] : tensors) {
    std::string shown = "'" + detail::printable(name) + "'";
    if (name.find('\0') != std::string::npos)
      throw_error("tensor name ", shown, " holds a NUL byte");
    if (!names.insert(name).second) throw_error("tensor name ", shown, " appears twice");
    try {
      blobs.push_back(serialize_npy(tensor));
    } catch (const Error& e) {
      throw_error("tensor ", shown, ": ", e.what());
    }
  }
  // libzip writes nothing for an archive without entries; numpy writes the
  // bare end-of-directory record, which every zip reader accepts.
  if (tensors.empty()) return std::string("PK\x05\x06", 4) + std::string(18, '\0');

  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  ANVIL_ICHECK(buffer != nullptr, take_message(&error));
  std::unique_ptr<zip_source_t, ZipSourceFree> buffer_owner(buffer);
  // The archive takes one reference; keep ours so the bytes outlive zip_close.
  zip_source_keep(buffer);
  zip_t* raw = zip_open_from_source(buffer, ZIP_TRUNCATE, &error);
  if (!raw) {
    zip_source_free(buffer);
    ANVIL_ICHECK(false, take_message(&error));
  }
  zip_error_fini(&error);
  std::unique_ptr<zip_t, ZipDiscard> archive(raw);
  for (size_t i = 0; i < tensors.size(); ++i) {
    zip_source_t* data = zip_source_buffer(raw, blobs[i].data(), blobs[i].size(), 0);
    ANVIL_ICHECK(data != nullptr, zip_strerror(raw));
    std::string entry = tensors[i].first + kSuffix;
    zip_int64_t index = zip_file_add(raw, entry.c_str(), data, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(data);
      throw_error("cannot add '", detail::printable(entry),
                  "' to the archive: ", zip_strerror(raw));
    }
    int method = compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE;
    ANVIL_ICHECK(zip_set_file_compression(raw, zip_uint64_t(index), method, 0) == 0,
                 zip_strerror(raw));
  }
  if (zip_close(raw) != 0) throw_error("cannot build the zip archive: ", zip_strerror(raw));
  archive.release();  // zip_close freed it

  zip_stat_t st;
  zip_stat_init(&st);
  ANVIL_ICHECK(zip_source_stat(buffer, &st) == 0 && (st.valid & ZIP_STAT_SIZE));
  std::string bytes(size_t(st.size), '\0');
  ANVIL_ICHECK(zip_source_open(buffer) == 0);
  size_t done = 0;
  while (done < bytes.size()) {
    zip_int64_t got = zip_source_read(buffer, bytes.data() + done, bytes.size() - done);
    if (got <= 0) break;
    done += size_t(got);
  }
  zip_source_close(buffer);
  ANVIL_ICHECK(done == bytes.size(), "read ", done, " of ", bytes.size(), " archive bytes");
  return bytes;
}

void write_npz(const std::filesystem::path& path, const NamedTensors& tensors, bool compress) {
  std::string what = "npz file " + detail::quoted(path);
  std::string bytes;
  try {
    bytes = serialize_npz(tensors, compress);
  } catch (const Error& e) {
    throw_error("cannot write ", what, ": ", e.what());
  }
  detail::write_file_atomically(path, bytes, what);
}

}  // namespace anvil
