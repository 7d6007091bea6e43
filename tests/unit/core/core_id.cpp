#define CAF_SUITE core_id
#include <caf/test/unit_test.hpp>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/base/id.hpp"

using namespace sreh;

CAF_TEST(shape) {
  test_clock clk;
  id_generator gen{clk};
  auto id = gen.next("run");
  CAF_CHECK_EQUAL(id.size(), 4u + 26u);
  CAF_CHECK_EQUAL(id.substr(0, 4), std::string("run_"));
  CAF_CHECK(is_valid_id(id, "run"));
  CAF_CHECK(!is_valid_id(id, "evt"));
  CAF_CHECK(!is_valid_id(id, "ru"));
}

CAF_TEST(timestamp prefix encodes the millisecond) {
  // 1'700'000'000'000 ms = 0x18BCFE56800 → ULID time part "01HF7YAT00".
  test_clock clk{1'700'000'000'000'000};
  id_generator gen{clk};
  CAF_CHECK_EQUAL(gen.next("x").substr(2, 10), std::string("01HF7YAT00"));
  clk.set_us(0);
  id_generator gen0{clk};
  CAF_CHECK_EQUAL(gen0.next("x").substr(2, 10), std::string("0000000000"));
}

CAF_TEST(monotonic within one millisecond and across) {
  test_clock clk;
  id_generator gen{clk};
  std::string prev = gen.next("evt");
  for (int i = 0; i < 10'000; ++i) {
    if (i % 1000 == 0)
      clk.advance_us(1000);
    auto id = gen.next("evt");
    if (!(prev < id)) {
      CAF_ERROR("not increasing: " << prev << " then " << id);
      return;
    }
    prev = id;
  }
  CAF_CHECK(true);
}

CAF_TEST(clock going back keeps the order) {
  test_clock clk;
  id_generator gen{clk};
  auto a = gen.next("run");
  clk.advance_us(-5'000'000);
  auto b = gen.next("run");
  CAF_CHECK_LESS(a, b);
}

CAF_TEST(two generators differ in the random part) {
  test_clock clk;
  id_generator g1{clk};
  id_generator g2{clk};
  CAF_CHECK_NOT_EQUAL(g1.next("run"), g2.next("run"));
}

CAF_TEST(unique across threads) {
  system_clock clk;
  id_generator gen{clk};
  std::vector<std::vector<std::string>> out(4);
  std::vector<std::thread> threads;
  for (auto& v : out)
    threads.emplace_back([&gen, &v] {
      for (int i = 0; i < 5000; ++i)
        v.push_back(gen.next("s"));
    });
  for (auto& t : threads)
    t.join();
  std::set<std::string> all;
  for (auto& v : out)
    all.insert(v.begin(), v.end());
  CAF_CHECK_EQUAL(all.size(), 20'000u);
}

CAF_TEST(is_valid_id rejects bad shapes) {
  CAF_CHECK(is_valid_id("run_01HF7YAT00ABCDEFGHJKMNPQRS", "run"));
  CAF_CHECK(!is_valid_id("run_01HF7YAT00ABCDEFGHJKMNPQR", "run"));   // 25 chars
  CAF_CHECK(!is_valid_id("run_01HF7YAT00ABCDEFGHJKMNPQRST", "run")); // 27 chars
  CAF_CHECK(!is_valid_id("run-01HF7YAT00ABCDEFGHJKMNPQRS", "run"));  // separator
  CAF_CHECK(!is_valid_id("run_01HF7YAT00ABCDEFGHJKMNPQRI", "run"));  // I not in Crockford
  CAF_CHECK(!is_valid_id("run_01hf7yat00abcdefghjkmnpqrs", "run"));  // lowercase
  CAF_CHECK(!is_valid_id("run_81HF7YAT00ABCDEFGHJKMNPQRS", "run"));  // overflows 128 bits
  CAF_CHECK(!is_valid_id("", "run"));
}
