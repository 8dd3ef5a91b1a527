// SPDX-License-Identifier: MIT
// The doctest runner, compiled once for every test binary.
//
// A run whose filters select no test case fails. CTest runs each case alone, by its name, and a
// name CTest cannot pass whole (CMake splits one with a ';' into two tests) would otherwise
// "pass" by running nothing.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <optional>

namespace {

// How many test cases the filters selected, once a run has ended (nothing after --help or a
// --list-* query, which run no test).
std::optional<unsigned> selected;

struct CountSelected final : doctest::IReporter {
  explicit CountSelected(const doctest::ContextOptions& /*options*/) {}
  void report_query(const doctest::QueryData& /*data*/) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override { selected = stats.numTestCasesPassingFilters; }
  void test_case_start(const doctest::TestCaseData& /*data*/) override {}
  void test_case_reenter(const doctest::TestCaseData& /*data*/) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& /*stats*/) override {}
  void test_case_exception(const doctest::TestCaseException& /*exception*/) override {}
  void subcase_start(const doctest::SubcaseSignature& /*signature*/) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData& /*data*/) override {}
  void log_message(const doctest::MessageData& /*data*/) override {}
  void test_case_skipped(const doctest::TestCaseData& /*data*/) override {}
};

REGISTER_LISTENER("count_selected", 1, CountSelected);

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (context.shouldExit() || result != 0) return result;
  if (selected && *selected == 0) {
    std::fputs("test runner: no test case matches the filters given, so nothing was tested\n", stderr);
    return 1;
  }
  return result;
}
