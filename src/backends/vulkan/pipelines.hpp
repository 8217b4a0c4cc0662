// Compute pipelines, created on first use from the embedded shaders and
// cached per (variant, specialisation constants). Every shader shares one
// descriptor-set layout: binding 0 is the parameter block, 1..7 the tensors.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <vulkan/vulkan.h>

#include "backends/vulkan/gpu.hpp"

namespace burn::vulkan {

inline constexpr std::uint32_t kMaxBindings = 8;

class Pipelines {
 public:
  explicit Pipelines(std::shared_ptr<Gpu> gpu);
  ~Pipelines();
  Pipelines(const Pipelines&) = delete;
  Pipelines& operator=(const Pipelines&) = delete;

  /// The pipeline of shader variant `name` with specialisation constants
  /// 0..n-1 = `constants`. Throws burn::Error naming `op` if the variant does
  /// not exist (a dtype this build has no kernel for).
  VkPipeline get(std::string_view op, std::string_view name, std::span<const std::uint32_t> constants = {});

  VkPipelineLayout layout() const noexcept { return layout_; }
  VkDescriptorSetLayout set_layout() const noexcept { return set_layout_; }

 private:
  std::shared_ptr<Gpu> gpu_;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  std::mutex mutex_;
  std::map<std::string, VkShaderModule, std::less<>> modules_;
  std::map<std::pair<std::string, std::vector<std::uint32_t>>, VkPipeline> pipelines_;
};

}  // namespace burn::vulkan
