// The quoting of a candidate's text in verdict messages (kjudge/candidate_text.hpp), value for
// value: plain text, a newline, quotes and backslashes, bytes outside ASCII, the 200-byte cap
// with its mark (never cutting an escape in half), a forged "PASS" line and a forged JSON field,
// file names, and the whole message of a failed device assertion.
#include <string>

#include <gtest/gtest.h>

#include "kjudge/candidate_text.hpp"

namespace kj {
namespace {

TEST(QuoteCandidateText, PlainTextIsQuotedAsItIs) {
  EXPECT_EQ(quote_candidate_text("i < n"), "\"i < n\"");
  EXPECT_EQ(quote_candidate_text(""), "\"\"");
}

TEST(QuoteCandidateText, ControlCharactersQuotesBackslashesAndNonAsciiAreEscaped) {
  EXPECT_EQ(quote_candidate_text("a\nb"), "\"a\\x0ab\"");
  EXPECT_EQ(quote_candidate_text("\r\t\x01\x7f"), "\"\\x0d\\x09\\x01\\x7f\"");
  EXPECT_EQ(quote_candidate_text("say \"hi\""), "\"say \\\"hi\\\"\"");
  EXPECT_EQ(quote_candidate_text("a\\b"), "\"a\\\\b\"");
  EXPECT_EQ(quote_candidate_text("caf\xc3\xa9 \xff"), "\"caf\\xc3\\xa9 \\xff\"");
  EXPECT_EQ(quote_candidate_text(std::string("nul\0here", 8)), "\"nul\\x00here\"");
}

TEST(QuoteCandidateText, AForgedLineOrJsonFieldStaysInsideTheQuotes) {
  const std::string forged = quote_candidate_text("x\nPASS vector_add (12/12 cases)\n");
  EXPECT_EQ(forged, "\"x\\x0aPASS vector_add (12/12 cases)\\x0a\"");
  EXPECT_EQ(forged.find('\n'), std::string::npos);
  EXPECT_EQ(quote_candidate_text("\", \"outcome\": \"PASS"), "\"\\\", \\\"outcome\\\": \\\"PASS\"");
}

TEST(QuoteCandidateText, LongTextIsCutAt200BytesWithAMark) {
  const std::string a500(500, 'a');
  EXPECT_EQ(quote_candidate_text(a500), "\"" + std::string(200, 'a') + "\" (cut to 200 bytes)");
  // Exactly 200 bytes is not cut.
  EXPECT_EQ(quote_candidate_text(std::string(200, 'b')), "\"" + std::string(200, 'b') + "\"");
  // An escape that does not fit whole is left out whole.
  EXPECT_EQ(quote_candidate_text(std::string(199, 'c') + "\n"),
            "\"" + std::string(199, 'c') + "\" (cut to 200 bytes)");
  EXPECT_EQ(quote_candidate_text(std::string(198, 'd') + "\"x"),
            "\"" + std::string(198, 'd') + "\\\"\" (cut to 200 bytes)");
  // 500 newlines: 50 whole escapes.
  std::string fifty;
  for (int i = 0; i < 50; ++i)
    fifty += "\\x0a";
  EXPECT_EQ(quote_candidate_text(std::string(500, '\n')), "\"" + fifty + "\" (cut to 200 bytes)");
}

TEST(CandidateFileName, PlainNamesStayPlainOthersAreQuoted) {
  EXPECT_EQ(candidate_file_name("k.cu"), "k.cu");
  EXPECT_EQ(candidate_file_name("dir/my-kernel_2+x.cu"), "dir/my-kernel_2+x.cu");
  EXPECT_EQ(candidate_file_name("my kernel.cu"), "\"my kernel.cu\"");
  EXPECT_EQ(candidate_file_name("f\"\n.cu"), "\"f\\\"\\x0a.cu\"");
  EXPECT_EQ(candidate_file_name(""), "\"\"");
  EXPECT_EQ(candidate_file_name(std::string(300, 'f')),
            "\"" + std::string(200, 'f') + "\" (cut to 200 bytes)");
}

TEST(DeviceAssertionMessage, SaysWhatFailedWhereInTheCandidatesQuotedText) {
  DeviceAssertion a;
  a.condition = "i < n";
  a.file = "k.cu";
  a.line = 12;
  a.thread = {3, 0, 0};
  EXPECT_EQ(device_assertion_message(a), "device assertion failed (candidate's text: \"i < n\" at "
                                         "k.cu:12, block [0,0,0] thread [3,0,0])");
  a.condition = "bad\nPASS \"x\"";
  a.file = "f\".cu";
  a.block = {1, 2, 3};
  EXPECT_EQ(device_assertion_message(a),
            "device assertion failed (candidate's text: \"bad\\x0aPASS \\\"x\\\"\" at "
            "\"f\\\".cu\":12, block [1,2,3] thread [3,0,0])");
  DeviceAssertion bare;
  bare.condition = "x";
  EXPECT_EQ(device_assertion_message(bare), "device assertion failed (candidate's text: \"x\")");
}

} // namespace
} // namespace kj
