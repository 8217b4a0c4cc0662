#include "backends/vulkan/pipelines.hpp"

#include <unordered_map>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/vulkan/shader_registry.hpp"
#include "backends/vulkan/vk_check.hpp"

namespace burn::vulkan {
namespace {

const ShaderBinary* find_shader(std::string_view name) {
  static const auto index = [] {
    std::unordered_map<std::string_view, const ShaderBinary*> m;
    for (const auto& s : all_shaders()) m.emplace(s.name, &s);
    return m;
  }();
  auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

}  // namespace

Pipelines::Pipelines(std::shared_ptr<Gpu> gpu) : gpu_(std::move(gpu)) {
  VkDescriptorSetLayoutBinding bindings[kMaxBindings];
  for (std::uint32_t i = 0; i < kMaxBindings; ++i)
    bindings[i] =
        VkDescriptorSetLayoutBinding{i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  auto set = make<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
  set.bindingCount = kMaxBindings;
  set.pBindings = bindings;
  check(vkCreateDescriptorSetLayout(gpu_->device(), &set, nullptr, &set_layout_), gpu_->label(),
        "vkCreateDescriptorSetLayout");
  auto info = make<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
  info.setLayoutCount = 1;
  info.pSetLayouts = &set_layout_;
  check(vkCreatePipelineLayout(gpu_->device(), &info, nullptr, &layout_), gpu_->label(), "vkCreatePipelineLayout");
}

Pipelines::~Pipelines() {
  VkDevice dev = gpu_->device();
  for (auto& [key, p] : pipelines_) vkDestroyPipeline(dev, p, nullptr);
  for (auto& [name, m] : modules_) vkDestroyShaderModule(dev, m, nullptr);
  vkDestroyPipelineLayout(dev, layout_, nullptr);
  vkDestroyDescriptorSetLayout(dev, set_layout_, nullptr);
}

VkPipeline Pipelines::get(std::string_view op, std::string_view name, std::span<const std::uint32_t> constants) {
  std::lock_guard lock(mutex_);
  auto key = std::make_pair(std::string(name), std::vector<std::uint32_t>(constants.begin(), constants.end()));
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second;

  VkDevice dev = gpu_->device();
  auto mod = modules_.find(name);
  if (mod == modules_.end()) {
    const ShaderBinary* bin = find_shader(name);
    if (!bin)
      throw Error(op, fmt::format("the vulkan backend has no shader '{}' (this op/dtype combination is not "
                                  "implemented on it); use another device for it",
                                  name));
    auto info = make<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    info.codeSize = bin->words.size() * sizeof(std::uint32_t);
    info.pCode = bin->words.data();
    VkShaderModule m = VK_NULL_HANDLE;
    check(vkCreateShaderModule(dev, &info, nullptr, &m), op, fmt::format("creating shader {}", name));
    mod = modules_.emplace(std::string(name), m).first;
  }

  std::vector<VkSpecializationMapEntry> entries(constants.size());
  for (std::uint32_t i = 0; i < constants.size(); ++i) entries[i] = VkSpecializationMapEntry{i, i * 4u, 4};
  VkSpecializationInfo spec{static_cast<std::uint32_t>(entries.size()), entries.data(), constants.size_bytes(),
                            constants.data()};
  auto info = make<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
  info.stage = make<VkPipelineShaderStageCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = mod->second;
  info.stage.pName = "main";
  info.stage.pSpecializationInfo = constants.empty() ? nullptr : &spec;
  info.layout = layout_;
  VkPipeline pipeline = VK_NULL_HANDLE;
  check(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline), op,
        fmt::format("creating the pipeline of {}", name));
  pipelines_.emplace(std::move(key), pipeline);
  return pipeline;
}

}  // namespace burn::vulkan
