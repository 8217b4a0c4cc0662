// Interop with Python's safetensors: a committed fixture written by Python
// (always checked) and, when python3 has the package, a live round trip.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>

#include <burn/record/safetensors.hpp>

#include "record_test_util.hpp"

namespace burn::record {
namespace {

using test::read_bytes;
using test::TempDir;

// Written by fixtures/make_python_fixture.py (safetensors 0.8.0, numpy 2.4).
const std::filesystem::path kFixture =
    std::filesystem::path(__FILE__).parent_path() / "fixtures" / "python_fixture.safetensors";

std::vector<std::uint16_t> half_bits(const TensorData& t) {
  std::vector<std::uint16_t> bits;
  for (const f16 h : t.to_vec<f16>()) bits.push_back(h.bits);
  return bits;
}

TEST(SafetensorsInterop, LoadsAFileWrittenByPython) {
  const SafetensorsFile f = load_safetensors(kFixture);
  EXPECT_EQ(f.metadata, (std::map<std::string, std::string>{{"format", "np"}, {"producer", "python-safetensors"}}));
  EXPECT_EQ(f.tensors.size(), 14u);

  EXPECT_EQ(f.tensor("f64").shape(), (Shape{3}));
  EXPECT_EQ(f.tensor("f64").to_vec<double>(), (std::vector<double>{1.5, -2.25, 1e300}));
  EXPECT_EQ(f.tensor("f32").shape(), (Shape{2, 3}));
  EXPECT_EQ(f.tensor("f32").to_vec<float>(), (std::vector<float>{0.5f, -1.0f, 3.25f, 1e-3f, 100.0f, -0.0f}));
  EXPECT_TRUE(std::signbit(f.tensor("f32").to_vec<float>()[5]));
  EXPECT_EQ(half_bits(f.tensor("f16")), (std::vector<std::uint16_t>{0x3c00, 0xb800, 0x7bff, 0x2e66}));
  EXPECT_EQ(
      f.tensor("i64").to_vec<std::int64_t>(),
      (std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()}));
  EXPECT_EQ(f.tensor("i32").to_vec<std::int32_t>(), (std::vector<std::int32_t>{-7, 0, 2147483647}));
  EXPECT_EQ(f.tensor("i16").to_vec<std::int16_t>(), (std::vector<std::int16_t>{-32768, 12345}));
  EXPECT_EQ(f.tensor("i8").to_vec<std::int8_t>(), (std::vector<std::int8_t>{-128, 127, 5}));
  EXPECT_EQ(f.tensor("u64").to_vec<std::uint64_t>(),
            (std::vector<std::uint64_t>{std::numeric_limits<std::uint64_t>::max(), 3}));
  EXPECT_EQ(f.tensor("u32").to_vec<std::uint32_t>(), (std::vector<std::uint32_t>{4294967295u, 1}));
  EXPECT_EQ(f.tensor("u16").to_vec<std::uint16_t>(), (std::vector<std::uint16_t>{65535, 2}));
  EXPECT_EQ(f.tensor("u8").to_vec<std::uint8_t>(), (std::vector<std::uint8_t>{255, 0, 9}));
  EXPECT_EQ(f.tensor("bool").to_vec<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(f.tensor("scalar").shape().rank(), 0u);
  EXPECT_EQ(f.tensor("scalar").to_vec<float>(), std::vector<float>{42.0f});
  EXPECT_EQ(f.tensor("empty").shape(), (Shape{0, 3}));
  EXPECT_EQ(f.tensor("empty").dtype(), DType::F32);

  // Re-saving what Python wrote loses nothing.
  EXPECT_EQ(deserialize_safetensors(serialize_safetensors(f.tensors, f.metadata)).tensors, f.tensors);
}

// The interpreter for the live check: $BURN_TEST_PYTHON, else /usr/bin/python3.
std::string python() {
  const char* env = std::getenv("BURN_TEST_PYTHON");
  return env && *env ? env : "/usr/bin/python3";
}

int run(const std::string& command) { return std::system((command + " > /dev/null 2>&1").c_str()); }

TEST(SafetensorsInterop, LiveRoundTripWithPython) {
  const std::string py = python();
  if (run("'" + py + "' -c 'import safetensors.numpy, numpy'") != 0) {
    std::cout << "[   NOTE   ] live Python round trip NOT run: " << py
              << " cannot import safetensors and numpy (set BURN_TEST_PYTHON to an interpreter that can); "
                 "LoadsAFileWrittenByPython still checks a Python-written fixture\n";
    return;
  }
  TempDir dir;
  const auto from_py = dir / "from_python.safetensors";
  const auto from_cpp = dir / "from_cpp.safetensors";
  const auto py_tiny = dir / "python_tiny.safetensors";
  const auto script = dir / "interop.py";
  std::ofstream(script) << R"(import sys
import numpy as np
from safetensors.numpy import save_file, load_file, save
from safetensors import safe_open
mode, path = sys.argv[1], sys.argv[2]
if mode == "write":
    save_file({"w": np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5,
               "i": np.array([-5, 7], dtype=np.int64),
               "m": np.array([True, False]),
               "h": np.array([0.5, -4.0], dtype=np.float16)}, path, metadata={"who": "python"})
    with open(sys.argv[3], "wb") as f:
        f.write(save({"x": np.array([1.0, 2.0], dtype=np.float32)}))
else:
    t = load_file(path)
    assert sorted(t) == ["b", "e", "u", "w"], sorted(t)
    assert t["w"].dtype == np.float64 and t["w"].shape == (2, 2), t["w"]
    assert (t["w"] == np.array([[0.25, -1.0], [3.0, 1e-200]])).all(), t["w"]
    assert t["u"].dtype == np.uint16 and list(t["u"]) == [65535, 1], t["u"]
    assert t["b"].dtype == np.bool_ and list(t["b"]) == [False, True, True], t["b"]
    assert t["e"].dtype == np.int8 and t["e"].shape == (0, 4), t["e"]
    with safe_open(path, "np") as f:
        assert f.metadata() == {"who": "cpp", "step": "3"}, f.metadata()
)";

  ASSERT_EQ(run("'" + py + "' '" + script.string() + "' write '" + from_py.string() + "' '" + py_tiny.string() + "'"),
            0);
  const SafetensorsFile f = load_safetensors(from_py);
  EXPECT_EQ(f.metadata, (std::map<std::string, std::string>{{"who", "python"}}));
  EXPECT_EQ(f.tensor("w").shape(), (Shape{2, 3}));
  EXPECT_EQ(f.tensor("w").to_vec<float>(), (std::vector<float>{-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f}));
  EXPECT_EQ(f.tensor("i").to_vec<std::int64_t>(), (std::vector<std::int64_t>{-5, 7}));
  EXPECT_EQ(f.tensor("m").to_vec<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ(half_bits(f.tensor("h")), (std::vector<std::uint16_t>{0x3800, 0xc400}));
  // Byte for byte the same file as Python writes for the same tensor.
  EXPECT_EQ(serialize_safetensors({{"x", TensorData(std::vector<float>{1.0f, 2.0f})}}), read_bytes(py_tiny));

  save_safetensors(from_cpp,
                   {{"w", TensorData(std::vector<double>{0.25, -1.0, 3.0, 1e-200}, Shape{2, 2})},
                    {"u", TensorData(std::vector<std::uint16_t>{65535, 1})},
                    {"b", TensorData(std::vector<bool>{false, true, true})},
                    {"e", TensorData::zeros(Shape{0, 4}, DType::I8)}},
                   {{"who", "cpp"}, {"step", "3"}});
  EXPECT_EQ(run("'" + py + "' '" + script.string() + "' read '" + from_cpp.string() + "'"), 0)
      << "Python could not read or verify " << from_cpp << " (rerun the script by hand to see why)";
}

}  // namespace
}  // namespace burn::record
