// .npy reading and writing: round trips for every dtype, the exact bytes numpy itself writes,
// hand-written headers of every version and spelling numpy may produce, and bad files, each of
// which must be a SpecError naming the file (numpy is not needed: headers are written by hand).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include "kjudge/inputs.hpp"

namespace kj {
namespace {

class Npy : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kj_inputs_npy_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path path(const std::string& name) const { return dir_ / name; }

  static std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  static void spit(const std::filesystem::path& p, const std::string& bytes) {
    std::ofstream out(p, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  // A file with the given version, header text (padded to 64 as numpy does) and data bytes.
  static std::string npy_file(int major, std::string header, const std::string& data) {
    const std::size_t prefix = major == 1 ? 10 : 12;
    while ((prefix + header.size() + 1) % 64 != 0) header.push_back(' ');
    header.push_back('\n');
    std::string out("\x93NUMPY", 6);
    out.push_back(static_cast<char>(major));
    out.push_back(0);
    for (std::size_t i = 0; i < prefix - 8; ++i)
      out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
    return out + header + data;
  }
  template <class T>
  static std::string raw(std::initializer_list<T> values) {
    std::string s;
    for (const T v : values) s.append(reinterpret_cast<const char*>(&v), sizeof v);
    return s;
  }

  // read_npy must throw a SpecError whose location is the file and whose message says `what`.
  void expect_bad(const std::string& name, const std::string& bytes, const std::string& what) {
    spit(path(name), bytes);
    try {
      read_npy(path(name));
      ADD_FAILURE() << name << ": no SpecError";
    } catch (const SpecError& e) {
      EXPECT_EQ(e.where().file, path(name).string());
      EXPECT_NE(e.bare_message().find(what), std::string::npos)
          << name << ": '" << e.bare_message() << "' lacks '" << what << "'";
    }
  }

  std::filesystem::path dir_;
};

TEST_F(Npy, RoundTripEveryNumpyDtype) {
  for (const DType t : {DType::f64, DType::f32, DType::f16, DType::i64, DType::i32, DType::i16,
                        DType::i8, DType::u8, DType::boolean}) {
    HostTensor a(t, {3, 4});
    for (std::int64_t i = 0; i < a.numel(); ++i)
      a.set(i, t == DType::boolean ? static_cast<double>(i % 2) : static_cast<double>(i * 7 % 23) - 5);
    if (t == DType::u8) a.set(0, 255);
    const auto p = path(std::string(dtype_name(t)) + ".npy");
    write_npy(p, a);
    const HostTensor b = read_npy(p);
    EXPECT_EQ(b.dtype(), t) << dtype_name(t);
    EXPECT_EQ(b.shape(), a.shape()) << dtype_name(t);
    ASSERT_EQ(b.nbytes(), a.nbytes());
    EXPECT_EQ(std::memcmp(a.bytes().data(), b.bytes().data(), a.nbytes()), 0) << dtype_name(t);
    EXPECT_EQ(std::filesystem::file_size(p) % 64, a.nbytes() % 64) << "data starts 64-aligned";
  }
}

TEST_F(Npy, RoundTripKeepsSpecialFloats) {
  HostTensor a(DType::f32, {5});
  a.set(0, std::numeric_limits<double>::infinity());
  a.set(1, -0.0);
  a.set(2, std::nan(""));
  a.set(3, 0x1p-149);
  a.set(4, -std::numeric_limits<double>::infinity());
  write_npy(path("s.npy"), a);
  const HostTensor b = read_npy(path("s.npy"));
  EXPECT_EQ(std::memcmp(a.bytes().data(), b.bytes().data(), a.nbytes()), 0);
}

TEST_F(Npy, NarrowFloatsAreWrittenAsF32) {
  for (const DType t : {DType::bf16, DType::fp8e4m3, DType::fp8e5m2}) {
    HostTensor a(t, {2, 2});
    a.set(0, 1.5);
    a.set(1, -0.0);
    a.set(2, float_format(t).max_finite);
    a.set(3, float_format(t).min_subnormal);
    write_npy(path("n.npy"), a);
    const HostTensor b = read_npy(path("n.npy"));
    EXPECT_EQ(b.dtype(), DType::f32);
    EXPECT_EQ(b.shape(), a.shape());
    for (std::int64_t i = 0; i < 4; ++i) {
      EXPECT_EQ(b.get(i), a.get(i)) << dtype_name(t) << " " << i;
      EXPECT_EQ(std::signbit(b.get(i)), std::signbit(a.get(i)));
    }
  }
}

TEST_F(Npy, ZeroDimAndEmptyArrays) {
  HostTensor s(DType::f64, {});
  s.set(0, 3.25);
  write_npy(path("s.npy"), s);
  EXPECT_NE(slurp(path("s.npy")).find("'shape': ()"), std::string::npos);
  const HostTensor r = read_npy(path("s.npy"));
  EXPECT_TRUE(r.shape().empty());
  EXPECT_EQ(r.get(0), 3.25);
  HostTensor e(DType::i32, {0, 3});
  write_npy(path("e.npy"), e);
  const HostTensor re = read_npy(path("e.npy"));
  EXPECT_EQ(re.shape(), (Shape{0, 3}));
  EXPECT_EQ(re.numel(), 0);
  HostTensor one(DType::u8, {5});
  write_npy(path("o.npy"), one);
  EXPECT_NE(slurp(path("o.npy")).find("'shape': (5,)"), std::string::npos);
}

TEST_F(Npy, WritesTheBytesNumpyWrites) {
  // np.save(f, np.zeros((2, 3), np.float32)) with numpy >= 1.14.
  HostTensor a(DType::f32, {2, 3});
  write_npy(path("z.npy"), a);
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  header.push_back('\n');
  const std::string want = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + header +
                           std::string(24, '\0');
  EXPECT_EQ(slurp(path("z.npy")), want);
}

TEST_F(Npy, LongHeadersUseVersionTwo) {
  const Shape shape(22000, 1);  // "1, " per dim: a header over 64 KiB
  HostTensor a(DType::i8, shape);
  a.set(0, -7);
  write_npy(path("long.npy"), a);
  const std::string bytes = slurp(path("long.npy"));
  EXPECT_EQ(bytes[6], 2);
  const HostTensor b = read_npy(path("long.npy"));
  EXPECT_EQ(b.shape().size(), 22000u);
  EXPECT_EQ(b.get(0), -7.0);
}

TEST_F(Npy, ReadsHandWrittenHeaders) {
  const std::string ints = raw<std::int32_t>({1, -2, 3, -4, 5, -6});
  spit(path("v1.npy"), npy_file(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", ints));
  // Another key order, double quotes, Python 2 longs, no trailing comma, version 2.
  spit(path("v2.npy"), npy_file(2, "{\"shape\": (2L, 3L), \"fortran_order\": False, \"descr\": \"<i4\"}", ints));
  // Version 3 (UTF-8 header) and the native byte-order mark.
  spit(path("v3.npy"), npy_file(3, "{'descr':'=i4','fortran_order':False,'shape':(2,3,)}", ints));
  for (const char* name : {"v1.npy", "v2.npy", "v3.npy"}) {
    const HostTensor t = read_npy(path(name));
    EXPECT_EQ(t.dtype(), DType::i32) << name;
    EXPECT_EQ(t.shape(), (Shape{2, 3})) << name;
    EXPECT_EQ(t.get(0), 1.0) << name;
    EXPECT_EQ(t.get(5), -6.0) << name;
  }
  spit(path("b.npy"), npy_file(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                               std::string("\x01\x00\x01", 3)));
  EXPECT_EQ(read_npy(path("b.npy")).get(2), 1.0);
  spit(path("q.npy"), npy_file(1, "{'descr': '?', 'fortran_order': False, 'shape': (1,), }",
                               std::string("\x01", 1)));
  EXPECT_EQ(read_npy(path("q.npy")).dtype(), DType::boolean);
  spit(path("h.npy"), npy_file(1, "{'descr': '<f2', 'fortran_order': True, 'shape': (2,), }",
                               raw<std::uint16_t>({0x3c00, 0xc000})));  // 1-d: same layout
  const HostTensor h = read_npy(path("h.npy"));
  EXPECT_EQ(h.dtype(), DType::f16);
  EXPECT_EQ(h.get(0), 1.0);
  EXPECT_EQ(h.get(1), -2.0);
  spit(path("u.npy"), npy_file(1, "{'descr': '<u1', 'fortran_order': False, 'shape': (1,), }",
                               std::string("\xff", 1)));
  EXPECT_EQ(read_npy(path("u.npy")).get(0), 255.0);
}

TEST_F(Npy, BadFilesAreSpecErrorsNamingTheFile) {
  const std::string h23 = "'fortran_order': False, 'shape': (2, 3), }";
  const std::string f32x6 = raw<float>({1, 2, 3, 4, 5, 6});
  try {
    read_npy(path("missing.npy"));
    ADD_FAILURE() << "no SpecError";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.where().file, path("missing.npy").string());
  }
  expect_bad("empty.npy", "", "bad magic");
  expect_bad("magic.npy", "PK\x03\x04 not numpy at all", "bad magic");
  expect_bad("version.npy", std::string("\x93NUMPY\x04\x00\x10\x00", 10) + std::string(16, ' '),
             "version 4.0");
  expect_bad("nolen.npy", std::string("\x93NUMPY\x01\x00", 8), "truncated");
  expect_bad("header.npy", std::string("\x93NUMPY\x01\x00\x76\x00{'descr'", 17), "truncated");
  expect_bad("data.npy", npy_file(1, "{'descr': '<f4', " + h23, f32x6.substr(0, 20)),
             "truncated .npy file: shape (2, 3) of <f4 needs 24 bytes of data, the file holds 20");
  expect_bad("extra.npy", npy_file(1, "{'descr': '<f4', " + h23, f32x6 + "xxxx"),
             "28 bytes of data where shape (2, 3) of <f4 needs 24");
  expect_bad("big.npy", npy_file(1, "{'descr': '>f4', " + h23, f32x6), "big-endian");
  expect_bad("fortran.npy",
             npy_file(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", f32x6),
             "fortran_order True");
  expect_bad("u4.npy", npy_file(1, "{'descr': '<u4', " + h23, f32x6), "has no kjudge dtype");
  expect_bad("c8.npy", npy_file(1, "{'descr': '<c8', " + h23, f32x6), "has no kjudge dtype");
  expect_bad("obj.npy", npy_file(1, "{'descr': '|O', " + h23, f32x6), "not a dtype kjudge reads");
  expect_bad("pipe.npy", npy_file(1, "{'descr': '|f4', " + h23, f32x6), "one-byte types");
  expect_bad("struct.npy", npy_file(1, "{'descr': [('a', '<f4')], " + h23, f32x6),
             "structured dtypes");
  expect_bad("nokey.npy", npy_file(1, "{'descr': '<f4', 'shape': (2, 3), }", f32x6),
             "no 'fortran_order'");
  expect_bad("extrakey.npy", npy_file(1, "{'descr': '<f4', 'x': 1, " + h23, f32x6),
             "unexpected key 'x'");
  expect_bad("notuple.npy", npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6), }", f32x6),
             "not a tuple");
  expect_bad("negdim.npy", npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-6,), }", f32x6),
             "non-negative integer");
  expect_bad("huge.npy",
             npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", f32x6),
             "64 bits");
  expect_bad("garbage.npy", npy_file(1, "{'descr': '<f4', " + h23 + " junk", f32x6),
             "text after the header dict");
  expect_bad("bool.npy",
             npy_file(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", std::string("\x01\x02", 2)),
             "bool element 1 holds byte 2");
}

TEST_F(Npy, WriteToAnImpossiblePathIsASpecError) {
  const HostTensor a(DType::f32, {2});
  EXPECT_THROW(write_npy(dir_ / "no" / "such" / "dir" / "a.npy", a), SpecError);
}

}  // namespace
}  // namespace kj
