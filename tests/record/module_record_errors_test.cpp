// load_module / save_module failures: each is a burn::Error starting with
// "[load_module]" or "[save_module]" that names the file and what is wrong.
#include <gtest/gtest.h>

#include <burn/record/safetensors.hpp>

#include "module_record_test_util.hpp"

namespace burn::record {
namespace {

using burn::testing::expect_op_error;
using test::make_net;
using test::Net;
using test::TempDir;

// The tensors and metadata save_module writes for `net`, to tamper with.
SafetensorsFile saved_contents(const Net& net, const TempDir& dir) {
  save_module(net, dir / "orig.safetensors");
  return load_safetensors(dir / "orig.safetensors");
}

TEST(ModuleRecordErrors, MissingKeysAreListed) {
  TempDir dir;
  save_module(make_net(Device::flex(), 3, /*with_head=*/false), dir / "net.safetensors");
  const auto path = (dir / "net.safetensors").string();
  expect_op_error([&] { load_module(make_net(Device::flex()), dir / "net.safetensors"); }, "load_module",
                  path + ": missing keys (in the module, not in the file): head.weight, head.bias");
  // Not even a non-strict load fills them from nowhere.
  expect_op_error(
      [&] { load_module(make_net(Device::flex()), dir / "net.safetensors", LoadOptions{}.with_strict(false)); },
      "load_module", "missing keys");
}

TEST(ModuleRecordErrors, MissingAndUnexpectedKeysAreReportedTogether) {
  TempDir dir;
  SafetensorsFile f = saved_contents(make_net(Device::flex()), dir);
  f.tensors["head.w"] = f.tensors.at("head.weight");
  f.tensors.erase("head.weight");
  save_safetensors(dir / "renamed.safetensors", f.tensors, f.metadata);
  expect_op_error([&] { load_module(make_net(Device::flex()), dir / "renamed.safetensors"); }, "load_module",
                  "missing keys (in the module, not in the file): head.weight; the file has these keys the module "
                  "lacks: head.w");
}

TEST(ModuleRecordErrors, UnexpectedKeysAreAnErrorWhenStrict) {
  TempDir dir;
  save_module(make_net(Device::flex()), dir / "net.safetensors");
  expect_op_error([&] { load_module(make_net(Device::flex(), 3, false), dir / "net.safetensors"); }, "load_module",
                  "unexpected keys (in the file, not in the module): head.bias, head.weight; load with "
                  "LoadOptions{}.with_strict(false) to ignore them");
}

TEST(ModuleRecordErrors, ShapeMismatchNamesKeyExpectedAndFound) {
  TempDir dir;
  save_module(make_net(Device::flex(), 3), dir / "net.safetensors");
  try {
    load_module(make_net(Device::flex(), 4), dir / "net.safetensors");
    ADD_FAILURE() << "expected a shape mismatch";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[load_module] " + (dir / "net.safetensors").string() + ": ", 0), 0u) << msg;
    // Every mismatch at once, with the key, the module's shape and the file's.
    for (const char* part : {"shape mismatch for 'blocks.0.fc.weight': expected [4, 4], found [3, 3]",
                             "shape mismatch for 'blocks.0.norm.bias': expected [4], found [3]",
                             "shape mismatch for 'head.weight': expected [4, 2], found [3, 2]"})
      EXPECT_NE(msg.find(part), std::string::npos) << msg << "\nlacks: " << part;
  }
}

TEST(ModuleRecordErrors, KindMismatchIsAnError) {
  // Int data for a float parameter is not a dtype conversion but a wrong file.
  TempDir dir;
  SafetensorsFile f = saved_contents(make_net(Device::flex()), dir);
  f.tensors["steps"] = TensorData(std::vector<std::int64_t>{1, 2});
  save_safetensors(dir / "bad.safetensors", f.tensors, f.metadata);
  expect_op_error([&] { load_module(make_net(Device::flex()), dir / "bad.safetensors"); }, "load_module",
                  "'steps' holds int values (i64) but the module tensor is float (f32)");
}

TEST(ModuleRecordErrors, CorruptAndMissingFilesAreErrors) {
  TempDir dir;
  save_module(make_net(Device::flex()), dir / "net.safetensors");
  const auto bytes = test::read_bytes(dir / "net.safetensors");
  const Net model = make_net(Device::flex());

  test::write_bytes(dir / "truncated.safetensors", std::vector<std::byte>(bytes.begin(), bytes.end() - 9));
  expect_op_error([&] { load_module(model, dir / "truncated.safetensors"); }, "load_module",
                  (dir / "truncated.safetensors").string());
  test::write_bytes(dir / "garbage.safetensors", test::to_bytes("this is not a safetensors file at all"));
  expect_op_error([&] { load_module(model, dir / "garbage.safetensors"); }, "load_module",
                  (dir / "garbage.safetensors").string());
  test::write_bytes(dir / "empty.safetensors", {});
  expect_op_error([&] { load_module(model, dir / "empty.safetensors"); }, "load_module",
                  (dir / "empty.safetensors").string());
  expect_op_error([&] { load_module(model, dir / "nowhere.safetensors"); }, "load_module",
                  (dir / "nowhere.safetensors").string());
  // A directory is not a checkpoint either.
  expect_op_error([&] { load_module(model, dir.path()); }, "load_module", dir.path().string());
}

TEST(ModuleRecordErrors, CorruptMetadataIsAnError) {
  TempDir dir;
  SafetensorsFile f = saved_contents(make_net(Device::flex()), dir);
  auto bad = f.metadata;
  bad["burn.id.steps"] = "not-an-id";
  save_safetensors(dir / "bad_id.safetensors", f.tensors, bad);
  expect_op_error([&] { load_module(make_net(Device::flex()), dir / "bad_id.safetensors"); }, "load_module",
                  "corrupt metadata: \"burn.id.steps\" is 'not-an-id', not a parameter id");
  bad = f.metadata;
  bad["burn.layout"] = "sideways";
  save_safetensors(dir / "bad_layout.safetensors", f.tensors, bad);
  expect_op_error([&] { load_module(make_net(Device::flex()), dir / "bad_layout.safetensors"); }, "load_module",
                  "corrupt metadata: \"burn.layout\" is 'sideways'");
  bad = f.metadata;
  bad["burn.record_version"] = "2";
  save_safetensors(dir / "future.safetensors", f.tensors, bad);
  expect_op_error([&] { load_module(make_net(Device::flex()), dir / "future.safetensors"); }, "load_module",
                  "record version '2', this build reads version 1");
}

TEST(ModuleRecordErrors, BadKeyRemapRulesAreErrors) {
  TempDir dir;
  save_module(make_net(Device::flex()), dir / "net.safetensors");
  expect_op_error(
      [&] { load_module(make_net(Device::flex()), dir / "net.safetensors", LoadOptions{}.with_key_remap("([", "x")); },
      "load_module", "key_remap pattern '([' is not a valid regular expression");
  expect_op_error(
      [&] {
        load_module(make_net(Device::flex()), dir / "net.safetensors",
                    LoadOptions{}.with_key_remap("\\.(weight|bias)$", ".p"));
      },
      "load_module", "both become 'blocks.0.fc.p' after key_remap");
}

TEST(ModuleRecordErrors, ReservedMetadataKeysAreRejectedOnSave) {
  TempDir dir;
  for (const char* key : {"format", "burn.id.steps", "burn.layout"}) {
    expect_op_error(
        [&] {
          save_module(make_net(Device::flex()), dir / "net.safetensors", {{key, "x"}});
        },
        "save_module", std::string("metadata key '") + key + "' is reserved");
  }
  EXPECT_TRUE(dir.entries().empty());
}

TEST(ModuleRecordErrors, DuplicatePathsAreRejected) {
  // BURN_MODULE cannot produce two equal paths, but a hand-written visitor
  // can; a record could not tell such tensors apart.
  struct Duplicated {
    module::Param<Tensor<1>> w;
    void visit_fields(module::Visitor& v, const std::string& prefix) {
      v.param(module::detail::join_path(prefix, "w"), w);
      v.param(module::detail::join_path(prefix, "w"), w);
    }
  };
  TempDir dir;
  Duplicated d{module::Param(Tensor<1>::zeros(Shape{2}, Device::flex()))};
  expect_op_error([&] { save_module(d, dir / "d.safetensors"); }, "save_module",
                  "two module tensors share the path 'w'");
  save_safetensors(dir / "w.safetensors", {{"w", TensorData(std::vector<float>{1, 2})}});
  expect_op_error([&] { load_module(d, dir / "w.safetensors"); }, "load_module",
                  "two module tensors share the path 'w'");
}

}  // namespace
}  // namespace burn::record
