// Host entry points of kjudge's own log, exp and sincos. The algorithms are in
// detail/kjmath_impl.hpp, shared with the device; this file exists so host code calls one
// out-of-line copy compiled with -ffp-contract=off (the kj_inputs module's flag), whatever the
// caller's own flags are.
#include "kjudge/detail/kjmath_impl.hpp"
#include "kjudge/inputs.hpp"

namespace kj {

double kj_log(double x) { return detail::log_impl(x); }

double kj_exp(double x) { return detail::exp_impl(x); }

void kj_sincos(double x, double* s, double* c) { detail::sincos_impl(x, s, c); }

}  // namespace kj
