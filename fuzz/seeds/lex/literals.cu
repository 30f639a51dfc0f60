auto a = u8"x" u"y" U"z" L"w" R"d(raw )" still)d" LR"(q)";
char c = '\'', d = u'x', e = u8'y';
[[nodiscard]] [[gnu::aligned(16), deprecated("]]")]] int g;
int h = 1 <=> 2 ->* 3 ... ## a <<= b >>= c :: d;
# error don't
/* unterminated
