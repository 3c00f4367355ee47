#include "anvil/runtime/npy.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "anvil/support/error.h"
#include "runtime/io_test_util.h"
#include "support/test_util.h"

namespace anvil::testing {
namespace {

// The bytes of a .npy file with the given header dict and raw data, in format
// version `major`.0, header padded the way numpy pads it.
std::string make_npy(const std::string& dict, const std::string& data, int major = 1) {
  size_t preamble = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((preamble + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += char(major);
  bytes += '\0';
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
    bytes += char((header.size() >> (8 * i)) & 0xff);
  return bytes + header + data;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Npy, RoundTripEveryDtypeAndShape) {
  for (const std::string& name : numpy_dtype_names()) {
    DataType dtype = DataType::parse(name);
    for (const auto& shape : test_shapes()) {
      Tensor original = make_test_tensor(dtype, shape);
      std::string context = name + " " + shape_to_string(shape);
      Tensor back = parse_npy(serialize_npy(original), "npy file 'test.npy'");
      expect_same_tensor(back, original, context);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(back.data()) % Tensor::kAlignment, 0u);
    }
  }
}

TEST(Npy, FileRoundTripLeavesOnlyTheFile) {
  ScratchDir dir;
  Tensor original = make_test_tensor(DataType::float32(), {4, 5});
  write_npy(dir / "x.npy", original);
  expect_same_tensor(read_npy(dir / "x.npy"), original);
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename(), "x.npy");
    ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST(Npy, WritesNumpyVersion1HeaderAlignedTo64Bytes) {
  std::string bytes = serialize_npy(Tensor::zeros({2, 3}, DataType::float32()));
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  size_t header_size = size_t(uint8_t(bytes[8])) | size_t(uint8_t(bytes[9])) << 8;
  EXPECT_EQ((10 + header_size) % 64, 0u);
  std::string header = bytes.substr(10, header_size);
  EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 0), 0u)
      << header;
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(bytes.size(), 10 + header_size + 24);

  std::string scalar = serialize_npy(Tensor::zeros({}, DataType::boolean()));
  EXPECT_NE(scalar.find("'descr': '|b1'"), std::string::npos);
  EXPECT_NE(scalar.find("'shape': ()"), std::string::npos);
  std::string vector = serialize_npy(Tensor::zeros({5}, DataType::uint8()));
  EXPECT_NE(vector.find("'descr': '|u1'"), std::string::npos);
  EXPECT_NE(vector.find("'shape': (5,)"), std::string::npos);
}

TEST(Npy, ReadsVersion2And3Headers) {
  std::string data("\x01\x00\x00\x00\x02\x00\x00\x00", 8);
  for (int major : {2, 3}) {
    Tensor t = parse_npy(
        make_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", data, major),
        "npy file 'v.npy'");
    EXPECT_EQ(t.dtype(), DataType::int32());
    EXPECT_EQ(t.get_as_double(1), 2) << major;
  }
}

TEST(Npy, AcceptsHeaderSpellingsNumpyAccepts) {
  std::string data(4, '\0');
  for (const char* dict : {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}",
                           "{\"shape\": (1L,), \"descr\": \"<f4\", \"fortran_order\": False}",
                           "{ 'fortran_order' : False ,'shape':( 1 , ) , 'descr':'<f4' , }"}) {
    Tensor t = parse_npy(make_npy(dict, data), "npy file 'h.npy'");
    EXPECT_EQ(t.shape_vector(), std::vector<int64_t>{1}) << dict;
  }
}

TEST(Npy, ReadsBigEndianAndNativeDescriptors) {
  std::string be_i32("\x00\x00\x01\x02\xff\xff\xff\xfe", 8);
  Tensor t =
      parse_npy(make_npy("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", be_i32),
                "npy file 'be.npy'");
  EXPECT_EQ(t.get_as_double(0), 258);
  EXPECT_EQ(t.get_as_double(1), -2);
  std::string be_f2("\x3c\x00\xc0\x00", 4);  // 1.0, -2.0 as big-endian halves
  Tensor h = parse_npy(make_npy("{'descr': '>f2', 'fortran_order': False, 'shape': (2,), }", be_f2),
                       "npy file 'be.npy'");
  EXPECT_EQ(h.dtype(), DataType::float16());
  EXPECT_EQ(h.get_as_double(0), 1.0);
  EXPECT_EQ(h.get_as_double(1), -2.0);
  std::string le_f8("\x00\x00\x00\x00\x00\x00\xf0\x3f", 8);
  Tensor d = parse_npy(make_npy("{'descr': '=f8', 'fortran_order': False, 'shape': (), }", le_f8),
                       "npy file 'n.npy'");
  EXPECT_EQ(d.get_as_double(0), 1.0);
}

TEST(Npy, BoolBytesAreNormalized) {
  Tensor t = parse_npy(make_npy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                                std::string("\x00\x01\x07", 3)),
                       "npy file 'b.npy'");
  EXPECT_EQ(t.data_as<uint8_t>()[2], 1);
}

TEST(Npy, FortranOrderIsRejectedWithAClearMessage) {
  std::string message = error_of([] {
    parse_npy(make_npy("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }",
                       std::string(48, '\0')),
              "npy file 'f.npy'");
  });
  EXPECT_EQ(message.rfind("npy file 'f.npy': ", 0), 0u) << message;
  EXPECT_NE(message.find("is stored in Fortran order"), std::string::npos) << message;
  // With at most one dim above 1 both orders are the same bytes, as numpy knows.
  Tensor t = parse_npy(
      make_npy("{'descr': '<f8', 'fortran_order': True, 'shape': (1, 3), }", std::string(24, '\0')),
      "npy file 'f.npy'");
  EXPECT_EQ(t.numel(), 3);
}

TEST(Npy, UnsupportedDtypesAreRejected) {
  for (const char* descr : {"<c8", "|O", "<U3", "<f16", "|V2", "|f4", "<M8"}) {
    std::string message = error_of([&] {
      parse_npy(make_npy(std::string("{'descr': '") + descr +
                             "', 'fortran_order': False, 'shape': (1,), }",
                         std::string(16, '\0')),
                "npy file 'u.npy'");
    });
    EXPECT_EQ(message.rfind("npy file 'u.npy': ", 0), 0u) << descr << ": " << message;
    EXPECT_NE(message.find(descr), std::string::npos) << message;
  }
  std::string structured = error_of([] {
    parse_npy(make_npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }",
                       std::string(4, '\0')),
              "npy file 's.npy'");
  });
  EXPECT_NE(structured.find("structured"), std::string::npos) << structured;
}

TEST(Npy, Bfloat16AndVectorTypesAreRejectedOnWrite) {
  ScratchDir dir;
  std::string message =
      error_of([&] { write_npy(dir / "b.npy", Tensor::zeros({2}, DataType::bfloat16())); });
  EXPECT_NE(message.find("bfloat16"), std::string::npos) << message;
  EXPECT_NE(message.find("'" + (dir / "b.npy").string() + "'"), std::string::npos) << message;
  EXPECT_THROW(serialize_npy(Tensor::zeros({2}, DataType::float32().with_lanes(4))), Error);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(Npy, StridedTensorIsWrittenInLogicalOrder) {
  Tensor base = make_test_tensor(DataType::int32(), {2, 3});
  // The transpose of base, as a strided view over the same buffer.
  Tensor transposed = Tensor::wrap(base.data(), {3, 2}, DataType::int32(), {1, 3});
  Tensor back = parse_npy(serialize_npy(transposed), "npy file 't.npy'");
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 2; ++c)
      EXPECT_EQ(back.get_as_double(r * 2 + c), base.get_as_double(c * 3 + r));
}

TEST(Npz, RoundTripStoredAndCompressedKeepsOrder) {
  NamedTensors tensors;
  int salt = 0;
  for (const std::string& name : numpy_dtype_names())
    for (const auto& shape :
         {std::vector<int64_t>{}, std::vector<int64_t>{0, 3}, std::vector<int64_t>{5, 4}}) {
      tensors.emplace_back("z_" + name + "/" + std::to_string(salt),
                           make_test_tensor(DataType::parse(name), shape, salt));
      ++salt;
    }
  tensors.emplace_back("alpha", make_test_tensor(DataType::float32(), {3}));
  for (bool compress : {false, true}) {
    ScratchDir dir;
    write_npz(dir / "t.npz", tensors, compress);
    NamedTensors back = read_npz(dir / "t.npz");
    ASSERT_EQ(back.size(), tensors.size());
    for (size_t i = 0; i < back.size(); ++i) {
      EXPECT_EQ(back[i].first, tensors[i].first);
      expect_same_tensor(back[i].second, tensors[i].second, tensors[i].first);
    }
  }
}

TEST(Npz, CompressionShrinksRedundantData) {
  NamedTensors tensors{{"zeros", Tensor::zeros({256, 256}, DataType::float32())}};
  std::string stored = serialize_npz(tensors, false);
  std::string compressed = serialize_npz(tensors, true);
  EXPECT_GT(stored.size(), 256u * 256u * 4u);
  EXPECT_LT(compressed.size(), 4096u);
  expect_same_tensor(parse_npz(compressed, "npz file 'c.npz'")[0].second, tensors[0].second);
}

TEST(Npz, EmptyArchiveRoundTrips) {
  EXPECT_TRUE(parse_npz(serialize_npz({}, true), "npz file 'e.npz'").empty());
}

TEST(Npz, DuplicateNamesAreRejectedOnWrite) {
  ScratchDir dir;
  NamedTensors tensors{{"a", Tensor::zeros({1}, DataType::int8())},
                       {"a", Tensor::zeros({1}, DataType::int8())}};
  std::string message = error_of([&] { write_npz(dir / "d.npz", tensors, false); });
  EXPECT_NE(message.find("'a' appears twice"), std::string::npos) << message;
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

// Arrays numpy writes and anvil must read back exactly, named with what they hold.
struct NumpyCase {
  std::string name;
  DataType dtype;
  std::vector<int64_t> shape;
  std::string numpy_dtype;  // the on-disk dtype, which may be big-endian
};

std::vector<NumpyCase> numpy_cases() {
  std::vector<NumpyCase> cases;
  int i = 0;
  for (const std::string& name : numpy_dtype_names()) {
    DataType dtype = DataType::parse(name);
    cases.push_back({"c" + std::to_string(i++) + "_" + name, dtype, {3, 4}, ""});
  }
  cases.push_back({"scalar_f64", DataType::float64(), {}, ""});
  cases.push_back({"empty_i64", DataType::int64(), {0, 2}, ""});
  cases.push_back({"be_i32", DataType::int32(), {5}, ">i4"});
  cases.push_back({"be_f2", DataType::float16(), {2, 2}, ">f2"});
  cases.push_back({"be_u8", DataType::uint64(), {3}, ">u8"});
  return cases;
}

TEST(NpyNumpy, AnvilReadsWhatNumpyWrites) {
  ScratchDir dir;
  std::vector<NumpyCase> cases = numpy_cases();
  std::string code =
      "import numpy as np\n"
      "from numpy.lib import format as fmt\n"
      "arrays = {}\n";
  for (size_t i = 0; i < cases.size(); ++i) {
    code += "arrays['" + cases[i].name +
            "'] = " + numpy_test_array(cases[i].dtype, cases[i].shape, int(i));
    if (!cases[i].numpy_dtype.empty()) code += ".astype('" + cases[i].numpy_dtype + "')";
    code += "\n";
  }
  code +=
      "np.savez(os.path.join(out_dir, 'stored.npz'), **arrays)\n"
      "np.savez_compressed(os.path.join(out_dir, 'compressed.npz'), **arrays)\n"
      "for v in (1, 2, 3):\n"
      "    with open(os.path.join(out_dir, 'v%d.npy' % v), 'wb') as f:\n"
      "        fmt.write_array(f, arrays['c10_float32'], version=(v, 0))\n"
      "np.save(os.path.join(out_dir, 'be.npy'), arrays['be_f2'])\n";
  run_python(code, dir.path());

  for (const char* file : {"stored.npz", "compressed.npz"}) {
    NamedTensors tensors = read_npz(dir / file);
    ASSERT_EQ(tensors.size(), cases.size()) << file;
    for (size_t i = 0; i < cases.size(); ++i) {
      EXPECT_EQ(tensors[i].first, cases[i].name) << file;
      expect_same_tensor(tensors[i].second,
                         make_test_tensor(cases[i].dtype, cases[i].shape, int(i)),
                         std::string(file) + ": " + cases[i].name);
    }
  }
  for (int v : {1, 2, 3}) {
    std::string path = (dir / ("v" + std::to_string(v) + ".npy")).string();
    EXPECT_EQ(read_file(path)[6], char(v)) << "numpy did not write version " << v;
    expect_same_tensor(read_npy(path), make_test_tensor(DataType::float32(), {3, 4}, 10), path);
  }
  expect_same_tensor(read_npy(dir / "be.npy"), make_test_tensor(DataType::float16(), {2, 2}, 15));
}

TEST(NpyNumpy, NumpyReadsWhatAnvilWrites) {
  ScratchDir dir;
  NamedTensors tensors;
  std::string expected = "expected = {}\n";
  int salt = 0;
  for (const std::string& name : numpy_dtype_names()) {
    DataType dtype = DataType::parse(name);
    for (const auto& shape :
         {std::vector<int64_t>{}, std::vector<int64_t>{0}, std::vector<int64_t>{2, 3, 2}}) {
      std::string key = "layer" + std::to_string(salt) + "/" + name;
      tensors.emplace_back(key, make_test_tensor(dtype, shape, salt));
      expected += "expected['" + key + "'] = " + numpy_test_array(dtype, shape, salt) + "\n";
      ++salt;
    }
    write_npy(dir / (name + ".npy"), make_test_tensor(dtype, {4, 3}, 99));
  }
  write_npz(dir / "stored.npz", tensors, false);
  write_npz(dir / "compressed.npz", tensors, true);
  std::string code = "import numpy as np, zipfile\n" + expected +
                     "def same(a, e, what):\n"
                     "    assert a.dtype == e.dtype, (what, a.dtype, e.dtype)\n"
                     "    assert a.shape == e.shape, (what, a.shape, e.shape)\n"
                     "    assert np.array_equal(a, e), (what, a, e)\n"
                     "for name, method in (('stored.npz', 0), ('compressed.npz', 8)):\n"
                     "    path = os.path.join(out_dir, name)\n"
                     "    with np.load(path) as z:\n"
                     "        assert list(z.files) == list(expected), (z.files, list(expected))\n"
                     "        for k, e in expected.items():\n"
                     "            same(z[k], e, name + ':' + k)\n"
                     "    methods = {i.compress_type for i in zipfile.ZipFile(path).infolist()}\n"
                     "    assert methods == {method}, (name, methods)\n";
  for (const std::string& name : numpy_dtype_names())
    code += "same(np.load(os.path.join(out_dir, '" + name + ".npy')), " +
            numpy_test_array(DataType::parse(name), {4, 3}, 99) + ", '" + name + ".npy')\n";
  run_python(code, dir.path());
}

}  // namespace
}  // namespace anvil::testing
