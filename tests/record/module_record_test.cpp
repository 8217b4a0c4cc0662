// save_module -> load_module round trips: values bit for bit, ids, dtype
// conversion, running state, devices and autodiff leaves, key remapping.
#include <gtest/gtest.h>

#include <burn/record/safetensors.hpp>

#include "module_record_test_util.hpp"

namespace burn::record {
namespace {

using test::Entry;
using test::make_net;
using test::Net;
using test::snapshot;
using test::TempDir;

const std::vector<std::string> kNetPaths{"blocks.0.fc.weight",
                                         "blocks.0.fc.bias",
                                         "blocks.0.norm.weight",
                                         "blocks.0.norm.bias",
                                         "blocks.1.fc.weight",
                                         "blocks.1.fc.bias",
                                         "blocks.1.norm.weight",
                                         "blocks.1.norm.bias",
                                         "head.weight",
                                         "head.bias",
                                         "steps",
                                         "counter"};

TEST(ModuleRecord, RoundTripRestoresEveryTensorBitwiseWithItsId) {
  for (const auto& device : burn::testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    TempDir dir;
    const Net saved = make_net(device);
    save_module(saved, dir / "net.safetensors");
    const Net fresh = make_net(device);  // other values, other ids
    const Net loaded = load_module(fresh, dir / "net.safetensors");

    const auto want = snapshot(saved), got = snapshot(loaded), before = snapshot(fresh);
    ASSERT_EQ(test::paths_of(got), kNetPaths);
    for (std::size_t i = 0; i < want.size(); ++i) {
      SCOPED_TRACE(want[i].path);
      EXPECT_EQ(got[i].data, want[i].data);  // same shape, dtype and bytes
      EXPECT_EQ(got[i].id, want[i].id);
      EXPECT_NE(before[i].id, want[i].id);
      EXPECT_EQ(got[i].device, device);
    }
    // The input module is a value: loading returned a new one.
    EXPECT_EQ(snapshot(fresh)[0].data, before[0].data);
    // And it computes what the saved one computes.
    auto x = Tensor<2>::random(Shape{4, 3}, Distribution::Default, device);
    EXPECT_EQ(loaded.forward(x).to_data(), saved.forward(x).to_data());
  }
}

TEST(ModuleRecord, FileHoldsDottedKeysFormatIdsAndUserMetadata) {
  TempDir dir;
  const Net net = make_net(Device::flex());
  save_module(net, dir / "net.safetensors", {{"epoch", "7"}, {"note", "best so far"}});
  const SafetensorsFile f = load_safetensors(dir / "net.safetensors");
  EXPECT_EQ(f.tensors.size(), kNetPaths.size());
  for (const auto& e : snapshot(net)) {
    SCOPED_TRACE(e.path);
    EXPECT_EQ(f.tensor(e.path), e.data);  // Burn layout: Linear weights as stored, [d_input, d_output]
    EXPECT_EQ(f.metadata.at("burn.id." + e.path), e.id.to_string());
  }
  EXPECT_EQ(f.metadata.at("format"), "burn-cpp");
  EXPECT_EQ(f.metadata.at("burn.layout"), "burn");
  EXPECT_EQ(f.metadata.at("burn.record_version"), "1");
  EXPECT_EQ(f.metadata.at("epoch"), "7");
  EXPECT_EQ(f.metadata.at("note"), "best so far");
  EXPECT_EQ(f.metadata.size(), 5 + kNetPaths.size());
}

TEST(ModuleRecord, LoadsOntoTheDeviceOfEachModuleTensor) {
  const auto devices = burn::testing::all_devices();
  if (devices.size() < 2) GTEST_SKIP() << "needs two devices";
  TempDir dir;
  const Net saved = make_net(devices[0]);
  save_module(saved, dir / "net.safetensors");
  const Net loaded = load_module(make_net(devices[1]), dir / "net.safetensors");
  const auto want = snapshot(saved), got = snapshot(loaded);
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].device, devices[1]) << got[i].path;
    EXPECT_EQ(got[i].data, want[i].data) << got[i].path;
  }
}

TEST(ModuleRecord, ConvertsValuesToEachTensorsDtype) {
  const Device device = Device::flex();
  TempDir dir;
  const Net f32 = make_net({device, DType::F32});
  save_module(f32, dir / "f32.safetensors");
  for (const DType target : {DType::F64, DType::BF16, DType::F16}) {
    SCOPED_TRACE(dtype_name(target));
    const Net loaded = load_module(make_net({device, target}), dir / "f32.safetensors");
    const auto want = snapshot(f32), got = snapshot(loaded);
    for (std::size_t i = 0; i < want.size(); ++i) {
      SCOPED_TRACE(want[i].path);
      // Float tensors take the module's dtype, converted exactly as TensorData does; the int state stays int.
      const DType expected = is_float(want[i].data.dtype()) ? target : want[i].data.dtype();
      EXPECT_EQ(got[i].data.dtype(), expected);
      EXPECT_EQ(got[i].data, want[i].data.convert(expected));
      EXPECT_EQ(got[i].id, want[i].id);
    }
  }
  // And down: an f64 checkpoint into an f32 model rounds to nearest.
  const Net f64 = make_net({device, DType::F64});
  save_module(f64, dir / "f64.safetensors");
  const auto got = snapshot(load_module(make_net({device, DType::F32}), dir / "f64.safetensors"));
  const auto want = snapshot(f64);
  EXPECT_EQ(got[0].data.dtype(), DType::F32);
  EXPECT_EQ(got[0].data, want[0].data.convert(DType::F32));
}

TEST(ModuleRecord, RunningStateIsRestoredAndStaysUntrained) {
  TempDir dir;
  Net saved = make_net(Device::flex());
  saved.steps.update(Tensor<1>::from_floats({12.5, -0.25}, Device::flex()));
  saved.counter.update(Tensor<1, Int>::from_ints({41, 0}, Device::flex()));
  save_module(saved, dir / "net.safetensors");
  const Net loaded = load_module(make_net(Device::flex()), dir / "net.safetensors");
  burn::testing::expect_values(loaded.steps->to_data(), {12.5, -0.25}, Shape{2});
  burn::testing::expect_values(loaded.counter->to_data(), {41, 0}, Shape{2});
  EXPECT_FALSE(loaded.steps.is_trainable());
  EXPECT_EQ(loaded.steps.id(), saved.steps.id());
  EXPECT_EQ(loaded.counter.id(), saved.counter.id());
  EXPECT_EQ(loaded.num_params(), saved.num_params());
}

#if BURN_HAS_AUTODIFF
TEST(ModuleRecord, AutodiffModulesComeBackAsTrainableLeaves) {
  TempDir dir;
  const Net saved = make_net(Device::flex());
  save_module(saved, dir / "net.safetensors");
  const Device ad = Device::flex().autodiff();
  const Net loaded = load_module(make_net(ad), dir / "net.safetensors");

  module::for_each_param(loaded, [&](const std::string& path, const module::ParamBase& p) {
    EXPECT_TRUE(p.ref()->device.is_autodiff()) << path;
    EXPECT_TRUE(p.is_trainable()) << path;
    EXPECT_TRUE(burn::detail::is_require_grad(p.ref())) << path << " is not a leaf collecting gradients";
  });
  EXPECT_FALSE(burn::detail::is_require_grad(loaded.steps->ref()));
  const auto want = snapshot(saved), got = snapshot(loaded);
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i].data, want[i].data) << want[i].path;

  // Gradients reach every loaded parameter.
  const auto x = Tensor<2>::random(Shape{4, 3}, Distribution::Default, ad);
  const Gradients grads = loaded.forward(x).sum().backward();
  for (const auto& block : loaded.blocks) {
    EXPECT_TRUE(block.fc.weight.grad(grads).has_value());
    EXPECT_TRUE(block.norm.bias.grad(grads).has_value());
  }
  EXPECT_TRUE(loaded.head->weight.grad(grads).has_value());

  // A frozen module stays frozen.
  const Net frozen = load_module(make_net(ad).no_grad(), dir / "net.safetensors");
  module::for_each_param(frozen, [&](const std::string& path, const module::ParamBase& p) {
    EXPECT_FALSE(p.is_trainable()) << path;
    EXPECT_FALSE(burn::detail::is_require_grad(p.ref())) << path;
  });
}

TEST(ModuleRecord, ForkedModulesKeepTheirIdsThroughSaveAndLoad) {
  // The optimiser keys state by id: train on an autodiff fork, save, reload
  // into a freshly built model, and the ids are the trained model's.
  TempDir dir;
  const Net trained = make_net(Device::flex()).fork(Device::flex().autodiff());
  save_module(trained, dir / "net.safetensors");
  const Net resumed = load_module(make_net(Device::flex().autodiff()), dir / "net.safetensors");
  const auto want = snapshot(trained), got = snapshot(resumed);
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i].id, want[i].id) << want[i].path;
}
#endif

TEST(ModuleRecord, AFileWithoutIdsKeepsTheModulesIds) {
  // A plain safetensors file (e.g. from another tool) carries no ids.
  TempDir dir;
  const Net source = make_net(Device::flex());
  std::map<std::string, TensorData> tensors;
  for (const auto& e : snapshot(source)) tensors.emplace(e.path, e.data);
  save_safetensors(dir / "plain.safetensors", tensors);
  const Net target = make_net(Device::flex());
  const auto got = snapshot(load_module(target, dir / "plain.safetensors"));
  const auto ids = snapshot(target), want = snapshot(source);
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].id, ids[i].id) << got[i].path;
    EXPECT_EQ(got[i].data, want[i].data) << got[i].path;
  }
}

TEST(ModuleRecord, KeyRemapRenamesFileKeysBeforeMatching) {
  TempDir dir;
  const Net source = make_net(Device::flex());
  std::map<std::string, TensorData> tensors;
  for (const auto& e : snapshot(source)) {
    // As another program might name them: layers.N.linear.*, layers.N.ln.*
    std::string key = e.path;
    if (key.starts_with("blocks.")) key.replace(0, 6, "layers");
    if (const auto p = key.find(".fc."); p != std::string::npos) key.replace(p, 4, ".linear.");
    if (const auto p = key.find(".norm."); p != std::string::npos) key.replace(p, 6, ".ln.");
    tensors.emplace(key, e.data);
  }
  save_safetensors(dir / "renamed.safetensors", tensors);
  const auto opts = LoadOptions{}
                        .with_key_remap("^layers\\.", "blocks.")
                        .with_key_remap("\\.linear\\.", ".fc.")
                        .with_key_remap("\\.ln\\.(weight|bias)$", ".norm.$1");
  const auto got = snapshot(load_module(make_net(Device::flex()), dir / "renamed.safetensors", opts));
  const auto want = snapshot(source);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].data, want[i].data) << got[i].path;
}

TEST(ModuleRecord, NonStrictLoadIgnoresExtraKeys) {
  TempDir dir;
  const Net with_head = make_net(Device::flex());
  save_module(with_head, dir / "net.safetensors");
  const Net loaded =
      load_module(make_net(Device::flex(), 3, false), dir / "net.safetensors", LoadOptions{}.with_strict(false));
  EXPECT_FALSE(loaded.head.has_value());
  EXPECT_EQ(loaded.blocks[1].norm.weight->to_data(), with_head.blocks[1].norm.weight->to_data());
}

TEST(ModuleRecord, EmptyModuleRoundTrips) {
  struct Empty {
    BURN_MODULE()
  };
  TempDir dir;
  save_module(Empty{}, dir / "empty.safetensors", {{"k", "v"}});
  EXPECT_EQ(load_safetensors(dir / "empty.safetensors").metadata.at("k"), "v");
  load_module(Empty{}, dir / "empty.safetensors");
}

}  // namespace
}  // namespace burn::record
