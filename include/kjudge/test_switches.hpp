// Test switches: KJ_TEST_DISABLE=poison,redzone,... turns defences off so that a defence's test
// can show its trap passing without it (the names: docs/design.md "Defences"). A check refuses
// them (ERROR(internal) naming them) unless the process allowed them: the CLI's
// --unsafe-test-switches, or a test; serve never does. Any in force is listed in the verdict
// (Verdict::defences_disabled), and a name the check does not know is refused, so a typo cannot
// leave a test's defence silently on.
#pragma once

namespace kj {

void allow_test_switches(bool allowed);
bool test_switches_allowed();

} // namespace kj
