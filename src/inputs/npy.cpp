// Reading and writing numpy .npy files, for file("x.npy") inputs and for dumping tensors a user
// can open in numpy. The header is a Python dict literal; this reads the small subset numpy
// writes (string keys, a descriptor string, True/False, a tuple of integers) and refuses
// everything else with a message naming the file, because a file is user input: a bad one must
// end in a SpecError, never a crash or a silently misread array.
#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "kjudge/inputs.hpp"

namespace kj {
namespace {

static_assert(std::endian::native == std::endian::little,
              "npy data is read and written as little-endian memory images");

constexpr char magic[] = "\x93NUMPY";
constexpr std::size_t magic_size = 6;
constexpr std::size_t header_align = 64;  // numpy aligns the data start to 64 bytes

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw SpecError(Location{path.string(), "", 0, 0}, what);
}

// A cursor over the header text with the few Python literal forms numpy writes.
class HeaderParser {
public:
  HeaderParser(std::string_view text, const std::filesystem::path& path)
      : text_(text), path_(path) {}

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool at_end() {
    skip_space();
    return pos_ >= text_.size();
  }
  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool accept(char c) {
    if (!peek(c)) return false;
    ++pos_;
    return true;
  }
  void expect(char c, std::string_view what) {
    if (!accept(c)) error(fmt::format("expected '{}' {}", c, what));
  }
  std::string string_literal() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      error("expected a quoted string");
    const char quote = text_[pos_++];
    const std::size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) error("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    if (s.find('\\') != std::string::npos) error("escapes in strings are not supported");
    pos_ = end + 1;
    return s;
  }
  bool boolean_literal() {
    skip_space();
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    error("expected True or False");
  }
  std::int64_t integer_literal() {
    skip_space();
    const std::size_t start = pos_;
    std::int64_t v = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const int digit = text_[pos_] - '0';
      if (v > (INT64_MAX - digit) / 10) error("a dimension does not fit in 64 bits");
      v = v * 10 + digit;
      ++pos_;
    }
    if (pos_ == start) error("expected a non-negative integer dimension");
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2 long suffix
    return v;
  }
  Shape tuple_literal() {
    expect('(', "to open the shape tuple");
    Shape shape;
    bool need_comma_for_one = true;
    while (!accept(')')) {
      shape.push_back(integer_literal());
      if (accept(',')) {
        need_comma_for_one = false;
        continue;
      }
      need_comma_for_one = shape.size() == 1;
      expect(')', "or ',' in the shape tuple");
      break;
    }
    // "(5)" is an int in Python, not a tuple; numpy never writes it.
    if (shape.size() == 1 && need_comma_for_one) error("shape '(n)' is not a tuple; expected '(n,)'");
    return shape;
  }

  [[noreturn]] void error(const std::string& what) const {
    fail(path_, fmt::format("bad .npy header at character {}: {} (header: {})", pos_ + 1, what,
                            text_));
  }

private:
  std::string_view text_;
  const std::filesystem::path& path_;
  std::size_t pos_ = 0;
};

struct Header {
  DType dtype = DType::f32;
  Shape shape;
};

DType parse_descr(const std::string& descr, const std::filesystem::path& path) {
  const auto unsupported = [&](const std::string& why) -> DType {
    fail(path, fmt::format("dtype '{}' {}; supported: <f8 <f4 <f2 <i8 <i4 <i2 |i1 |u1 |b1", descr,
                           why));
  };
  if (descr == "?" || descr == "|?") return DType::boolean;
  std::string_view d = descr;
  char order = '=';
  if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=')) {
    order = d[0];
    d.remove_prefix(1);
  }
  if (d.size() < 2) return unsupported("is not a dtype kjudge reads");
  const char kind = d[0];
  const std::string_view size_text = d.substr(1);
  if (!std::all_of(size_text.begin(), size_text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return unsupported("is not a dtype kjudge reads");
  const int size = size_text.size() > 2 ? 0 : std::stoi(std::string(size_text));
  std::optional<DType> t;
  if (kind == 'f' && size == 8) t = DType::f64;
  if (kind == 'f' && size == 4) t = DType::f32;
  if (kind == 'f' && size == 2) t = DType::f16;
  if (kind == 'i' && size == 8) t = DType::i64;
  if (kind == 'i' && size == 4) t = DType::i32;
  if (kind == 'i' && size == 2) t = DType::i16;
  if (kind == 'i' && size == 1) t = DType::i8;
  if (kind == 'u' && size == 1) t = DType::u8;
  if (kind == 'b' && size == 1) t = DType::boolean;
  if (!t) return unsupported("has no kjudge dtype");
  if (size > 1 && order == '>')
    fail(path, fmt::format("dtype '{}' is big-endian; kjudge reads little-endian data only "
                           "(numpy: a.astype(a.dtype.newbyteorder('<')))",
                           descr));
  if (size > 1 && order == '|')
    fail(path, fmt::format("dtype '{}': byte order '|' is for one-byte types only", descr));
  return *t;
}

Header parse_header(std::string_view text, const std::filesystem::path& path) {
  HeaderParser p(text, path);
  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<Shape> shape;
  p.expect('{', "at the start of the header dict");
  while (!p.accept('}')) {
    const std::string key = p.string_literal();
    p.expect(':', "after a key");
    if (key == "descr") {
      if (p.peek('[')) p.error("structured dtypes (a descr list) are not supported");
      descr = p.string_literal();
    } else if (key == "fortran_order") {
      fortran = p.boolean_literal();
    } else if (key == "shape") {
      shape = p.tuple_literal();
    } else {
      p.error(fmt::format("unexpected key '{}' (numpy writes only descr, fortran_order, shape)",
                          key));
    }
    if (!p.accept(',')) {
      p.expect('}', "or ',' after a value");
      break;
    }
  }
  if (!p.at_end()) p.error("text after the header dict");
  if (!descr) fail(path, "the .npy header has no 'descr'");
  if (!fortran) fail(path, "the .npy header has no 'fortran_order'");
  if (!shape) fail(path, "the .npy header has no 'shape'");
  Header h;
  h.dtype = parse_descr(*descr, path);
  h.shape = *shape;
  // Fortran order is a different memory layout only with two or more dims.
  if (*fortran && h.shape.size() > 1)
    fail(path, "fortran_order True is not supported; save a C-order array "
               "(numpy: np.save(path, np.ascontiguousarray(a)))");
  return h;
}

std::uint32_t read_le(const std::vector<char>& bytes, std::size_t at, std::size_t n) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < n; ++i)
    v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return v;
}

std::string_view npy_descr(DType t) {
  switch (t) {
    case DType::f64: return "<f8";
    case DType::f32: return "<f4";
    case DType::f16: return "<f2";
    case DType::i64: return "<i8";
    case DType::i32: return "<i4";
    case DType::i16: return "<i2";
    case DType::i8: return "|i1";
    case DType::u8: return "|u1";
    case DType::boolean: return "|b1";
    default: return "";
  }
}

std::string shape_tuple(const Shape& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

}  // namespace

HostTensor read_npy(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open the .npy file");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail(path, "error while reading the .npy file");

  if (bytes.size() < magic_size + 2 || std::memcmp(bytes.data(), magic, magic_size) != 0)
    fail(path, "not a .npy file (bad magic; expected \\x93NUMPY)");
  const int major = static_cast<unsigned char>(bytes[6]);
  const int minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail(path, fmt::format("unsupported .npy format version {}.{} (1.0, 2.0, 3.0 are read)", major,
                           minor));
  const std::size_t len_size = major == 1 ? 2 : 4;
  const std::size_t header_start = magic_size + 2 + len_size;
  if (bytes.size() < header_start) fail(path, "truncated .npy file: no header length");
  const std::size_t header_len = read_le(bytes, magic_size + 2, len_size);
  if (bytes.size() - header_start < header_len)
    fail(path, fmt::format("truncated .npy file: the header claims {} bytes, {} remain",
                           header_len, bytes.size() - header_start));
  // Versions 1 and 2 have a latin-1 header, 3 a UTF-8 one; the subset read here is ASCII.
  const std::string_view header_text(bytes.data() + header_start, header_len);
  const Header h = parse_header(header_text, path);

  std::int64_t numel = 0;
  try {
    numel = checked_numel(h.shape);
  } catch (const SizeOverflow&) {
    fail(path, fmt::format("shape {} has more elements than fit in 64 bits", shape_string(h.shape)));
  }
  const std::size_t item = dtype_size(h.dtype);
  const auto count = static_cast<std::uint64_t>(numel);
  if (count > UINT64_MAX / item) fail(path, "the array's byte size overflows");
  const std::uint64_t need = count * item;
  const std::uint64_t have = bytes.size() - header_start - header_len;
  if (have < need)
    fail(path, fmt::format("truncated .npy file: shape {} of {} needs {} bytes of data, the file "
                           "holds {}",
                           shape_tuple(h.shape), npy_descr(h.dtype), need, have));
  if (have > need)
    fail(path, fmt::format("{} bytes of data where shape {} of {} needs {}: the shape does not "
                           "describe the data",
                           have, shape_tuple(h.shape), npy_descr(h.dtype), need));

  HostTensor t(h.dtype, h.shape);
  KJ_EXPECTS(t.nbytes() == need, "HostTensor holds numel * dtype_size bytes");
  if (need > 0) std::memcpy(t.bytes().data(), bytes.data() + header_start + header_len, need);
  if (h.dtype == DType::boolean) {
    const auto* b = reinterpret_cast<const unsigned char*>(t.bytes().data());
    for (std::uint64_t i = 0; i < need; ++i)
      if (b[i] > 1)
        fail(path, fmt::format("bool element {} holds byte {}; a bool is 0 or 1", i, b[i]));
  }
  return t;
}

void write_npy(const std::filesystem::path& path, const HostTensor& tensor) {
  const DType t = tensor.dtype();
  // numpy has no bf16 or fp8: f32 holds all their values exactly.
  const bool widen = npy_descr(t).empty();
  const HostTensor wide = widen ? tensor.converted(DType::f32) : HostTensor{};
  const HostTensor& src = widen ? wide : tensor;

  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                   npy_descr(src.dtype()), shape_tuple(src.shape()));
  std::size_t prefix = magic_size + 2 + 2;
  int major = 1;
  const auto padded = [&](std::size_t pre) {
    return (pre + header.size() + 1 + header_align - 1) / header_align * header_align - pre;
  };
  if (padded(prefix) > 0xffff) {  // the 1.0 header length is 16 bits
    major = 2;
    prefix = magic_size + 2 + 4;
  }
  const std::size_t len = padded(prefix);
  header.append(len - header.size() - 1, ' ');
  header.push_back('\n');

  std::string head(magic, magic_size);
  head.push_back(static_cast<char>(major));
  head.push_back(0);
  for (std::size_t i = 0; i < prefix - magic_size - 2; ++i)
    head.push_back(static_cast<char>((len >> (8 * i)) & 0xff));

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(path, "cannot create the .npy file");
  out.write(head.data(), static_cast<std::streamsize>(head.size()));
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(src.bytes().data()),
            static_cast<std::streamsize>(src.nbytes()));
  out.close();
  if (!out) fail(path, "error while writing the .npy file");
}

}  // namespace kj
