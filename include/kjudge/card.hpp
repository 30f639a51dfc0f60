// Reading a problem's tolerance card (card.toml beside problem.toml, written by `kjudge card`,
// include/kjudge/audit.hpp): a check, a bench or a served request refuses a policy looser than
// the one the card records; tolerances only tighten.
#pragma once

#include <optional>
#include <string>

#include "kjudge/spec.hpp"

namespace kj {

// Whether policy `now` accepts more than `recorded` for an output of dtype `t`: a larger k,
// rtol, atol, ulps, threshold or fraction, a smaller cosine or topk agreement, or another kind
// than `recorded` (whose order cannot be told; `exact` recorded is looser than anything but
// itself). Defaults are resolved first (relative without k: the dtype's default).
bool policy_looser(const PolicySpec& now, const PolicySpec& recorded, DType t);

// A policy as written in problem.toml, or its kind's name where the problem wrote none.
std::string policy_text(const PolicySpec& p);

// Why `problem`'s policy is looser than its card records (one line naming the output, both
// policies and card.toml), or nullopt when it is not or there is no card. Throws kj::SpecError
// naming card.toml for a card that does not parse.
std::optional<std::string> card_refusal(const Problem& problem);

} // namespace kj
